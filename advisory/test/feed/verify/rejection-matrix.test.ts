import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
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
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/crypto/digest.ts';
import { keyId } from '../../../src/crypto/signify.ts';
import type { AcceptedState } from '../../../src/feed/format/accepted-state.ts';
import {
  FeedRejectedError,
  type Rejection,
  type RejectionReason,
  reject,
} from '../../../src/feed/format/rejection.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../../src/feed/format/rules.ts';
import type { VerifyOptions } from '../../../src/feed/verify/verify-feed.ts';
import {
  advisoryYaml,
  makeFeed,
  makeKey,
  NOW,
  replaceSigned,
  rewriteSigned,
  signFeed,
  type TestFeed,
  type TestKey,
  verifyDir,
} from '../../support/feed.ts';
import { blockOf } from '../../support/signatures.ts';

const verify = (feed: TestFeed, extra: Partial<VerifyOptions> = {}) =>
  verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey], ...extra });

async function expectRejected(feed: TestFeed, reason: RejectionReason, extra: Partial<VerifyOptions> = {}) {
  const result = await verify(feed, extra);
  expect(result.ok, JSON.stringify(result)).toBe(false);
  if (!result.ok) {
    expect('rejection' in result && result.rejection.reason).toBe(reason);
    expect('rejection' in result && result.rejection.message.length).toBeGreaterThan(10);
  }
  return result;
}

/** Noon of the day a week after NOW, when a feed of version 2026.11.28 is published. */
const LATER = new Date('2026-11-28T12:00:00Z');

const manifestPath = (feed: TestFeed) => path.join(feed.dir, MANIFEST_FILE);
const advisoryPath = (feed: TestFeed) => path.join(feed.dir, 'widgets/one.yaml');

function flipByte(file: string, index = 5): void {
  const data = readFileSync(file);
  data[index] = (data[index] as number) ^ 0x01;
  writeFileSync(file, data);
}

