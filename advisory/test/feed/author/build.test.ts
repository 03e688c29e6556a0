import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/crypto/digest.ts';
import { buildFeed } from '../../../src/feed/author/build.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../../src/feed/format/rules.ts';
import { advisoryYaml, makeFeed, NOW, verifyDir } from '../../support/feed.ts';

function feedWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'build-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

const DAY = 86_400_000;

describe('buildFeed', () => {
  const one = advisoryYaml({});
  const two = advisoryYaml({ id: 'TEST-2', product: 'gadget' });

  it('writes a manifest of every module and file, with sizes and hashes', () => {
    const dir = feedWith({ 'widgets/one.yaml': one, 'gadgets/sub/two.yaml': two, 'gadgets/notes.txt': 'x' });
    const result = buildFeed({ feedDir: dir, feedVersion: '2026.11.21', expiresInMs: 14 * DAY, now: NOW });
    expect(result).toEqual({
      ok: true,
      findings: [
        {
          severity: 'warning',
          rule: 'layout',
          file: 'gadgets/notes.txt',
          line: 1,
          message: 'not an advisory file (.yaml or .yml): not listed in the manifest',
        },
      ],
      removedSignature: false,
      manifest: {
        schema_version: '2.0',
        feed_version: '2026.11.21',
        published_at: '2026-11-21T12:00:00Z',
        expires_at: '2026-12-05T12:00:00Z',
        modules: {
          gadgets: {
            files: [{ path: 'gadgets/sub/two.yaml', sha256: sha256(Buffer.from(two)), size: two.length }],
          },
          widgets: {
            files: [{ path: 'widgets/one.yaml', sha256: sha256(Buffer.from(one)), size: one.length }],
          },
        },
      },
    });
    expect(readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')).toBe(
      [
        '# Advisory feed manifest: written by `advisory-feed build`, signed by `advisory-feed sign`.',
        'schema_version: "2.0"',
        'feed_version: "2026.11.21"',
        'published_at: "2026-11-21T12:00:00Z"',
        'expires_at: "2026-12-05T12:00:00Z"',
        'modules:',
        '  gadgets:',
        '    files:',
        '      - path: "gadgets/sub/two.yaml"',
        `        sha256: "${sha256(Buffer.from(two))}"`,
        `        size: ${two.length}`,
        '  widgets:',
        '    files:',
        '      - path: "widgets/one.yaml"',
        `        sha256: "${sha256(Buffer.from(one))}"`,
        `        size: ${one.length}`,
        '',
      ].join('\n'),
    );
  });

  it('writes times in whole seconds, rounded down', () => {
    const dir = feedWith({ 'widgets/one.yaml': one });
    const result = buildFeed({
      feedDir: dir,
      feedVersion: '2026.11.21',
      expiresInMs: 90 * 60_000 + 1_700,
      now: new Date('2026-11-21T12:00:00.600Z'),
    });
    expect(result.ok && [result.manifest.published_at, result.manifest.expires_at]).toEqual([
      '2026-11-21T12:00:00Z',
      '2026-11-21T13:30:02Z',
    ]);
  });

  it('uses the clock when no time is given, and today’s UTC date as the version', () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const result = buildFeed({ feedDir: feedWith({ 'widgets/one.yaml': one }), expiresInMs: DAY });
    const after = Date.now();
    if (!result.ok) throw new Error('expected a manifest');
    const published = Date.parse(result.manifest.published_at);
    expect(result.manifest.feed_version).toBe(result.manifest.published_at.slice(0, 10).replaceAll('-', '.'));
    expect(published).toBeGreaterThanOrEqual(before);
    expect(published).toBeLessThanOrEqual(after);
  });

  it('removes the signature of the previous manifest, and says so', () => {
    const dir = feedWith({ 'widgets/one.yaml': one, [SIGNATURE_FILE]: 'old signature' });
    const first = buildFeed({ feedDir: dir, feedVersion: '2026.11.21', expiresInMs: DAY, now: NOW });
    expect(first).toMatchObject({ ok: true, removedSignature: true });
    expect(existsSync(path.join(dir, SIGNATURE_FILE))).toBe(false);
    const again = buildFeed({ feedDir: dir, expiresInMs: DAY, now: NOW });
    expect(again).toMatchObject({ ok: true, removedSignature: false });
  });

  it('with errors: the findings, no manifest, and the old signature stays', () => {
    const dir = feedWith({ 'widgets/one.yaml': advisoryYaml({ verdict: 'maybe' }), [SIGNATURE_FILE]: 'old' });
    const result = buildFeed({ feedDir: dir, feedVersion: '2026.11.21', expiresInMs: DAY, now: NOW });
    expect(result).toEqual({
      ok: false,
      findings: [
        {
          severity: 'error',
          rule: 'unknown-verdict',
          file: 'widgets/one.yaml',
          line: 5,
          message: 'unknown verdict "maybe" (expected one of blocked, eol, wait-for-patch, hold, install)',
        },
      ],
    });
    expect(existsSync(path.join(dir, MANIFEST_FILE))).toBe(false);
    expect(readFileSync(path.join(dir, SIGNATURE_FILE), 'utf8')).toBe('old');
  });

  it('refuses what verify would read otherwise: a version that is not the publication date, a validity over 366 days', () => {
    const dir = feedWith({ 'widgets/one.yaml': one });
    const wrongDay = buildFeed({ feedDir: dir, feedVersion: '2062.11.21', expiresInMs: DAY, now: NOW });
    expect(wrongDay.ok).toBe(false);
    expect(wrongDay.findings.map((f) => f.message)).toEqual([
      'feed_version 2062.11.21 is not of the UTC date of published_at 2026-11-21T12:00:00Z (2026.11.21)',
    ]);
    for (const expiresInMs of [999_999 * 7 * DAY, 367 * DAY, 0, -DAY]) {
      const result = buildFeed({ feedDir: dir, expiresInMs, now: NOW });
      expect(result.ok, String(expiresInMs)).toBe(false);
      expect(result.findings.map((f) => f.message)).toEqual([
        'the feed must expire more than 0 and at most 366 days after it is published',
      ]);
    }
    expect(buildFeed({ feedDir: dir, expiresInMs: 366 * DAY, now: NOW }).ok).toBe(true);
    expect(existsSync(path.join(dir, MANIFEST_FILE))).toBe(true);
  });

  it('refuses a feed with anything it cannot publish as it is, writing no manifest', () => {
    for (const bad of [
      'Platform/a.yaml',
      'widgets/one #2.yaml',
      'widgets/ümlaut.yaml',
      'widgets/dir.yaml/x.yaml',
    ]) {
      const dir = feedWith({ 'widgets/one.yaml': one, [bad]: two });
      const result = buildFeed({ feedDir: dir, expiresInMs: DAY, now: NOW });
      expect(result.ok, bad).toBe(false);
      expect(
        result.findings.filter((f) => f.severity === 'error').map((f) => f.rule),
        bad,
      ).toEqual(['layout']);
      expect(existsSync(path.join(dir, MANIFEST_FILE)), bad).toBe(false);
    }
  });
});

