import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFeed, isFeedVersion } from '../src/feed/build.ts';
import { MANIFEST_FILE, SIGNATURE_FILE, sha256 } from '../src/feed/files.ts';
import { advisoryYaml, NOW } from './support/feed.ts';

function feedWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'build-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

const DAY = 86_400_000;

describe('feed versions', () => {
  it.each([['2026.11.21'], ['2024.02.29'], ['1999.12.31'], ['2026.01.01']])(
    '%s is a feed version',
    (text) => {
      expect(isFeedVersion(text)).toBe(true);
    },
  );

  it.each([
    ['2026.13.01'],
    ['2026.00.10'],
    ['2026.02.30'],
    ['2025.02.29'],
    ['2026.04.31'],
    ['2026.11.1'],
    ['2026-11-21'],
    ['26.11.21'],
    ['x2026.11.21'],
    ['2026.11.21x'],
    ['2026.11.21.1'],
    [''],
  ])('%j is not a feed version', (text) => {
    expect(isFeedVersion(text)).toBe(false);
  });
});

describe('buildFeed', () => {
  const one = advisoryYaml({});
  const two = advisoryYaml({ id: 'TEST-2', product: 'gadget' });

  it('writes a manifest of every module and file, with sizes and hashes', () => {
    const dir = feedWith({ 'widgets/one.yaml': one, 'gadgets/sub/two.yaml': two, 'gadgets/notes.txt': 'x' });
    const result = buildFeed({ feedDir: dir, feedVersion: '2026.11.21', expiresInMs: 14 * DAY, now: NOW });
    expect(result).toEqual({
      ok: true,
      findings: [],
      removedSignature: false,
      manifest: {
        schema_version: '1.0',
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
        'schema_version: "1.0"',
        'feed_version: "2026.11.21"',
        'published_at: "2026-11-21T12:00:00Z"',
        'expires_at: "2026-12-05T12:00:00Z"',
        'modules:',
        '  gadgets:',
        '    files:',
        '      - path: gadgets/sub/two.yaml',
        `        sha256: ${sha256(Buffer.from(two))}`,
        `        size: ${two.length}`,
        '  widgets:',
        '    files:',
        '      - path: widgets/one.yaml',
        `        sha256: ${sha256(Buffer.from(one))}`,
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

  it('uses the clock when no time is given', () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const result = buildFeed({
      feedDir: feedWith({ 'widgets/one.yaml': one }),
      feedVersion: '2026.11.21',
      expiresInMs: DAY,
    });
    const after = Date.now();
    if (!result.ok) throw new Error('expected a manifest');
    const published = Date.parse(result.manifest.published_at);
    expect(published).toBeGreaterThanOrEqual(before);
    expect(published).toBeLessThanOrEqual(after);
  });

  it('removes the signature of the previous manifest, and says so', () => {
    const dir = feedWith({ 'widgets/one.yaml': one, [SIGNATURE_FILE]: 'old signature' });
    const first = buildFeed({ feedDir: dir, feedVersion: '2026.11.21', expiresInMs: DAY, now: NOW });
    expect(first).toMatchObject({ ok: true, removedSignature: true });
    expect(existsSync(path.join(dir, SIGNATURE_FILE))).toBe(false);
    const again = buildFeed({ feedDir: dir, feedVersion: '2026.11.22', expiresInMs: DAY, now: NOW });
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
});