describe('a good feed', () => {
  it('verifies, and returns every advisory with the state to remember', async () => {
    const feed = makeFeed();
    const result = await verify(feed);
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

  it('ignores an extra file the manifest does not list', async () => {
    const feed = makeFeed();
    writeFileSync(path.join(feed.dir, 'widgets/unlisted.yaml'), 'not: [valid');
    writeFileSync(path.join(feed.dir, 'NOTES.txt'), 'hello');
    expect((await verify(feed)).ok).toBe(true);
  });

  it('ignores unknown fields and verified files it does not know', async () => {
    // build refuses unknown keys (the authoring side); a later schema's feed has them.
    const feed = makeFeed();
    const before = readFileSync(advisoryPath(feed));
    const after = Buffer.concat([before, Buffer.from('future_field: "from schema 2.1"\n')]);
    writeFileSync(advisoryPath(feed), after);
    writeFileSync(path.join(feed.dir, 'CHANGELOG.md'), 'changes');
    rewriteSigned(feed, (text) =>
      text
        .replace(sha256(before), sha256(after))
        .replace(`size: ${before.length}`, `size: ${after.length}`)
        .replace('modules:', 'mirror_hint: "rsync://example"\nmodules:')
        .concat(
          `files:\n  - path: CHANGELOG.md\n    sha256: ${sha256(Buffer.from('changes'))}\n    size: 7\n`,
        ),
    );
    const result = await verify(feed);
    expect(result.ok, JSON.stringify(result)).toBe(true);
  });

  it('accepts the same feed again (same version, same manifest)', async () => {
    const feed = makeFeed();
    const first = await verify(feed);
    if (!first.ok) throw new Error('expected ok');
    expect((await verify(feed, { lastAccepted: first.feed.state })).ok).toBe(true);
  });
});

describe('rejections', () => {
  it('one byte changed in an advisory file: file-hash-mismatch', async () => {
    const feed = makeFeed();
    flipByte(advisoryPath(feed));
    expect(await expectRejected(feed, 'file-hash-mismatch')).toMatchObject({
      rejection: { file: 'widgets/one.yaml' },
    });
  });

  it('one byte changed in the manifest: signature-invalid', async () => {
    const feed = makeFeed();
    flipByte(manifestPath(feed), 100);
    await expectRejected(feed, 'signature-invalid');
  });

  it('a line added to the manifest: signature-invalid', async () => {
    const feed = makeFeed();
    appendFileSync(manifestPath(feed), '# harmless?\n');
    await expectRejected(feed, 'signature-invalid');
  });

  it('signature missing: signature-missing', async () => {
    const feed = makeFeed();
    unlinkSync(path.join(feed.dir, SIGNATURE_FILE));
    await expectRejected(feed, 'signature-missing');
  });

  it('signature truncated: signature-malformed', async () => {
    const feed = makeFeed();
    const sig = readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8');
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), sig.slice(0, sig.length - 20));
    await expectRejected(feed, 'signature-malformed');
  });

  it('signature bytes altered: signature-invalid', async () => {
    const feed = makeFeed();
    const [comment, encoded] = readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8').split('\n');
    const raw = Buffer.from(encoded as string, 'base64');
    raw[40] = (raw[40] as number) ^ 0xff;
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), `${comment}\n${raw.toString('base64')}\n`);
    await expectRejected(feed, 'signature-invalid');
  });

  it('signed by a key that is not trusted: signature-unknown-key', async () => {
    const feed = makeFeed();
    await expectRejected(feed, 'signature-unknown-key', { trustedKeys: [makeKey().publicKey] });
  });

  it('signed by another key that claims the trusted key number: signature-invalid', async () => {
    const feed = makeFeed();
    const impostor = makeKey();
    const secret = Buffer.from((impostor.secretText.split('\n')[1] as string).trim(), 'base64');
    feed.key.publicKey.keynum.copy(secret, 32);
    const forged = { ...impostor, secretText: `untrusted comment: x\n${secret.toString('base64')}\n` };
    signFeed(feed.dir, forged);
    await expectRejected(feed, 'signature-invalid');
  });

  it('file missing: file-missing', async () => {
    const feed = makeFeed();
    unlinkSync(advisoryPath(feed));
    await expectRejected(feed, 'file-missing');
  });

  it('file larger than listed: file-size-mismatch', async () => {
    const feed = makeFeed();
    appendFileSync(advisoryPath(feed), '# extra\n');
    await expectRejected(feed, 'file-size-mismatch');
  });

  it('file shorter than listed: file-size-mismatch', async () => {
    const feed = makeFeed();
    const text = readFileSync(advisoryPath(feed));
    writeFileSync(advisoryPath(feed), text.subarray(0, text.length - 2));
    await expectRejected(feed, 'file-size-mismatch');
  });

  it.each([
    ['../outside.yaml'],
    ['/etc/passwd'],
    ['widgets/../../outside.yaml'],
    ['widgets/./one.yaml'],
    ['widgets\\one.yaml'],
  ])('path %s in a signed manifest: unsafe-path', async (bad) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) =>
      text.replace('path: "widgets/one.yaml"', `path: "${bad.replace(/\\/g, '\\\\')}"`),
    );
    await expectRejected(feed, 'unsafe-path');
  });

  it('an advisory replaced by a symbolic link (even to identical content): unsafe-path', async () => {
    const feed = makeFeed();
    const elsewhere = path.join(feed.dir, '..', `copy-${path.basename(feed.dir)}.yaml`);
    writeFileSync(elsewhere, readFileSync(advisoryPath(feed)));
    unlinkSync(advisoryPath(feed));
    symlinkSync(elsewhere, advisoryPath(feed));
    await expectRejected(feed, 'unsafe-path');
  });

  it('a module directory replaced by a symbolic link: unsafe-path', async () => {
    const feed = makeFeed();
    const real = `${feed.dir}-real-widgets`;
    mkdirSync(real);
    writeFileSync(path.join(real, 'one.yaml'), readFileSync(advisoryPath(feed)));
    rmSync(path.join(feed.dir, 'widgets'), { recursive: true });
    symlinkSync(real, path.join(feed.dir, 'widgets'));
    await expectRejected(feed, 'unsafe-path');
  });

  it('a FIFO in place of an advisory file: unsafe-path, without blocking', async () => {
    const feed = makeFeed();
    unlinkSync(advisoryPath(feed));
    execFileSync('mkfifo', [advisoryPath(feed)]);
    await expectRejected(feed, 'unsafe-path');
  });

  it('expired manifest: expired', async () => {
    const feed = makeFeed();
    await expectRejected(feed, 'expired', { now: new Date(NOW.getTime() + 15 * 86_400_000) });
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

  it('older than the remembered feed: rollback', async () => {
    const feed = makeFeed({ 'widgets/one.yaml': advisoryYaml({}) }, { feedVersion: '2026.11.14' });
    await expectRejected(feed, 'rollback', {
      lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00Z'),
    });
  });

  it('newer version but published before the remembered feed: rollback', async () => {
    const feed = makeFeed({ 'widgets/one.yaml': advisoryYaml({}) }, { feedVersion: '2026.11.28' });
    // Not a state this client would have written (its version is not its publication
    // date), but the comparison holds whatever it is handed.
    await expectRejected(feed, 'rollback', {
      now: LATER,
      lastAccepted: remembered('2026.11.21', '2026-11-29T00:00:00Z'),
    });
  });

  it('the same version with a different manifest: version-conflict', async () => {
    const feed = makeFeed();
    await expectRejected(feed, 'version-conflict', {
      lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00Z'),
    });
  });

  it('a newer feed than the remembered one is accepted', async () => {
    const feed = makeFeed({ 'widgets/one.yaml': advisoryYaml({}) }, { feedVersion: '2026.11.28' });
    expect(
      (await verify(feed, { now: LATER, lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00Z') })).ok,
    ).toBe(true);
  });

  it('unsupported schema major: schema-unsupported', async () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "2.0"', 'schema_version: "3.0"'));
    await expectRejected(feed, 'schema-unsupported');
  });

  it('a newer minor of the supported major is read', async () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "2.0"', 'schema_version: "2.7"'));
    expect((await verify(feed)).ok).toBe(true);
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

  it('a YAML alias bomb in an advisory (signed and listed): advisory-malformed', async () => {
    const feed = makeFeed({
      'widgets/one.yaml': advisoryYaml({}),
      'widgets/bomb.yaml': advisoryYaml({ id: 'TEST-2' }),
    });
    replaceSigned(feed, 'widgets/bomb.yaml', `${aliasBomb}\n`);
    const result = await expectRejected(feed, 'advisory-malformed');
    expect('rejection' in result ? result.rejection.message : '').toMatch(
      /anchors and aliases are not allowed/,
    );
  });

  it('a YAML alias bomb in the manifest (signed): manifest-malformed', async () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => `${text}${aliasBomb}\n`);
    await expectRejected(feed, 'manifest-malformed');
  });

  it.each([
    ['an unknown verdict', { verdict: 'panic' }],
    ['a reversed window', { effective: '2027-01-01', expires: '2026-01-01' }],
    ['an invalid range', { affects: '">>1.0"' }],
    ['a malformed CVE id', { cves: '\n  - id: CVE-24-1' }],
    ['a missing summary', { summary: undefined }],
  ])('an advisory with %s (signed and listed): advisory-malformed', async (_label, fields) => {
    const feed = makeFeed();
    replaceSigned(feed, 'widgets/one.yaml', advisoryYaml(fields));
    expect(await expectRejected(feed, 'advisory-malformed')).toMatchObject({
      rejection: { file: 'widgets/one.yaml' },
    });
  });

  it('the same advisory id in two modules (signed): advisory-malformed', async () => {
    const feed = makeFeed({
      'widgets/one.yaml': advisoryYaml({}),
      'gadgets/one.yaml': advisoryYaml({ id: 'TEST-2' }),
    });
    replaceSigned(feed, 'gadgets/one.yaml', advisoryYaml({}));
    await expectRejected(feed, 'advisory-malformed');
  });

  it('a YAML document of a list instead of a mapping (signed): advisory-malformed', async () => {
    const feed = makeFeed();
    replaceSigned(feed, 'widgets/one.yaml', '- just\n- a list\n');
    await expectRejected(feed, 'advisory-malformed');
  });

  it('manifest above the size cap: manifest-too-large', async () => {
    const feed = makeFeed();
    await expectRejected(feed, 'manifest-too-large', { limits: { manifestBytes: 100 } });
  });

  it('a file listed above the per-file cap: file-too-large', async () => {
    const feed = makeFeed();
    await expectRejected(feed, 'file-too-large', { limits: { fileBytes: 10 } });
  });

  it('a manifest that does not parse (signed): manifest-malformed', async () => {
    const feed = makeFeed();
    rewriteSigned(feed, () => 'schema_version: "2.0"\nmodules: [unclosed\n');
    await expectRejected(feed, 'manifest-malformed');
  });
});

describe('rejections: exact reasons, messages and files', () => {
  /** The exact rejection; a rejection that concerns no single file has no `file` at all. */
  async function expectRejection(feed: TestFeed, rejection: Rejection, extra: Partial<VerifyOptions> = {}) {
    expect(await verify(feed, extra)).toStrictEqual({ ok: false, rejection });
  }
  const size = (feed: TestFeed, file: string) => statSync(path.join(feed.dir, file)).size;

  it('manifest missing', async () => {
    const feed = makeFeed();
    unlinkSync(manifestPath(feed));
    await expectRejection(feed, {
      reason: 'manifest-missing',
      message: 'manifest.yaml is missing',
      file: MANIFEST_FILE,
    });
  });

  it('manifest and signature caps: at the cap is fine, one byte above is refused', async () => {
    const feed = makeFeed();
    const manifest = size(feed, MANIFEST_FILE);
    const signature = size(feed, SIGNATURE_FILE);
    expect((await verify(feed, { limits: { manifestBytes: manifest, signatureBytes: signature } })).ok).toBe(
      true,
    );
    await expectRejection(
      feed,
      {
        reason: 'manifest-too-large',
        message: `manifest.yaml is ${manifest} bytes, above the ${manifest - 1}-byte cap`,
        file: MANIFEST_FILE,
      },
      { limits: { manifestBytes: manifest - 1 } },
    );
    await expectRejection(
      feed,
      {
        reason: 'signature-too-large',
        message: `manifest.yaml.sig is ${signature} bytes, above the ${signature - 1}-byte cap`,
        file: SIGNATURE_FILE,
      },
      { limits: { signatureBytes: signature - 1 } },
    );
  });

  it('several signatures: a damaged block of a trusted key is named; an untrusted one is reported, not checked', async () => {
    const feed = makeFeed();
    const [a, b, c] = [makeKey(), makeKey(), makeKey()];
    const manifest = readFileSync(manifestPath(feed));
    const sigPath = path.join(feed.dir, SIGNATURE_FILE);
    const id = (key: TestKey) => keyId(key.publicKey.keynum);
    writeFileSync(sigPath, blockOf('D', a, manifest) + blockOf('V', b, manifest));
    await expectRejection(
      feed,
      {
        reason: 'signature-invalid',
        message: `the manifest signature does not verify under trusted key ${id(a)}, although it does under ${id(b)}: the signature file holds a damaged block, or one made for another manifest; every block of a trusted key must verify`,
        file: SIGNATURE_FILE,
      },
      { trustedKeys: [a.publicKey, b.publicKey] },
    );
    writeFileSync(sigPath, blockOf('D', a, manifest) + blockOf('D', b, manifest) + blockOf('V', c, manifest));
    await expectRejection(
      feed,
      {
        reason: 'signature-invalid',
        message: `the manifest signature does not verify under trusted key ${id(a)}, ${id(b)}: the manifest or its signature was altered`,
        file: SIGNATURE_FILE,
      },
      { trustedKeys: [a.publicKey, b.publicKey] },
    );
    writeFileSync(sigPath, blockOf('V', a, manifest) + blockOf('V', b, manifest) + blockOf('D', c, manifest));
    await expectRejection(
      feed,
      {
        reason: 'signature-invalid',
        message: `the manifest signature does not verify under trusted key ${id(c)}, although it does under ${id(a)}, ${id(b)}: the signature file holds a damaged block, or one made for another manifest; every block of a trusted key must verify`,
        file: SIGNATURE_FILE,
      },
      { trustedKeys: [a.publicKey, b.publicKey, c.publicKey] },
    );
    writeFileSync(sigPath, blockOf('V', c, manifest) + blockOf('V', a, manifest));
    const result = await verify(feed, { trustedKeys: [a.publicKey] });
    expect(result.ok && { signedBy: result.feed.signedBy, notChecked: result.feed.notChecked }).toEqual({
      signedBy: [id(a)],
      notChecked: [id(c)],
    });
  });

  it('signature missing, malformed, by unknown keys, invalid', async () => {
    const feed = makeFeed();
    const sigPath = path.join(feed.dir, SIGNATURE_FILE);
    const signature = readFileSync(sigPath, 'utf8');
    unlinkSync(sigPath);
    await expectRejection(feed, {
      reason: 'signature-missing',
      message: 'manifest.yaml.sig is missing: the feed is not signed',
      file: SIGNATURE_FILE,
    });
    writeFileSync(sigPath, signature.trimEnd());
    await expectRejection(feed, {
      reason: 'signature-malformed',
      message: 'manifest.yaml.sig: signature: the last line must end with a newline',
      file: SIGNATURE_FILE,
    });
    const [x, y] = [makeKey(), makeKey()];
    signFeed(feed.dir, x);
    const first = readFileSync(sigPath, 'utf8');
    signFeed(feed.dir, y);
    writeFileSync(sigPath, first + readFileSync(sigPath, 'utf8'));
    await expectRejection(feed, {
      reason: 'signature-unknown-key',
      message: `the feed is signed by key ${keyId(x.publicKey.keynum)}, ${keyId(y.publicKey.keynum)}, which is not among the trusted keys`,
      file: SIGNATURE_FILE,
    });
    await expectRejection(
      feed,
      {
        reason: 'signature-invalid',
        message: `the manifest signature does not verify under trusted key ${keyId(x.publicKey.keynum)}: the manifest or its signature was altered`,
        file: SIGNATURE_FILE,
      },
      { trustedKeys: [{ ...feed.key.publicKey, keynum: x.publicKey.keynum }] },
    );
  });

  it('a manifest that does not parse: its line and the parser error', async () => {
    const feed = makeFeed();
    rewriteSigned(feed, () => 'schema_version: "2.0"\nmodules: [unclosed\n');
    await expectRejection(feed, {
      reason: 'manifest-malformed',
      message: 'manifest.yaml line 3: unexpected end of the stream within a flow collection',
      file: MANIFEST_FILE,
    });
  });

  it.each([[''], ['just text\n'], ['- a list\n'], ['null\n']])(
    'a manifest that is not a mapping (%j): manifest-malformed',
    async (text) => {
      const feed = makeFeed();
      rewriteSigned(feed, () => text);
      await expectRejection(feed, {
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
  ])('schema_version %s is malformed, not unsupported', async (value, message) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "2.0"', `schema_version: ${value}`));
    await expectRejection(feed, { reason: 'manifest-malformed', message, file: MANIFEST_FILE });
  });

  it.each([['10.0'], ['3.10']])('schema %s is newer than this client', async (version) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "2.0"', `schema_version: "${version}"`));
    await expectRejection(feed, {
      reason: 'schema-unsupported',
      message: `the feed uses schema ${version}; this client reads schema 2.x: update the appliance`,
      file: MANIFEST_FILE,
    });
  });

  it.each([['1.0'], ['1.10'], ['0.9']])('schema %s is older than this client', async (version) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "2.0"', `schema_version: "${version}"`));
    await expectRejection(feed, {
      reason: 'schema-unsupported',
      message: `the feed uses schema ${version}, older than the 2.x this client reads: rebuild it with a current advisory-feed`,
      file: MANIFEST_FILE,
    });
  });

  it('schema 02.12 is schema 2.x', async () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('schema_version: "2.0"', 'schema_version: "02.12"'));
    expect((await verify(feed)).ok).toBe(true);
  });

  it('a required manifest field missing', async () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace(/^feed_version: .*\n/m, ''));
    await expectRejection(feed, {
      reason: 'manifest-malformed',
      message: 'manifest.yaml: document must have required properties feed_version',
      file: MANIFEST_FILE,
    });
  });

  it.each([
    ['published_at', 'yesterday', 'published_at "yesterday" is not an RFC 3339 time'],
    ['expires_at', '2026-12-05 12:00', 'expires_at "2026-12-05 12:00" is not an RFC 3339 time'],
    ['expires_at', '2026-02-30T12:00:00Z', 'expires_at "2026-02-30T12:00:00Z" is not an RFC 3339 time'],
    [
      'feed_version',
      '2026.02.30',
      'feed_version "2026.02.30" is not a real date written YYYY.MM.DD or YYYY.MM.DD.N (N from 1 to 99)',
    ],
    [
      'feed_version',
      '2062.11.21',
      'feed_version 2062.11.21 is not of the UTC date of published_at 2026-11-21T12:00:00Z (2026.11.21)',
    ],
    [
      'expires_at',
      '2028-01-01T00:00:00Z',
      'the feed is valid for more than 366 days (expires_at 2028-01-01T00:00:00Z)',
    ],
    [
      'expires_at',
      '2026-11-21T12:00:00Z',
      'expires_at 2026-11-21T12:00:00Z is not after published_at 2026-11-21T12:00:00Z',
    ],
  ])('%s %s', async (field, value, problem) => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace(new RegExp(`^${field}: .*$`, 'm'), `${field}: "${value}"`));
    await expectRejection(feed, {
      reason: 'manifest-malformed',
      message: `manifest.yaml: ${problem}`,
      file: MANIFEST_FILE,
    });
  });

  it('a feed published later than now (beyond a small skew) is refused: the clock is wrong somewhere', async () => {
    const feed = makeFeed();
    const early = (ms: number) => new Date(NOW.getTime() - ms);
    expect((await verify(feed, { now: early(5 * 60_000) })).ok).toBe(true);
    await expectRejection(
      feed,
      {
        reason: 'published-in-future',
        message: `manifest.yaml: published_at 2026-11-21T12:00:00Z is in the future (now ${early(5 * 60_000 + 1000).toISOString()}); check the publisher's clock`,
        file: MANIFEST_FILE,
      },
      { now: early(5 * 60_000 + 1000) },
    );
  });

  it('a malformed date is malformed even while the feed is also a little ahead of the clock', async () => {
    // Published 2 minutes ahead of now (within the skew), with a feed_version of another day.
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace(/^feed_version: .*$/m, 'feed_version: "2026.11.20"'));
    await expectRejection(
      feed,
      {
        reason: 'manifest-malformed',
        message:
          'manifest.yaml: feed_version 2026.11.20 is not of the UTC date of published_at 2026-11-21T12:00:00Z (2026.11.21)',
        file: MANIFEST_FILE,
      },
      { now: new Date(NOW.getTime() - 2 * 60_000) },
    );
  });

  it.each([['Widgets'], ['_widgets'], ['widgets_'], ['-widgets'], ['w'.repeat(65)]])(
    'a module named %j',
    async (name) => {
      const feed = makeFeed();
      rewriteSigned(feed, (text) => text.replace('\n  widgets:\n', `\n  ${name}:\n`));
      await expectRejection(feed, {
        reason: 'manifest-malformed',
        message: `manifest.yaml: module folder "${name}": lowercase ASCII letters, digits and "-" only, starting with a letter or digit (at most 64)`,
        file: MANIFEST_FILE,
      });
    },
  );

  const twoFiles = () =>
    makeFeed({ 'widgets/one.yaml': advisoryYaml({}), 'widgets/two.yaml': advisoryYaml({ id: 'TEST-2' }) });

  it('the number of listed files: at the cap is fine, above it is refused', async () => {
    const feed = twoFiles();
    expect((await verify(feed, { limits: { files: 2 } })).ok).toBe(true);
    await expectRejection(
      feed,
      {
        reason: 'manifest-malformed',
        message: 'manifest.yaml lists 2 files, above the cap of 1',
        file: MANIFEST_FILE,
      },
      { limits: { files: 1 } },
    );
  });

  it('a path listed twice', async () => {
    const feed = twoFiles();
    rewriteSigned(feed, (text) => text.replace('path: "widgets/two.yaml"', 'path: "widgets/one.yaml"'));
    await expectRejection(feed, {
      reason: 'manifest-malformed',
      message: 'manifest.yaml lists widgets/one.yaml twice',
      file: MANIFEST_FILE,
    });
  });

  it('per-file and total size caps: at the cap is fine, above it is refused', async () => {
    const feed = twoFiles();
    const one = size(feed, 'widgets/one.yaml');
    const two = size(feed, 'widgets/two.yaml');
    const largest = Math.max(one, two);
    expect((await verify(feed, { limits: { fileBytes: largest, totalBytes: one + two } })).ok).toBe(true);
    await expectRejection(
      feed,
      {
        reason: 'file-too-large',
        message: `widgets/one.yaml is listed at ${one} bytes, above the ${one - 1}-byte cap`,
        file: 'widgets/one.yaml',
      },
      { limits: { fileBytes: one - 1 } },
    );
    await expectRejection(
      feed,
      {
        reason: 'file-too-large',
        message: `the listed files add up to ${one + two} bytes, above the ${one + two - 1}-byte cap`,
      },
      { limits: { totalBytes: one + two - 1 } },
    );
  });

  it('unsafe paths, links and files that are not regular', async () => {
    const feed = makeFeed();
    rewriteSigned(feed, (text) => text.replace('path: "widgets/one.yaml"', 'path: ../outside.yaml'));
    await expectRejection(feed, {
      reason: 'unsafe-path',
      message: 'the manifest lists "../outside.yaml": "." and ".." are not allowed',
      file: '../outside.yaml',
    });

    const linked = makeFeed();
    const copy = `${linked.dir}-copy.yaml`;
    writeFileSync(copy, readFileSync(advisoryPath(linked)));
    unlinkSync(advisoryPath(linked));
    symlinkSync(copy, advisoryPath(linked));
    await expectRejection(linked, {
      reason: 'unsafe-path',
      message: 'widgets/one.yaml is a symbolic link; feed files must be regular files',
      file: 'widgets/one.yaml',
    });

    const folder = makeFeed();
    unlinkSync(advisoryPath(folder));
    mkdirSync(advisoryPath(folder));
    await expectRejection(folder, {
      reason: 'unsafe-path',
      message: 'widgets/one.yaml is not a regular file',
      file: 'widgets/one.yaml',
    });
  });

  it('folders on the way: links, files, missing', async () => {
    const nested = () => makeFeed({ 'widgets/sub/one.yaml': advisoryYaml({}) });
    const linked = nested();
    const real = `${linked.dir}-real-sub`;
    renameSync(path.join(linked.dir, 'widgets/sub'), real);
    symlinkSync(real, path.join(linked.dir, 'widgets/sub'));
    await expectRejection(linked, {
      reason: 'unsafe-path',
      message: 'widgets/sub is a symbolic link; links are refused',
      file: 'widgets/sub/one.yaml',
    });

    const file = nested();
    rmSync(path.join(file.dir, 'widgets/sub'), { recursive: true });
    writeFileSync(path.join(file.dir, 'widgets/sub'), 'not a folder');
    await expectRejection(file, {
      reason: 'unsafe-path',
      message: 'widgets/sub is not a directory',
      file: 'widgets/sub/one.yaml',
    });

    const missing = nested();
    rmSync(path.join(missing.dir, 'widgets'), { recursive: true });
    await expectRejection(missing, {
      reason: 'file-missing',
      message: 'widgets/sub/one.yaml is listed in the manifest but missing',
      file: 'widgets/sub/one.yaml',
    });
  });

  it('files missing, of another size, or another hash', async () => {
    const feed = makeFeed();
    const original = readFileSync(advisoryPath(feed));
    const n = original.length;
    unlinkSync(advisoryPath(feed));
    await expectRejection(feed, {
      reason: 'file-missing',
      message: 'widgets/one.yaml is listed in the manifest but missing',
      file: 'widgets/one.yaml',
    });
    writeFileSync(advisoryPath(feed), Buffer.concat([original, Buffer.from('# extra\n')]));
    await expectRejection(feed, {
      reason: 'file-size-mismatch',
      message: `widgets/one.yaml is larger than the ${n} bytes the manifest says`,
      file: 'widgets/one.yaml',
    });
    writeFileSync(advisoryPath(feed), original.subarray(0, n - 2));
    await expectRejection(feed, {
      reason: 'file-size-mismatch',
      message: `widgets/one.yaml is ${n - 2} bytes, the manifest says ${n}`,
      file: 'widgets/one.yaml',
    });
    writeFileSync(advisoryPath(feed), Buffer.from(original).fill(0x20, n - 3, n - 1));
    await expectRejection(feed, {
      reason: 'file-hash-mismatch',
      message: 'widgets/one.yaml does not match its SHA-256 in the manifest',
      file: 'widgets/one.yaml',
    });
  });

  it('a listed file that grew enormous is refused by its size, without reading it', async () => {
    const feed = makeFeed();
    const listed = size(feed, 'widgets/one.yaml');
    truncateSync(advisoryPath(feed), 2 ** 40);
    await expectRejection(feed, {
      reason: 'file-size-mismatch',
      message: `widgets/one.yaml is larger than the ${listed} bytes the manifest says`,
      file: 'widgets/one.yaml',
    });
  });

  it('an advisory: its first problem', async () => {
    const feed = makeFeed();
    replaceSigned(feed, 'widgets/one.yaml', advisoryYaml({ verdict: 'panic', affects: '">>1"' }));
    await expectRejection(feed, {
      reason: 'advisory-malformed',
      message:
        'widgets/one.yaml: unknown verdict "panic" (expected one of blocked, eol, wait-for-patch, hold, install)',
      file: 'widgets/one.yaml',
    });
  });

  it('an advisory that does not parse: its line and the parser error', async () => {
    const feed = makeFeed();
    replaceSigned(feed, 'widgets/one.yaml', `${advisoryYaml({})}other: &a 1\n`);
    await expectRejection(feed, {
      reason: 'advisory-malformed',
      message: 'widgets/one.yaml line 12: anchors and aliases are not allowed (&a)',
      file: 'widgets/one.yaml',
    });
  });

  it('an advisory that decodes to more than the per-file cap (invalid UTF-8 widens): no line to name', async () => {
    const feed = makeFeed();
    const bytes = Buffer.concat([Buffer.from('summary: "'), Buffer.alloc(100, 0xff), Buffer.from('"\n')]);
    replaceSigned(feed, 'widgets/one.yaml', bytes);
    await expectRejection(
      feed,
      {
        reason: 'advisory-malformed',
        message: `widgets/one.yaml: document larger than ${bytes.length} bytes`,
        file: 'widgets/one.yaml',
      },
      { limits: { fileBytes: bytes.length } },
    );
  });

  it('the same advisory id twice: the later file, naming the earlier', async () => {
    const feed = makeFeed({
      'gadgets/one.yaml': advisoryYaml({ product: 'gadget' }),
      'widgets/one.yaml': advisoryYaml({ id: 'TEST-2' }),
    });
    replaceSigned(feed, 'widgets/one.yaml', advisoryYaml({}));
    await expectRejection(feed, {
      reason: 'advisory-malformed',
      message: 'widgets/one.yaml: advisory id TEST-1 is also used by gadgets/one.yaml',
      file: 'widgets/one.yaml',
    });
  });

  it('expiry: valid until the instant before expires_at', async () => {
    const feed = makeFeed();
    const expiresAt = new Date('2026-12-05T12:00:00Z');
    expect((await verify(feed, { now: new Date(expiresAt.getTime() - 1) })).ok).toBe(true);
    await expectRejection(
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

  it('without a time given, the clock decides expiry', async () => {
    const hour = 3_600_000;
    const fresh = makeFeed(undefined, { now: new Date(Date.now() - hour), expiresInMs: 24 * hour });
    const stale = makeFeed(undefined, { now: new Date(Date.now() - 2 * hour), expiresInMs: hour });
    const clock = { now: new Date() };
    expect((await verifyDir(fresh.dir, { trustedKeys: [fresh.key.publicKey], ...clock })).ok).toBe(true);
    const result = await verifyDir(stale.dir, { trustedKeys: [stale.key.publicKey], ...clock });
    expect('rejection' in result ? result.rejection.reason : 'accepted').toBe('expired');
  });

  const remembered = (feed_version: string, published_at: string): AcceptedState => ({
    feed_version,
    published_at,
    manifest_sha256: 'x'.repeat(64),
  });

  it('rollback and version conflicts concern no single file', async () => {
    const older = makeFeed(undefined, { feedVersion: '2026.11.14' });
    await expectRejection(
      older,
      {
        reason: 'rollback',
        message: 'feed 2026.11.14 is older than the accepted 2026.11.21; a rollback is refused',
      },
      { lastAccepted: remembered('2026.11.21', '2026-11-01T00:00:00Z') },
    );
    const same = makeFeed();
    await expectRejection(
      same,
      {
        reason: 'version-conflict',
        message:
          'feed 2026.11.21 differs from the feed of the same version accepted before; this should never happen and is refused',
      },
      { lastAccepted: remembered('2026.11.21', '2026-11-21T12:00:00Z') },
    );
    const backdated = makeFeed(undefined, { feedVersion: '2026.11.28' });
    await expectRejection(
      backdated,
      {
        reason: 'rollback',
        message: 'feed 2026.11.28 claims a newer version but was published before the accepted feed',
      },
      { now: LATER, lastAccepted: remembered('2026.11.21', '2026-11-28T12:00:00.001Z') },
    );
  });

  it('a newer version published at the same time as the accepted one is accepted', async () => {
    const feed = makeFeed(undefined, { feedVersion: '2026.11.28' });
    const lastAccepted = remembered('2026.11.21', '2026-11-28T12:00:00Z');
    expect((await verify(feed, { now: LATER, lastAccepted })).ok).toBe(true);
  });

  it('a remembered publication time that is not a time is not compared', async () => {
    const feed = makeFeed(undefined, { feedVersion: '2026.11.28' });
    expect((await verify(feed, { now: LATER, lastAccepted: remembered('2026.11.21', 'some day') })).ok).toBe(
      true,
    );
  });
});

describe('a good feed: what verification returns', () => {
  it('the manifest, its hash, the keys that signed and the advisories of modules only', async () => {
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
          '    files:\n      - path: "widgets/one.yaml"',
          `    files:\n      - path: widgets/notes.txt\n        sha256: ${sha256(Buffer.from('not an advisory'))}\n        size: 15\n      - path: "widgets/one.yaml"`,
        )
        .concat(`files:\n  - path: extra.yaml\n    sha256: ${sha256(extra)}\n    size: ${extra.length}\n`),
    );
    const result = await verify(feed);
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

  it('the listed files outside the modules are verified too', async () => {
    const feed = makeFeed();
    writeFileSync(path.join(feed.dir, 'extra.yaml'), 'hello');
    rewriteSigned(feed, (text) =>
      text.concat(`files:\n  - path: extra.yaml\n    sha256: ${sha256(Buffer.from('hello'))}\n    size: 5\n`),
    );
    expect((await verify(feed)).ok).toBe(true);
    writeFileSync(path.join(feed.dir, 'extra.yaml'), 'jello');
    expect(await verify(feed)).toMatchObject({
      ok: false,
      rejection: { reason: 'file-hash-mismatch', file: 'extra.yaml' },
    });
  });

  it('leaves no file open, whatever the outcome', async () => {
    const openFiles = () => readdirSync('/proc/self/fd').length;
    const good = makeFeed();
    const bad = makeFeed();
    appendFileSync(advisoryPath(bad), '# extra\n');
    const tooLarge = makeFeed();
    const before = openFiles();
    for (let i = 0; i < 20; i++) {
      expect((await verify(good)).ok).toBe(true);
      expect((await verify(bad)).ok).toBe(false);
      expect((await verify(tooLarge, { limits: { manifestBytes: 10 } })).ok).toBe(false);
    }
    expect(openFiles()).toBe(before);
  });

  it('a feed that cannot be read is unreachable, not a rejection', async () => {
    const feed = makeFeed();
    expect(await verifyDir(advisoryPath(feed), { trustedKeys: [feed.key.publicKey] })).toEqual({
      ok: false,
      unreachable: expect.stringContaining('manifest.yaml'),
    });
    expect(await verifyDir(path.join(feed.dir, 'nowhere'), { trustedKeys: [feed.key.publicKey] })).toEqual({
      ok: false,
      unreachable: `${path.join(feed.dir, 'nowhere')}: no such feed directory`,
    });
  });
});

describe('large feeds, checked on worker threads', () => {
  const many = () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1100; i++) files[`widgets/w-${i}.yaml`] = advisoryYaml({ id: `MANY-${i}` });
    return makeFeed(files);
  };

  it('verifies them, read by the threads from a directory or handed the bytes (HTTP), and copies what they verified', async () => {
    const feed = many();
    const copy = mkdtempSync(path.join(tmpdir(), 'copy-'));
    const result = await verify(feed, { copyTo: copy });
    if (!result.ok) throw new Error(JSON.stringify(result));
    expect(result.feed.advisoryCount).toBe(1100);
    expect(result.feed.advisories[1099]?.advisory.id).toBe('MANY-999');
    expect(readdirSync(path.join(copy, 'widgets'))).toHaveLength(1100);
    expect(readFileSync(path.join(copy, 'widgets/w-5.yaml'))).toEqual(
      readFileSync(path.join(feed.dir, 'widgets/w-5.yaml')),
    );
    // Bytes read here and posted to the threads: the way an HTTP feed is checked.
    const { DirectorySource } = await import('../../../src/feed/sources/directory.ts');
    const { verifyFeed } = await import('../../../src/feed/verify/verify-feed.ts');
    const local = new DirectorySource(feed.dir);
    const remote = await verifyFeed(
      {
        location: 'remote',
        directory: null,
        readHead: (l) => local.readHead(l),
        readFile: (f) => local.readFile(f),
      },
      { trustedKeys: [feed.key.publicKey], now: NOW },
    );
    expect(remote.ok && remote.feed.advisoryCount).toBe(1100);
  });

  it('reports the first problem in manifest order, whichever thread found it', async () => {
    const feed = many();
    appendFileSync(path.join(feed.dir, 'widgets/w-900.yaml'), '#');
    appendFileSync(path.join(feed.dir, 'widgets/w-10.yaml'), '#');
    const result = await verify(feed);
    expect('rejection' in result ? result.rejection.file : null).toBe('widgets/w-10.yaml');
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