describe('buildFeed: versions of the same day', () => {
  const fresh = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'build-version-'));
    mkdirSync(path.join(dir, 'widgets'));
    writeFileSync(path.join(dir, 'widgets/one.yaml'), advisoryYaml({}));
    return dir;
  };
  const build = (dir: string, feedVersion?: string) =>
    buildFeed({ feedDir: dir, expiresInMs: DAY, now: NOW, ...(feedVersion ? { feedVersion } : {}) });
  const versionOf = (result: ReturnType<typeof buildFeed>) =>
    result.ok ? result.manifest.feed_version : null;

  it('takes the next free version after the manifest in the directory', () => {
    const dir = fresh();
    expect(versionOf(build(dir))).toBe('2026.11.21');
    expect(versionOf(build(dir))).toBe('2026.11.21.1');
    expect(versionOf(build(dir, '2026.11.21.9'))).toBe('2026.11.21.9');
    expect(versionOf(build(dir))).toBe('2026.11.21.10');
  });

  it('refuses a version given by hand that is not after the last one built: no manifest written', () => {
    const dir = fresh();
    expect(build(dir, '2026.11.21.2').findings).toEqual([]);
    const manifest = readFileSync(path.join(dir, MANIFEST_FILE), 'utf8');
    const refusal = (message: string) => ({
      ok: false,
      findings: [{ severity: 'error', rule: 'manifest', file: MANIFEST_FILE, line: 1, message }],
    });
    expect(build(dir, '2026.11.21.1')).toEqual(
      refusal(
        '--feed-version 2026.11.21.1 is older than 2026.11.21.2, the version of the manifest already here: clients that accepted that feed refuse this one (rollback); build without --feed-version to take the next free version (or remove manifest.yaml first if that feed was never published)',
      ),
    );
    expect(build(dir, '2026.11.21')).toMatchObject({ ok: false });
    expect(build(dir, '2026.11.21.2')).toEqual(
      refusal(
        '--feed-version 2026.11.21.2 is the version of the manifest already here: clients that accepted that feed refuse another one of the same version (version-conflict); build without --feed-version to take the next free version (or remove manifest.yaml first if that feed was never published)',
      ),
    );
    expect(readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')).toBe(manifest);
    // A later version is taken; so is any once the old manifest is gone.
    expect(versionOf(build(dir, '2026.11.21.3'))).toBe('2026.11.21.3');
    rmSync(path.join(dir, MANIFEST_FILE));
    expect(versionOf(build(dir, '2026.11.21.1'))).toBe('2026.11.21.1');
  });

  it("a version given by hand that is no version at all is the dates' problem, whatever was built before", () => {
    const dir = fresh();
    expect(build(dir).ok).toBe(true);
    expect(build(dir, '2026.11.xx')).toMatchObject({
      ok: false,
      findings: [{ message: expect.stringMatching(/^feed_version "2026\.11\.xx" is not a real date/) }],
    });
  });

  it('refuses a version given by hand before a manifest of a later day (a clock set back)', () => {
    const dir = fresh();
    expect(buildFeed({ feedDir: dir, expiresInMs: DAY, now: new Date('2026-11-22T08:00:00Z') }).ok).toBe(
      true,
    );
    expect(build(dir, '2026.11.21.5')).toMatchObject({
      ok: false,
      findings: [
        { message: expect.stringMatching(/^--feed-version 2026\.11\.21\.5 is older than 2026\.11\.22,/) },
      ],
    });
  });

  it('refuses to guess when the manifest in the directory has no readable version', () => {
    const dir = fresh();
    writeFileSync(path.join(dir, MANIFEST_FILE), 'feed_version: "tomorrow"\n');
    expect(build(dir)).toEqual({
      ok: false,
      findings: [
        {
          severity: 'error',
          rule: 'manifest',
          file: MANIFEST_FILE,
          line: 1,
          message:
            'the manifest.yaml already here has no readable feed_version, so the next free version is unknown: give one with --feed-version',
        },
      ],
    });
    expect(versionOf(build(dir, '2026.11.21'))).toBe('2026.11.21');
  });
});

describe('a module named like a property every object has', () => {
  it('`constructor` is built, listed and counted like any other module', async () => {
    const feed = makeFeed({
      'constructor/one.yaml': advisoryYaml({}),
      'widgets/two.yaml': advisoryYaml({ id: 'TEST-2' }),
    });
    const manifest = readFileSync(path.join(feed.dir, MANIFEST_FILE), 'utf8');
    expect(manifest).toMatch(/^ {2}constructor:\n {4}files:\n {6}- path: "constructor\/one\.yaml"$/m);
    const result = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey] });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (!result.ok) return;
    expect(result.feed.counts).toEqual({ constructor: 1, widgets: 1 });
  });
});
