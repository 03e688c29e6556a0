import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE, SIGNATURE_FILE, sha256 } from '../src/feed/files.ts';
import { FeedRejectedError, type Rejection, type RejectionReason, reject } from '../src/feed/rejection.ts';
import { keyId } from '../src/feed/signify.ts';
import { type AcceptedState, verifyFeed } from '../src/feed/verify.ts';
import { advisoryYaml, makeFeed, makeKey, NOW, signFeed, type TestFeed } from './support/feed.ts';

const verify = (feed: TestFeed, extra: Partial<Parameters<typeof verifyFeed>[0]> = {}) =>
  verifyFeed({ feedDir: feed.dir, trustedKeys: [feed.key.publicKey], now: NOW, ...extra });

function expectRejected(
  feed: TestFeed,
  reason: RejectionReason,
  extra: Partial<Parameters<typeof verifyFeed>[0]> = {},
) {
  const result = verify(feed, extra);
  expect(result.ok, JSON.stringify(result)).toBe(false);
  if (!result.ok) {
    expect(result.rejection.reason).toBe(reason);
    expect(result.rejection.message.length).toBeGreaterThan(10);
  }
  return result;
}

const manifestPath = (feed: TestFeed) => path.join(feed.dir, MANIFEST_FILE);
const advisoryPath = (feed: TestFeed) => path.join(feed.dir, 'widgets/one.yaml');

/** Rewrites the manifest and signs it again with the trusted key: checks that hold even for a signed feed. */
function rewriteSigned(feed: TestFeed, edit: (text: string) => string): void {
  writeFileSync(manifestPath(feed), edit(readFileSync(manifestPath(feed), 'utf8')));
  signFeed(feed.dir, feed.key);
}

/** Replaces a listed file and updates its manifest entry, signed: the content itself is the problem. */
function replaceSigned(feed: TestFeed, file: string, text: string | Buffer): void {
  writeFileSync(path.join(feed.dir, file), text);
  const bytes = readFileSync(path.join(feed.dir, file));
  const escaped = file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  rewriteSigned(feed, (manifest) =>
    manifest.replace(
      new RegExp(`(path: ${escaped}\\n\\s+sha256: )[0-9a-f]+(\\n\\s+size: )\\d+`),
      `$1${sha256(bytes)}$2${bytes.length}`,
    ),
  );
}

function flipByte(file: string, index = 5): void {
  const data = readFileSync(file);
  data[index] = (data[index] as number) ^ 0x01;
  writeFileSync(file, data);
}

describe('a good feed', () => {
  it('verifies, and returns every advisory with the state to remember', () => {
    const feed = makeFeed();
    const result = verify(feed);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.feed.advisories).toHaveLength(1);
    expect(result.feed.advisories[0]).toMatchObject({
      module: 'widgets',
      file: 'widgets/one.yaml',
      advisory: { id: 'TEST-1' },
    });
    expect(result.feed.state).toEqual({
      feed_version: '2026.11.21',
      published_at: '2026-11-21T12:00:00Z',
      manifest_sha256: sha256(readFileSync(manifestPath(feed))),
    });
  });

  it('ignores an extra file the manifest does not list', () => {
    const feed = makeFeed();
    writeFileSync(path.join(feed.dir, 'widgets/unlisted.yaml'), 'not: [valid');
    writeFileSync(path.join(feed.dir, 'NOTES.txt'), 'hello');
    expect(verify(feed).ok).toBe(true);
  });

  it('ignores unknown fields and verified files it does not know', () => {
    const feed = makeFeed({ 'widgets/one.yaml': advisoryYaml({ future_field: '"from schema 1.1"' }) });
    writeFileSync(path.join(feed.dir, 'CHANGELOG.md'), 'changes');
    rewriteSigned(feed, (text) =>
      text
        .replace('modules:', 'mirror_hint: "rsync://example"\nmodules:')
        .concat(
          `files:\n  - path: CHANGELOG.md\n    sha256: ${sha256(Buffer.from('changes'))}\n    size: 7\n`,
        ),
    );
    const result = verify(feed);
    expect(result.ok, JSON.stringify(result)).toBe(true);
  });

  it('accepts the same feed again (same version, same manifest)', () => {
    const feed = makeFeed();
    const first = verify(feed);
    if (!first.ok) throw new Error('expected ok');
    expect(verify(feed, { lastAccepted: first.feed.state }).ok).toBe(true);
  });
});

