import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sha256 } from '../../src/crypto/digest.ts';
import {
  generateKeyPair,
  type PublicKey,
  parsePublicKey,
  parseSecretKey,
  signMessage,
} from '../../src/crypto/signify.ts';
import { buildFeed } from '../../src/feed/author/build.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../src/feed/format/rules.ts';
import { DirectorySource } from '../../src/feed/sources/directory.ts';
import { type VerifyOptions, verifyFeed } from '../../src/feed/verify/verify-feed.ts';
import { parseYaml } from '../../src/storage/yaml.ts';
import { parseInstant } from '../../src/time/instants.ts';

/** A fixed clock for feeds built in tests. */
export const NOW = new Date('2026-11-21T12:00:00Z');

export interface TestKey {
  publicText: string;
  secretText: string;
  publicKey: PublicKey;
}

export function makeKey(comment = 'test'): TestKey {
  const pair = generateKeyPair(comment);
  return {
    publicText: pair.publicKey,
    secretText: pair.secretKey,
    publicKey: parsePublicKey(pair.publicKey),
  };
}

export function advisoryYaml(fields: Record<string, string | undefined>): string {
  const merged: Record<string, string | undefined> = {
    id: 'TEST-1',
    title: 'A test advisory',
    product: 'widget',
    affects: '">=1.0.0 <2.0.0"',
    verdict: 'eol',
    recommended_version: '"2.1"',
    effective: '2026-01-01',
    expires: '2027-12-31',
    summary: 'Something happened.',
    references: '\n  - https://example.org/advisory',
    ...fields,
  };
  return Object.entries(merged)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}: ${value}`)
    .join('\n')
    .concat('\n');
}

export interface TestFeed {
  dir: string;
  key: TestKey;
}

/** Writes advisory files (path -> YAML), builds the manifest and signs it. */
export function makeFeed(
  files: Record<string, string> = { 'widgets/one.yaml': advisoryYaml({}) },
  options: { feedVersion?: string; now?: Date; expiresInMs?: number; key?: TestKey } = {},
): TestFeed {
  const dir = mkdtempSync(path.join(tmpdir(), 'feed-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  // A feed's version is of the date it is published: noon of that day unless a time is given.
  const now =
    options.now ??
    (options.feedVersion
      ? new Date(`${options.feedVersion.slice(0, 10).replaceAll('.', '-')}T12:00:00Z`)
      : NOW);
  const result = buildFeed({
    feedDir: dir,
    ...(options.feedVersion ? { feedVersion: options.feedVersion } : {}),
    expiresInMs: options.expiresInMs ?? 14 * 86_400_000,
    now,
  });
  if (!result.ok) throw new Error(`test feed does not build: ${JSON.stringify(result.findings)}`);
  const key = options.key ?? makeKey();
  signFeed(dir, key);
  return { dir, key };
}

export function signFeed(dir: string, key: TestKey): void {
  const manifest = readFileSync(path.join(dir, MANIFEST_FILE));
  writeFileSync(
    path.join(dir, SIGNATURE_FILE),
    signMessage(parseSecretKey(key.secretText), manifest, 'verify with test.pub'),
  );
}

/** Verifies a feed directory as the appliance does, at NOW unless told otherwise. */
export function verifyDir(dir: string, options: Partial<VerifyOptions> & Pick<VerifyOptions, 'trustedKeys'>) {
  return verifyFeed(new DirectorySource(dir), { now: NOW, ...options });
}

/**
 * OpenBSD's signify (Debian package signify-openbsd), for interoperability tests; null
 * when it is not installed. CI installs it and sets REQUIRE_SIGNIFY=1, so there the tests
 * that need it cannot be skipped silently.
 */
export const signifyBinary: string | null =
  ['signify-openbsd', 'signify'].find((bin) => spawnSync(bin, [], { stdio: 'ignore' }).error === undefined) ??
  null;
if (!signifyBinary && process.env.REQUIRE_SIGNIFY)
  throw new Error('signify-openbsd is required (REQUIRE_SIGNIFY is set) but not installed');
/** Why the tests that need signify are skipped without it (scripts/test-skip.ts). */
export const NEEDS_SIGNIFY = 'needs signify-openbsd (Debian package; scripts/install-system-packages.sh)';

const sampleFeedDir = path.resolve(import.meta.dirname, '../../sample-feed');

/**
 * The committed sample feed's advisories, built and signed afresh at `now` with a new key:
 * for tests that run a command with the real clock, which must not depend on the committed
 * manifest's expiry. Advisories already expired at `now` are left out (build refuses them).
 * The public key is written beside the feed directory (`<dir>.pub`).
 */
export function currentSampleFeed(now = new Date()): TestFeed & { publicKeyFile: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sample-feed-'));
  for (const module of readdirSync(sampleFeedDir, { withFileTypes: true })) {
    if (!module.isDirectory()) continue;
    mkdirSync(path.join(dir, module.name));
    for (const file of readdirSync(path.join(sampleFeedDir, module.name))) {
      const text = readFileSync(path.join(sampleFeedDir, module.name, file), 'utf8');
      const expires = parseInstant(String((parseYaml(text) as { expires: unknown }).expires));
      if (expires && expires.getTime() > now.getTime())
        writeFileSync(path.join(dir, module.name, file), text);
    }
  }
  const built = buildFeed({ feedDir: dir, expiresInMs: 14 * 86_400_000, now });
  if (!built.ok) throw new Error(`the sample feed does not build: ${JSON.stringify(built.findings)}`);
  const key = makeKey('sample');
  signFeed(dir, key);
  const publicKeyFile = `${dir}.pub`;
  writeFileSync(publicKeyFile, key.publicText);
  return { dir, key, publicKeyFile };
}

/** Rewrites a feed's manifest and signs it again with its key: checks that hold even for a signed feed. */
export function rewriteSigned(feed: TestFeed, edit: (text: string) => string): void {
  const manifest = path.join(feed.dir, MANIFEST_FILE);
  writeFileSync(manifest, edit(readFileSync(manifest, 'utf8')));
  signFeed(feed.dir, feed.key);
}

/**
 * Replaces a listed file and updates its manifest entry, signed: the content itself is
 * what is tested (build would refuse it, as it refuses unknown keys).
 */
export function replaceSigned(feed: TestFeed, file: string, text: string | Buffer): void {
  writeFileSync(path.join(feed.dir, file), text);
  const bytes = readFileSync(path.join(feed.dir, file));
  const escaped = file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  rewriteSigned(feed, (manifest) =>
    manifest.replace(
      new RegExp(`(path: "?${escaped}"?\\n\\s+sha256: "?)[0-9a-f]+("?\\n\\s+size: )\\d+`),
      `$1${sha256(bytes)}$2${bytes.length}`,
    ),
  );
}
