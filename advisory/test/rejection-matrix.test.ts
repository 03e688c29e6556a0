import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE, SIGNATURE_FILE, sha256 } from '../src/feed/files.ts';
import type { RejectionReason } from '../src/feed/rejection.ts';
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
function replaceSigned(feed: TestFeed, file: string, text: string): void {
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
