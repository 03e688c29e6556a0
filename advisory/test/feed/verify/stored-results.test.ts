import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/crypto/digest.ts';
import { buildFeed } from '../../../src/feed/author/build.ts';
import { MANIFEST_FILE } from '../../../src/feed/format/rules.ts';
import {
  decodeResults,
  encodeResults,
  type ReusableResults,
  RULES_DIGEST,
} from '../../../src/feed/verify/stored-results.ts';
import type { VerifiedFeed } from '../../../src/feed/verify/verify-feed.ts';
import { CLIENT_VERSION } from '../../../src/version.ts';
import {
  advisoryYaml,
  makeFeed,
  NOW,
  replaceSigned,
  signFeed,
  type TestFeed,
  verifyDir,
} from '../../support/feed.ts';

/**
 * Incremental verification (feed/verify/stored-results.ts): a listed advisory whose path,
 * size and SHA-256 equal a stored result's reuses it; its bytes are still hashed. The
 * stored results are local state: any doubt about them means every file is validated.
 */
const KEY = randomBytes(32);
const files = (n: number): Record<string, string> =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [
      `widgets/a${i}.yaml`,
      advisoryYaml({ id: `W-${i}`, title: `Widget ${i}` }),
    ]),
  );

async function accepted(feed: TestFeed): Promise<VerifiedFeed> {
  const result = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey] });
  if (!result.ok) throw new Error(JSON.stringify(result));
  return result.feed;
}

function stored(feed: VerifiedFeed): ReusableResults {
  const read = decodeResults(encodeResults(feed, KEY), feed.manifestSha256, KEY);
  if (!read.ok) throw new Error(read.problem);
  return read.results;
}

/**
 * Rewrites one file and lists its new size and hash in the manifest by hand, then signs:
 * a feed a careless or hostile publisher could sign, which `build` would refuse to make.
 */
function relist(feed: TestFeed, file: string, text: string): void {
  writeFileSync(path.join(feed.dir, file), text);
  const manifestFile = path.join(feed.dir, MANIFEST_FILE);
  const entry = new RegExp(`(path: "${file}"\\s+sha256: ")[0-9a-f]{64}("\\s+size: )\\d+`);
  const manifest = readFileSync(manifestFile, 'utf8');
  expect(manifest).toMatch(entry);
  writeFileSync(manifestFile, manifest.replace(entry, `$1${sha256(text)}$2${Buffer.byteLength(text)}`));
  signFeed(feed.dir, feed.key);
}

/** Rewrites one file of a built feed and builds and signs it again (a later feed). */
function republish(feed: TestFeed, file: string, text: string): void {
  writeFileSync(path.join(feed.dir, file), text);
  const built = buildFeed({ feedDir: feed.dir, expiresInMs: 14 * 86_400_000, now: NOW });
  if (!built.ok) throw new Error(JSON.stringify(built.findings));
  signFeed(feed.dir, feed.key);
}

describe('reusing stored results', () => {
  it('reuses every unchanged advisory and validates the changed one, with the same outcome as a full check', async () => {
    const feed = makeFeed(files(5));
    const first = await accepted(feed);
    republish(feed, 'widgets/a2.yaml', advisoryYaml({ id: 'W-2', title: 'Widget 2, revised' }));
    const full = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey] });
    const incremental = await verifyDir(feed.dir, {
      trustedKeys: [feed.key.publicKey],
      reuse: stored(first),
    });
    expect(incremental.ok && incremental.feed.reusedCount).toBe(4);
    expect(full.ok && full.feed.reusedCount).toBe(0);
    if (!incremental.ok || !full.ok) throw new Error('not verified');
    expect(incremental.feed.advisories).toEqual(full.feed.advisories);
    expect(incremental.feed.advisories.find((a) => a.file === 'widgets/a2.yaml')?.advisory.title).toBe(
      'Widget 2, revised',
    );
  });

  it('refuses a changed file that is invalid, although the file it replaces was valid', async () => {
    const feed = makeFeed(files(3));
    const first = await accepted(feed);
    relist(feed, 'widgets/a1.yaml', advisoryYaml({ id: 'W-1', verdict: 'upgrade-now' }));
    const result = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey], reuse: stored(first) });
    expect(result).toEqual({
      ok: false,
      rejection: {
        reason: 'advisory-malformed',
        message:
          'widgets/a1.yaml: unknown verdict "upgrade-now" (expected one of blocked, eol, wait-for-patch, hold, install)',
        file: 'widgets/a1.yaml',
      },
    });
  });

  it('still hashes a reused file: bytes changed after signing are refused', async () => {
    const feed = makeFeed(files(3));
    const first = await accepted(feed);
    // Same size, other bytes: only the hash can tell.
    const file = path.join(feed.dir, 'widgets/a0.yaml');
    writeFileSync(file, advisoryYaml({ id: 'W-0', title: 'Widget X' }));
    const result = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey], reuse: stored(first) });
    expect(result).toMatchObject({
      ok: false,
      rejection: { reason: 'file-hash-mismatch', file: 'widgets/a0.yaml' },
    });
  });

  it('catches an id clash between a changed file and a reused one', async () => {
    const feed = makeFeed(files(3));
    const first = await accepted(feed);
    relist(feed, 'widgets/a2.yaml', advisoryYaml({ id: 'W-0', title: 'Widget 2' }));
    const result = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey], reuse: stored(first) });
    expect(result).toMatchObject({
      ok: false,
      rejection: {
        reason: 'advisory-malformed',
        message: 'widgets/a2.yaml: advisory id W-0 is also used by widgets/a0.yaml',
      },
    });
  });

  it('reuses nothing for a stored result whose path, size or hash differs', async () => {
    const feed = makeFeed(files(3));
    const first = await accepted(feed);
    const results = stored(first);
    const entry = (file: string) =>
      results.byPath.get(file) as NonNullable<ReturnType<typeof results.byPath.get>>;
    // Another path with a0's size and hash; a1 with another size; a2 with another hash.
    results.byPath.set('widgets/renamed.yaml', entry('widgets/a0.yaml'));
    results.byPath.delete('widgets/a0.yaml');
    results.byPath.set('widgets/a1.yaml', {
      ...entry('widgets/a1.yaml'),
      size: entry('widgets/a1.yaml').size + 1,
    });
    results.byPath.set('widgets/a2.yaml', { ...entry('widgets/a2.yaml'), sha256: '0'.repeat(64) });
    const result = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey], reuse: results });
    expect(result.ok && result.feed.reusedCount).toBe(0);
    expect(result.ok && result.feed.advisories.map((a) => a.advisory.id)).toEqual(['W-0', 'W-1', 'W-2']);
  });
});