describe('rejections', () => {
  it('one byte changed in an advisory file: file-hash-mismatch', () => {
    const feed = makeFeed();
    flipByte(advisoryPath(feed));
    expect(expectRejected(feed, 'file-hash-mismatch')).toMatchObject({
      rejection: { file: 'widgets/one.yaml' },
    });
  });

  it('one byte changed in the manifest: signature-invalid', () => {
    const feed = makeFeed();
    flipByte(manifestPath(feed), 100);
    expectRejected(feed, 'signature-invalid');
  });

  it('a line added to the manifest: signature-invalid', () => {
    const feed = makeFeed();
    appendFileSync(manifestPath(feed), '# harmless?\n');
    expectRejected(feed, 'signature-invalid');
  });

  it('signature missing: signature-missing', () => {
    const feed = makeFeed();
    unlinkSync(path.join(feed.dir, SIGNATURE_FILE));
    expectRejected(feed, 'signature-missing');
  });

  it('signature truncated: signature-malformed', () => {
    const feed = makeFeed();
    const sig = readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8');
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), sig.slice(0, sig.length - 20));
    expectRejected(feed, 'signature-malformed');
  });

  it('signature bytes altered: signature-invalid', () => {
    const feed = makeFeed();
    const [comment, encoded] = readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8').split('\n');
    const raw = Buffer.from(encoded as string, 'base64');
    raw[40] = (raw[40] as number) ^ 0xff;
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), `${comment}\n${raw.toString('base64')}\n`);
    expectRejected(feed, 'signature-invalid');
  });

  it('signed by a key that is not trusted: signature-unknown-key', () => {
    const feed = makeFeed();
    expectRejected(feed, 'signature-unknown-key', { trustedKeys: [makeKey().publicKey] });
  });

  it('signed by another key that claims the trusted key number: signature-invalid', () => {
    const feed = makeFeed();
    const impostor = makeKey();
    const secret = Buffer.from((impostor.secretText.split('\n')[1] as string).trim(), 'base64');
    feed.key.publicKey.keynum.copy(secret, 32);
    const forged = { ...impostor, secretText: `untrusted comment: x\n${secret.toString('base64')}\n` };
    signFeed(feed.dir, forged);
    expectRejected(feed, 'signature-invalid');
  });

  it('file missing: file-missing', () => {
    const feed = makeFeed();
    unlinkSync(advisoryPath(feed));
    expectRejected(feed, 'file-missing');
  });

  it('file larger than listed: file-size-mismatch', () => {
    const feed = makeFeed();
    appendFileSync(advisoryPath(feed), '# extra\n');
    expectRejected(feed, 'file-size-mismatch');
  });

  it('file shorter than listed: file-size-mismatch', () => {
    const feed = makeFeed();
    const text = readFileSync(advisoryPath(feed));
    writeFileSync(advisoryPath(feed), text.subarray(0, text.length - 2));
    expectRejected(feed, 'file-size-mismatch');
  });

  it.each([
    ['../outside.yaml'],
    ['/etc/passwd'],
    ['widgets/../../outside.yaml'],
    ['widgets/./one.yaml'],
    ['widgets\\one.yaml'],
  ])('path %s in a signed manifest: unsafe-path', (bad) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) =>
      text.replace('path: widgets/one.yaml', `path: "${bad.replace(/\\/g, '\\\\')}"`),
    );
    expectRejected(feed, 'unsafe-path');
  });

  it('an advisory replaced by a symbolic link (even to identical content): unsafe-path', () => {
    const feed = makeFeed();
    const elsewhere = path.join(feed.dir, '..', `copy-${path.basename(feed.dir)}.yaml`);
    writeFileSync(elsewhere, readFileSync(advisoryPath(feed)));
    unlinkSync(advisoryPath(feed));
    symlinkSync(elsewhere, advisoryPath(feed));
    expectRejected(feed, 'unsafe-path');
  });

  it('a module directory replaced by a symbolic link: unsafe-path', () => {
    const feed = makeFeed();
    const real = `${feed.dir}-real-widgets`;
    mkdirSync(real);
    writeFileSync(path.join(real, 'one.yaml'), readFileSync(advisoryPath(feed)));
    rmSync(path.join(feed.dir, 'widgets'), { recursive: true });
    symlinkSync(real, path.join(feed.dir, 'widgets'));
    expectRejected(feed, 'unsafe-path');
  });

  it('a FIFO in place of an advisory file: unsafe-path, without blocking', () => {
    const feed = makeFeed();
    unlinkSync(advisoryPath(feed));
    execFileSync('mkfifo', [advisoryPath(feed)]);
    expectRejected(feed, 'unsafe-path');
  });

  it('expired manifest: expired', () => {
    const feed = makeFeed();
    expectRejected(feed, 'expired', { now: new Date(NOW.getTime() + 15 * 86_400_000) });
  });

  const remembered = (
    feed_version: string,
    published_at: string,
    manifest_sha256 = 'x'.repeat(64),
  ): AcceptedState => ({
    feed_version,
    published_at,
    manifest_sha256,
  });

  it('older than the remembered feed: rollback', () => {
    const feed = makeFeed({ 'widgets/one.yaml': advisoryYaml({}) }, { feedVersion: '2026.11.14' });
    expectRejected(feed, 'rollback', { lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00Z') });
  });

  it('newer version but published before the remembered feed: rollback', () => {
    const feed = makeFeed({ 'widgets/one.yaml': advisoryYaml({}) }, { feedVersion: '2026.11.28' });
    expectRejected(feed, 'rollback', { lastAccepted: remembered('2026.11.21', '2026-11-22T00:00:00Z') });
  });

  it('the same version with a different manifest: version-conflict', () => {
    const feed = makeFeed();
    expectRejected(feed, 'version-conflict', {
      lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00Z'),
    });
  });

  it('a newer feed than the remembered one is accepted', () => {
    const feed = makeFeed({ 'widgets/one.yaml': advisoryYaml({}) }, { feedVersion: '2026.11.28' });
    expect(verify(feed, { lastAccepted: remembered('2026.11.21', '2026-11-20T00:00:00Z') }).ok).toBe(true);
  });

  it('unsupported schema major: schema-unsupported', () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "1.0"', 'schema_version: "2.0"'));
    expectRejected(feed, 'schema-unsupported');
  });

  it('a newer minor of the supported major is read', () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "1.0"', 'schema_version: "1.7"'));
    expect(verify(feed).ok).toBe(true);
  });

  const aliasBomb = [
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
    'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
    'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
  ].join('\n');

  it('a YAML alias bomb in an advisory (signed and listed): advisory-malformed', () => {
    const feed = makeFeed({
      'widgets/one.yaml': advisoryYaml({}),
      'widgets/bomb.yaml': advisoryYaml({ id: 'TEST-2' }),
    });
    replaceSigned(feed, 'widgets/bomb.yaml', `${aliasBomb}\n`);
    const result = expectRejected(feed, 'advisory-malformed');
    expect(result.ok ? '' : result.rejection.message).toMatch(/anchors and aliases are not allowed/);
  });

  it('a YAML alias bomb in the manifest (signed): manifest-malformed', () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => `${text}${aliasBomb}\n`);
    expectRejected(feed, 'manifest-malformed');
  });

  it.each([
    ['an unknown verdict', { verdict: 'panic' }],
    ['a reversed window', { effective: '2027-01-01', expires: '2026-01-01' }],
    ['an invalid range', { affects: '">>1.0"' }],
    ['a malformed CVE id', { cves: '\n  - id: CVE-24-1' }],
    ['a missing summary', { summary: undefined }],
  ])('an advisory with %s (signed and listed): advisory-malformed', (_label, fields) => {
    const feed = makeFeed();
    replaceSigned(feed, 'widgets/one.yaml', advisoryYaml(fields));
    expect(expectRejected(feed, 'advisory-malformed')).toMatchObject({
      rejection: { file: 'widgets/one.yaml' },
    });
  });

  it('the same advisory id in two modules (signed): advisory-malformed', () => {
    const feed = makeFeed({
      'widgets/one.yaml': advisoryYaml({}),
      'gadgets/one.yaml': advisoryYaml({ id: 'TEST-2' }),
    });
    replaceSigned(feed, 'gadgets/one.yaml', advisoryYaml({}));
    expectRejected(feed, 'advisory-malformed');
  });

  it('a YAML document of a list instead of a mapping (signed): advisory-malformed', () => {
    const feed = makeFeed();
    replaceSigned(feed, 'widgets/one.yaml', '- just\n- a list\n');
    expectRejected(feed, 'advisory-malformed');
  });

  it('manifest above the size cap: manifest-too-large', () => {
    const feed = makeFeed();
    expectRejected(feed, 'manifest-too-large', { limits: { manifestBytes: 100 } });
  });

  it('a file listed above the per-file cap: file-too-large', () => {
    const feed = makeFeed();
    expectRejected(feed, 'file-too-large', { limits: { fileBytes: 10 } });
  });

  it('a manifest that does not parse (signed): manifest-malformed', () => {
    const feed = makeFeed();
    rewriteSigned(feed, () => 'schema_version: "1.0"\nmodules: [unclosed\n');
    expectRejected(feed, 'manifest-malformed');
  });
});

