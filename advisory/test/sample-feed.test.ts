import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseInventory } from '../src/evaluation/inventory.ts';
import { evaluate } from '../src/evaluation/verdicts.ts';
import { lintFeed } from '../src/feed/lint.ts';
import { parsePublicKey } from '../src/feed/signify.ts';
import { verifyFeed } from '../src/feed/verify.ts';

const root = path.resolve(import.meta.dirname, '..');
const feedDir = path.join(root, 'sample-feed');
const publicKey = parsePublicKey(readFileSync(path.join(root, 'sample-feed.pub'), 'utf8'));
// Inside the sample manifest's validity window, whatever the date the tests run on.
const manifest = readFileSync(path.join(feedDir, 'manifest.yaml'), 'utf8');
const publishedAt = new Date(/published_at: "([^"]+)"/.exec(manifest)?.[1] ?? '');
const AT = new Date(publishedAt.getTime() + 3_600_000);

describe('the shipped sample feed', () => {
  const result = verifyFeed({ feedDir, trustedKeys: [publicKey], now: AT });

  it('verifies with the shipped public key', () => {
    expect(result.ok, JSON.stringify(result)).toBe(true);
  });

  it('has four modules, the database stack among them, and real advisories in each', () => {
    if (!result.ok) throw new Error('sample feed rejected');
    const modules = Object.keys(result.feed.manifest.modules).sort();
    expect(modules).toEqual(['database-stack', 'nextcloud', 'platform', 'proxmox-ve']);
    for (const module of modules)
      expect(result.feed.advisories.filter((a) => a.module === module).length).toBeGreaterThanOrEqual(3);
    const verdicts = new Set(result.feed.advisories.map((a) => a.advisory.verdict));
    for (const verdict of ['eol', 'install', 'hold']) expect(verdicts).toContain(verdict);
    expect(result.feed.advisories.some((a) => a.advisory.reminder)).toBe(true);
    expect(result.feed.advisories.some((a) => a.advisory.requires?.length)).toBe(true);
  });

  it('names a source for every advisory and cites every CVE it highlights', () => {
    if (!result.ok) throw new Error('sample feed rejected');
    for (const { advisory } of result.feed.advisories) {
      expect(advisory.references.length, advisory.id).toBeGreaterThan(0);
      for (const cve of advisory.cves ?? []) {
        expect(
          advisory.references.some((r) => r.includes(cve.id)),
          `${advisory.id} cites ${cve.id}`,
        ).toBe(true);
      }
    }
  });

  it('lints clean (at its publication time)', () => {
    expect(lintFeed(feedDir, publishedAt)).toEqual([]);
  });

  it('gives the demo inventory the verdicts the advisories mean', () => {
    if (!result.ok) throw new Error('sample feed rejected');
    const inventory = parseInventory(readFileSync(path.join(root, 'examples/demo-inventory.yaml'), 'utf8'));
    const verdicts = Object.fromEntries(
      evaluate(result.feed.advisories, inventory, AT).map((a) => [a.asset, a]),
    );
    expect(verdicts['pve-node-1']?.verdict).toBe('eol');
    expect(verdicts['pve-node-2']?.verdict).toBe('install');
    expect(verdicts.cloud?.verdict).toBe('blocked');
    expect(verdicts.cloud?.matches[0]?.unmet[0]?.ordering).toBe(
      'upgrade php to >=8.2.0 <8.6.0 before nextcloud 33.0.8',
    );
    expect(verdicts['reporting-db']?.verdict).toBe('eol');
    expect(verdicts.cache?.matches.flatMap((m) => m.cves.map((c) => c.id))).toContain('CVE-2025-49844');
    expect(verdicts['pve-node-1']?.reminders[0]?.due).toBe(true);
  });
});