describe('stored results that are not used', () => {
  const feedAndBytes = async () => {
    const feed = await accepted(makeFeed(files(2)));
    return { feed, bytes: encodeResults(feed, KEY) };
  };

  it('a damaged file: a changed byte, a cut, no header, not JSON', async () => {
    const { feed, bytes } = await feedAndBytes();
    const flipped = Buffer.from(bytes);
    const at = flipped.indexOf('Widget 1');
    flipped[at] = 'V'.charCodeAt(0);
    const sealed = 'the results file is damaged or not sealed by this appliance';
    expect(decodeResults(flipped, feed.manifestSha256, KEY)).toEqual({ ok: false, problem: sealed });
    expect(decodeResults(bytes.subarray(0, bytes.length - 10), feed.manifestSha256, KEY)).toEqual({
      ok: false,
      problem: sealed,
    });
    expect(decodeResults(Buffer.from('garbage'), feed.manifestSha256, KEY)).toEqual({
      ok: false,
      problem: 'the results file has no header line',
    });
    expect(decodeResults(Buffer.from('{"format":\n[]'), feed.manifestSha256, KEY)).toEqual({
      ok: false,
      problem: 'the results file header is not JSON',
    });
    expect(decodeResults(Buffer.from('null\n[]'), feed.manifestSha256, KEY)).toEqual({
      ok: false,
      problem: 'the results file is not a results file',
    });
  });

  it('results sealed with another key (written by anyone but this appliance)', async () => {
    const { feed, bytes } = await feedAndBytes();
    expect(decodeResults(bytes, feed.manifestSha256, randomBytes(32))).toEqual({
      ok: false,
      problem: 'the results file is damaged or not sealed by this appliance',
    });
  });

  it('results of another client version or other advisory rules', async () => {
    const { feed } = await feedAndBytes();
    const older = encodeResults(feed, KEY, '0.0.1');
    expect(decodeResults(older, feed.manifestSha256, KEY)).toEqual({
      ok: false,
      problem: `the results were validated by client 0.0.1, not ${CLIENT_VERSION}`,
    });
    const otherRules = encodeResults(feed, KEY, CLIENT_VERSION, 'f'.repeat(64));
    expect(otherRules.toString()).not.toContain(RULES_DIGEST);
    expect(decodeResults(otherRules, feed.manifestSha256, KEY)).toEqual({
      ok: false,
      problem: 'the results were validated by other advisory rules',
    });
  });

  it('results of another feed than the one accepted', async () => {
    const { bytes } = await feedAndBytes();
    expect(decodeResults(bytes, 'a'.repeat(64), KEY)).toEqual({
      ok: false,
      problem: 'the results belong to another feed than the one in use',
    });
  });

  it('a header edited to claim this client (the seal covers it)', async () => {
    const { feed } = await feedAndBytes();
    const older = encodeResults(feed, KEY, '0.0.1')
      .toString()
      .replace('"client":"0.0.1"', `"client":"${CLIENT_VERSION}"`);
    expect(decodeResults(Buffer.from(older), feed.manifestSha256, KEY)).toEqual({
      ok: false,
      problem: 'the results file is damaged or not sealed by this appliance',
    });
  });

  it('stores no advisory that JSON cannot carry exactly (validated again next time)', async () => {
    // A later schema's field the verifier ignores, added after build (which refuses it).
    const made = makeFeed({ 'widgets/nan.yaml': advisoryYaml({ id: 'W-NAN' }) });
    replaceSigned(made, 'widgets/nan.yaml', `${advisoryYaml({ id: 'W-NAN' })}extra: .nan\n`);
    const feed = await accepted(made);
    const read = decodeResults(encodeResults(feed, KEY), feed.manifestSha256, KEY);
    expect(read.ok && read.results.byPath.size).toBe(0);
  });
});