describe('rejections: exact reasons, messages and files', () => {
  /** The exact rejection; a rejection that concerns no single file has no `file` at all. */
  function expectRejection(
    feed: TestFeed,
    rejection: Rejection,
    extra: Partial<Parameters<typeof verifyFeed>[0]> = {},
  ) {
    expect(verify(feed, extra)).toStrictEqual({ ok: false, rejection });
  }
  const size = (feed: TestFeed, file: string) => statSync(path.join(feed.dir, file)).size;

  it('manifest missing', () => {
    const feed = makeFeed();
    unlinkSync(manifestPath(feed));
    expectRejection(feed, {
      reason: 'manifest-missing',
      message: 'manifest.yaml is missing',
      file: MANIFEST_FILE,
    });
  });

  it('manifest and signature caps: at the cap is fine, one byte above is refused', () => {
    const feed = makeFeed();
    const manifest = size(feed, MANIFEST_FILE);
    const signature = size(feed, SIGNATURE_FILE);
    expect(verify(feed, { limits: { manifestBytes: manifest, signatureBytes: signature } }).ok).toBe(true);
    expectRejection(
      feed,
      {
        reason: 'manifest-too-large',
        message: `manifest.yaml is ${manifest} bytes, above the ${manifest - 1}-byte cap`,
        file: MANIFEST_FILE,
      },
      { limits: { manifestBytes: manifest - 1 } },
    );
    expectRejection(
      feed,
      {
        reason: 'signature-too-large',
        message: `manifest.yaml.sig is ${signature} bytes, above the ${signature - 1}-byte cap`,
        file: SIGNATURE_FILE,
      },
      { limits: { signatureBytes: signature - 1 } },
    );
  });

  it('signature missing, malformed, by unknown keys, invalid', () => {
    const feed = makeFeed();
    const sigPath = path.join(feed.dir, SIGNATURE_FILE);
    const signature = readFileSync(sigPath, 'utf8');
    unlinkSync(sigPath);
    expectRejection(feed, {
      reason: 'signature-missing',
      message: 'manifest.yaml.sig is missing: the feed is not signed',
      file: SIGNATURE_FILE,
    });
    writeFileSync(sigPath, signature.trimEnd());
    expectRejection(feed, {
      reason: 'signature-malformed',
      message: 'manifest.yaml.sig: signature: the last line must end with a newline',
      file: SIGNATURE_FILE,
    });
    const [x, y] = [makeKey(), makeKey()];
    signFeed(feed.dir, x);
    const first = readFileSync(sigPath, 'utf8');
    signFeed(feed.dir, y);
    writeFileSync(sigPath, first + readFileSync(sigPath, 'utf8'));
    expectRejection(feed, {
      reason: 'signature-unknown-key',
      message: `the feed is signed by key ${keyId(x.publicKey.keynum)}, ${keyId(y.publicKey.keynum)}, which is not among the trusted keys`,
      file: SIGNATURE_FILE,
    });
    expectRejection(
      feed,
      {
        reason: 'signature-invalid',
        message: 'the manifest signature does not verify: the manifest or its signature was altered',
        file: SIGNATURE_FILE,
      },
      { trustedKeys: [{ ...feed.key.publicKey, keynum: x.publicKey.keynum }] },
    );
  });

  it('a manifest that does not parse: its line and the parser error', () => {
    const feed = makeFeed();
    rewriteSigned(feed, () => 'schema_version: "1.0"\nmodules: [unclosed\n');
    expectRejection(feed, {
      reason: 'manifest-malformed',
      message: 'manifest.yaml line 3: unexpected end of the stream within a flow collection',
      file: MANIFEST_FILE,
    });
  });

  it.each([[''], ['just text\n'], ['- a list\n'], ['null\n']])(
    'a manifest that is not a mapping (%j): manifest-malformed',
    (text) => {
      const feed = makeFeed();
      rewriteSigned(feed, () => text);
      expectRejection(feed, {
        reason: 'manifest-malformed',
        message: 'manifest.yaml: document must be object',
        file: MANIFEST_FILE,
      });
    },
  );

  it.each([
    ['2', 'manifest.yaml: /schema_version must be string'],
    ['2.5', 'manifest.yaml: /schema_version must be string'],
    ['"2.0.1"', 'manifest.yaml: /schema_version must match pattern "^[0-9]+\\.[0-9]+$"'],
    ['"x2.0"', 'manifest.yaml: /schema_version must match pattern "^[0-9]+\\.[0-9]+$"'],
    ['"2.0x"', 'manifest.yaml: /schema_version must match pattern "^[0-9]+\\.[0-9]+$"'],
  ])('schema_version %s is malformed, not unsupported', (value, message) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "1.0"', `schema_version: ${value}`));
    expectRejection(feed, { reason: 'manifest-malformed', message, file: MANIFEST_FILE });
  });

  it.each([['10.0'], ['2.10'], ['0.9']])('schema %s is unsupported', (version) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "1.0"', `schema_version: "${version}"`));
    expectRejection(feed, {
      reason: 'schema-unsupported',
      message: `the feed uses schema ${version}; this client reads schema 1.x: update the appliance`,
      file: MANIFEST_FILE,
    });
  });

  it('schema 01.12 is schema 1.x', () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "1.0"', 'schema_version: "01.12"'));
    expect(verify(feed).ok).toBe(true);
  });

  it('a required manifest field missing', () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace(/^feed_version: .*\n/m, ''));
    expectRejection(feed, {
      reason: 'manifest-malformed',
      message: 'manifest.yaml: document must have required properties feed_version',
      file: MANIFEST_FILE,
    });
  });

  it.each([
    ['published_at', 'yesterday'],
    ['expires_at', '2026-12-05 12:00'],
  ])('%s that is not a time', (field, value) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace(new RegExp(`^${field}: .*$`, 'm'), `${field}: "${value}"`));
    expectRejection(feed, {
      reason: 'manifest-malformed',
      message: 'manifest.yaml: published_at and expires_at must be RFC 3339 times',
      file: MANIFEST_FILE,
    });
  });

  it.each([['Widgets'], ['_widgets'], ['widgets_'], ['-widgets'], ['w'.repeat(65)]])(
    'a module named %j',
    (name) => {
      const feed = makeFeed();
      rewriteSigned(feed, (text) => text.replace('\n  widgets:\n', `\n  ${name}:\n`));
      expectRejection(feed, {
        reason: 'manifest-malformed',
        message: `manifest.yaml: bad module name "${name}"`,
        file: MANIFEST_FILE,
      });
    },
  );

  const twoFiles = () =>
    makeFeed({ 'widgets/one.yaml': advisoryYaml({}), 'widgets/two.yaml': advisoryYaml({ id: 'TEST-2' }) });

  it('the number of listed files: at the cap is fine, above it is refused', () => {
    const feed = twoFiles();
    expect(verify(feed, { limits: { files: 2 } }).ok).toBe(true);
    expectRejection(
      feed,
      {
        reason: 'manifest-malformed',
        message: 'manifest.yaml lists 2 files, above the cap of 1',
        file: MANIFEST_FILE,
      },
      { limits: { files: 1 } },
    );
  });

  it('a path listed twice', () => {
    const feed = twoFiles();
    rewriteSigned(feed, (text) => text.replace('path: widgets/two.yaml', 'path: widgets/one.yaml'));
    expectRejection(feed, {
      reason: 'manifest-malformed',
      message: 'manifest.yaml lists widgets/one.yaml twice',
      file: MANIFEST_FILE,
    });
  });

  it('per-file and total size caps: at the cap is fine, above it is refused', () => {
    const feed = twoFiles();
    const one = size(feed, 'widgets/one.yaml');
    const two = size(feed, 'widgets/two.yaml');
    const largest = Math.max(one, two);
    expect(verify(feed, { limits: { fileBytes: largest, totalBytes: one + two } }).ok).toBe(true);
    expectRejection(
      feed,
      {
        reason: 'file-too-large',
        message: `widgets/one.yaml is listed at ${one} bytes, above the ${one - 1}-byte cap`,
        file: 'widgets/one.yaml',
      },
      { limits: { fileBytes: one - 1 } },
    );
    expectRejection(
      feed,
      {
        reason: 'file-too-large',
        message: `the listed files add up to ${one + two} bytes, above the ${one + two - 1}-byte cap`,
      },
      { limits: { totalBytes: one + two - 1 } },
    );
  });

  it('unsafe paths, links and files that are not regular', () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('path: widgets/one.yaml', 'path: ../outside.yaml'));
    expectRejection(feed, {
      reason: 'unsafe-path',
      message:
        'the manifest lists "../outside.yaml": absolute paths, ".." and unusual characters are refused',
      file: '../outside.yaml',
    });

    const linked = makeFeed();
    const copy = `${linked.dir}-copy.yaml`;
    writeFileSync(copy, readFileSync(advisoryPath(linked)));
    unlinkSync(advisoryPath(linked));
    symlinkSync(copy, advisoryPath(linked));
    expectRejection(linked, {
      reason: 'unsafe-path',
      message: 'widgets/one.yaml is a symbolic link; feed files must be regular files',
      file: 'widgets/one.yaml',
    });

    const folder = makeFeed();
    unlinkSync(advisoryPath(folder));
    mkdirSync(advisoryPath(folder));
    expectRejection(folder, {
      reason: 'unsafe-path',
      message: 'widgets/one.yaml is not a regular file',
      file: 'widgets/one.yaml',
    });
  });

  it('folders on the way: links, files, missing', () => {
    const nested = () => makeFeed({ 'widgets/sub/one.yaml': advisoryYaml({}) });
    const linked = nested();
    const real = `${linked.dir}-real-sub`;
    renameSync(path.join(linked.dir, 'widgets/sub'), real);
    symlinkSync(real, path.join(linked.dir, 'widgets/sub'));
    expectRejection(linked, {
      reason: 'unsafe-path',
      message: 'widgets/sub is a symbolic link; links are refused',
      file: 'widgets/sub/one.yaml',
    });

    const file = nested();
    rmSync(path.join(file.dir, 'widgets/sub'), { recursive: true });
    writeFileSync(path.join(file.dir, 'widgets/sub'), 'not a folder');
    expectRejection(file, {
      reason: 'unsafe-path',
      message: 'widgets/sub is not a directory',
      file: 'widgets/sub/one.yaml',
    });

    const missing = nested();
    rmSync(path.join(missing.dir, 'widgets'), { recursive: true });
    expectRejection(missing, {
      reason: 'file-missing',
      message: 'widgets/sub/one.yaml is listed in the manifest but missing',
      file: 'widgets/sub/one.yaml',
    });
  });

  it('files missing, of another size, or another hash', () => {
    const feed = makeFeed();
    const original = readFileSync(advisoryPath(feed));
    const n = original.length;
    unlinkSync(advisoryPath(feed));
    expectRejection(feed, {
      reason: 'file-missing',
      message: 'widgets/one.yaml is listed in the manifest but missing',
      file: 'widgets/one.yaml',
    });
    writeFileSync(advisoryPath(feed), Buffer.concat([original, Buffer.from('# extra\n')]));
    expectRejection(feed, {
      reason: 'file-size-mismatch',
      message: `widgets/one.yaml is ${n + 8} bytes, the manifest says ${n}`,
      file: 'widgets/one.yaml',
    });
    writeFileSync(advisoryPath(feed), original.subarray(0, n - 2));
    expectRejection(feed, {
      reason: 'file-size-mismatch',
      message: `widgets/one.yaml is ${n - 2} bytes, the manifest says ${n}`,
      file: 'widgets/one.yaml',
    });
    writeFileSync(advisoryPath(feed), Buffer.from(original).fill(0x20, n - 3, n - 1));
    expectRejection(feed, {
      reason: 'file-hash-mismatch',
      message: 'widgets/one.yaml does not match its SHA-256 in the manifest',
      file: 'widgets/one.yaml',
    });
  });

  it('a listed file that grew enormous is refused by its size, without reading it', () => {
    const feed = makeFeed();
    const listed = size(feed, 'widgets/one.yaml');
    truncateSync(advisoryPath(feed), 2 ** 40);
    expectRejection(feed, {
      reason: 'file-size-mismatch',
      message: `widgets/one.yaml is ${2 ** 40} bytes, the manifest says ${listed}`,
      file: 'widgets/one.yaml',
    });
  });

  it('an advisory: its first problem', () => {
    const feed = makeFeed();
    replaceSigned(feed, 'widgets/one.yaml', advisoryYaml({ verdict: 'panic', affects: '">>1"' }));
    expectRejection(feed, {
      reason: 'advisory-malformed',
      message:
        'widgets/one.yaml: unknown verdict "panic" (expected one of blocked, eol, wait-for-patch, hold, install)',
      file: 'widgets/one.yaml',
    });
  });

  it('an advisory that does not parse: its line and the parser error', () => {
    const feed = makeFeed();
    replaceSigned(feed, 'widgets/one.yaml', `${advisoryYaml({})}other: &a 1\n`);
    expectRejection(feed, {
      reason: 'advisory-malformed',
      message: 'widgets/one.yaml line 12: anchors and aliases are not allowed (&a)',
      file: 'widgets/one.yaml',
    });
  });

  it('an advisory that decodes to more than the per-file cap (invalid UTF-8 widens): no line to name', () => {
    const feed = makeFeed();
    const bytes = Buffer.concat([Buffer.from('summary: "'), Buffer.alloc(100, 0xff), Buffer.from('"\n')]);
    replaceSigned(feed, 'widgets/one.yaml', bytes);
    expectRejection(
      feed,
      {
        reason: 'advisory-malformed',
        message: `widgets/one.yaml: document larger than ${bytes.length} bytes`,
        file: 'widgets/one.yaml',
      },
      { limits: { fileBytes: bytes.length } },
    );
  });

  it('the same advisory id twice: the later file, naming the earlier', () => {
    const feed = makeFeed({
      'gadgets/one.yaml': advisoryYaml({ product: 'gadget' }),
      'widgets/one.yaml': advisoryYaml({ id: 'TEST-2' }),
    });
    replaceSigned(feed, 'widgets/one.yaml', advisoryYaml({}));
    expectRejection(feed, {
      reason: 'advisory-malformed',
      message: 'widgets/one.yaml: advisory id TEST-1 is also used by gadgets/one.yaml',
      file: 'widgets/one.yaml',
    });
  });

  it('expiry: valid until the instant before expires_at', () => {
    const feed = makeFeed();
    const expiresAt = new Date('2026-12-05T12:00:00Z');
    expect(verify(feed, { now: new Date(expiresAt.getTime() - 1) }).ok).toBe(true);
    expectRejection(
      feed,
      {
        reason: 'expired',
        message:
          'the feed expired at 2026-12-05T12:00:00Z; the mirror or feed host is not delivering fresh feeds',
        file: MANIFEST_FILE,
      },
      { now: expiresAt },
    );
  });

  it('without a time given, the clock decides expiry', () => {
    const hour = 3_600_000;
    const fresh = makeFeed(undefined, { now: new Date(Date.now() - hour), expiresInMs: 24 * hour });
    const stale = makeFeed(undefined, { now: new Date(Date.now() - 2 * hour), expiresInMs: hour });
    expect(verifyFeed({ feedDir: fresh.dir, trustedKeys: [fresh.key.publicKey] }).ok).toBe(true);
    const result = verifyFeed({ feedDir: stale.dir, trustedKeys: [stale.key.publicKey] });
    expect(result.ok ? 'accepted' : result.rejection.reason).toBe('expired');
  });

  const remembered = (feed_version: string, published_at: string): AcceptedState => ({
    feed_version,
    published_at,
    manifest_sha256: 'x'.repeat(64),
  });

  it('rollback and version conflicts concern no single file', () => {
    const older = makeFeed(undefined, { feedVersion: '2026.11.14' });
    expectRejection(
      older,
      {
        reason: 'rollback',
        message: 'feed 2026.11.14 is older than the accepted 2026.11.21; a rollback is refused',
      },
      { lastAccepted: remembered('2026.11.21', '2026-11-01T00:00:00Z') },
    );
    const same = makeFeed();
    expectRejection(
      same,
      {
        reason: 'version-conflict',
        message:
          'feed 2026.11.21 differs from the feed of the same version accepted before; this should never happen and is refused',
      },
      { lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00Z') },
    );
    const backdated = makeFeed(undefined, { feedVersion: '2026.11.28' });
    expectRejection(
      backdated,
      {
        reason: 'rollback',
        message: 'feed 2026.11.28 claims a newer version but was published before the accepted feed',
      },
      { lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00.001Z') },
    );
  });

  it('a newer version published at the same time as the accepted one is accepted', () => {
    const feed = makeFeed(undefined, { feedVersion: '2026.11.28' });
    expect(verify(feed, { lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00Z') }).ok).toBe(true);
  });

  it('a remembered publication time that is not a time is not compared', () => {
    const feed = makeFeed(undefined, { feedVersion: '2026.11.28' });
    expect(verify(feed, { lastAccepted: remembered('2026.11.21', 'some day') }).ok).toBe(true);
  });
});

describe('a good feed: what verification returns', () => {
  it('the manifest, its hash, the keys that signed and the advisories of modules only', () => {
    const feed = makeFeed({
      'widgets/one.yaml': advisoryYaml({}),
      'widgets/notes.txt': 'not an advisory',
      'gadgets/two.yml': advisoryYaml({ id: 'TEST-2', product: 'gadget' }),
    });
    writeFileSync(path.join(feed.dir, 'extra.yaml'), 'not: [an advisory');
    const extra = readFileSync(path.join(feed.dir, 'extra.yaml'));
    rewriteSigned(feed, (text) =>
      text
        .replace(
          '    files:\n      - path: widgets/one.yaml',
          `    files:\n      - path: widgets/notes.txt\n        sha256: ${sha256(Buffer.from('not an advisory'))}\n        size: 15\n      - path: widgets/one.yaml`,
        )
        .concat(`files:\n  - path: extra.yaml\n    sha256: ${sha256(extra)}\n    size: ${extra.length}\n`),
    );
    const result = verify(feed);
    if (!result.ok) throw new Error(JSON.stringify(result));
    const manifestBytes = readFileSync(manifestPath(feed));
    expect(result.feed.manifestSha256).toBe(sha256(manifestBytes));
    expect(result.feed.signedBy).toEqual([keyId(feed.key.publicKey.keynum)]);
    expect(result.feed.manifest.feed_version).toBe('2026.11.21');
    expect(Object.keys(result.feed.manifest.modules)).toEqual(['gadgets', 'widgets']);
    expect(result.feed.manifest.modules.widgets?.files.map((f) => f.path)).toEqual([
      'widgets/notes.txt',
      'widgets/one.yaml',
    ]);
    expect(result.feed.advisories.map((a) => [a.module, a.file, a.advisory.id])).toEqual([
      ['gadgets', 'gadgets/two.yml', 'TEST-2'],
      ['widgets', 'widgets/one.yaml', 'TEST-1'],
    ]);
  });

  it('the listed files outside the modules are verified too', () => {
    const feed = makeFeed();
    writeFileSync(path.join(feed.dir, 'extra.yaml'), 'hello');
    rewriteSigned(feed, (text) =>
      text.concat(`files:\n  - path: extra.yaml\n    sha256: ${sha256(Buffer.from('hello'))}\n    size: 5\n`),
    );
    expect(verify(feed).ok).toBe(true);
    writeFileSync(path.join(feed.dir, 'extra.yaml'), 'jello');
    expect(verify(feed)).toMatchObject({
      ok: false,
      rejection: { reason: 'file-hash-mismatch', file: 'extra.yaml' },
    });
  });

  it('leaves no file open, whatever the outcome', () => {
    const openFiles = () => readdirSync('/proc/self/fd').length;
    const good = makeFeed();
    const bad = makeFeed();
    appendFileSync(advisoryPath(bad), '# extra\n');
    const tooLarge = makeFeed();
    const before = openFiles();
    for (let i = 0; i < 20; i++) {
      expect(verify(good).ok).toBe(true);
      expect(verify(bad).ok).toBe(false);
      expect(verify(tooLarge, { limits: { manifestBytes: 10 } }).ok).toBe(false);
    }
    expect(openFiles()).toBe(before);
  });

  it('an unexpected I/O error is thrown, not turned into a rejection reason', () => {
    const feed = makeFeed();
    expect(() =>
      verifyFeed({ feedDir: advisoryPath(feed), trustedKeys: [feed.key.publicKey], now: NOW }),
    ).toThrow(/ENOTDIR/);
  });
});

describe('rejection', () => {
  it('is thrown as a FeedRejectedError carrying the rejection', () => {
    try {
      reject('rollback', 'feed too old');
      throw new Error('expected a rejection');
    } catch (error) {
      expect(error).toBeInstanceOf(FeedRejectedError);
      expect((error as FeedRejectedError).name).toBe('FeedRejectedError');
      expect((error as FeedRejectedError).message).toBe('feed too old');
      expect((error as FeedRejectedError).rejection).toStrictEqual({
        reason: 'rollback',
        message: 'feed too old',
      });
    }
    expect(() => reject('file-missing', 'gone', 'a.yaml')).toThrow(
      expect.objectContaining({ rejection: { reason: 'file-missing', message: 'gone', file: 'a.yaml' } }),
    );
  });
});
