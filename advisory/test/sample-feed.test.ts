import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePublicKey } from '../src/crypto/signify.ts';
import { type AssetEvaluation, evaluate } from '../src/evaluation/verdicts.ts';
import { lintFeed } from '../src/feed/author/lint.ts';
import { Verdicts } from '../src/feed/format/schema.ts';
import type { VerifiedAdvisory } from '../src/feed/verify/verify-bytes.ts';
import { collectInventory, loadInventory } from '../src/inventory/collect.ts';
import { verifyDir } from './support/feed.ts';

const root = path.resolve(import.meta.dirname, '..');
const feedDir = path.join(root, 'sample-feed');
const inventoryFile = path.join(root, 'examples/demo-inventory.yaml');
const publicKey = parsePublicKey(readFileSync(path.join(root, 'sample-feed.pub'), 'utf8'));
// Inside the sample manifest's validity window, whatever the date the tests run on.
const manifest = readFileSync(path.join(feedDir, 'manifest.yaml'), 'utf8');
const publishedAt = new Date(/published_at: "([^"]+)"/.exec(manifest)?.[1] ?? '');
const AT = new Date(publishedAt.getTime() + 3_600_000);

async function sample(): Promise<VerifiedAdvisory[]> {
  const result = await verifyDir(feedDir, { trustedKeys: [publicKey], now: AT });
  if (!result.ok) throw new Error(`sample feed refused: ${JSON.stringify(result)}`);
  return result.feed.advisories;
}

async function verdicts(at = AT): Promise<Record<string, AssetEvaluation>> {
  const { assets } = await collectInventory(inventoryFile, await loadInventory(inventoryFile));
  return Object.fromEntries(evaluate(await sample(), assets, at).map((e) => [e.asset, e]));
}

describe('the shipped sample feed', () => {
  it('verifies with the shipped public key', async () => {
    expect((await verifyDir(feedDir, { trustedKeys: [publicKey], now: AT })).ok).toBe(true);
  });

  it('has four modules, the database stack among them, and real advisories in each', async () => {
    const advisories = await sample();
    const modules = [...new Set(advisories.map((a) => a.module))].sort();
    expect(modules).toEqual(['database-stack', 'nextcloud', 'platform', 'proxmox-ve']);
    for (const module of modules)
      expect(advisories.filter((a) => a.module === module).length).toBeGreaterThanOrEqual(3);
    const kinds = new Set(advisories.map((a) => a.advisory.verdict));
    // Every verdict an advisory states (blocked comes of an unmet requirement, below).
    for (const verdict of ['eol', 'wait-for-patch', 'hold', 'install']) expect(kinds).toContain(verdict);
    expect(advisories.some((a) => a.advisory.reminder)).toBe(true);
    expect(advisories.some((a) => a.advisory.requires?.length)).toBe(true);
  });

  it('names a source for every advisory and cites every CVE it highlights', async () => {
    for (const { advisory } of await sample()) {
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
    expect(lintFeed(feedDir, publishedAt).findings).toEqual([]);
  });
});

/**
 * The demo inventory against the sample feed, one row per rule of evaluation: the asset
 * that shows it, and what the rule makes of it.
 */
describe('evaluation rules, on the sample feed and the demo inventory', () => {
  const rows: [rule: string, asset: string, check: (e: AssetEvaluation) => void][] = [
    [
      'the most severe verdict wins (eol over install)',
      'pve-node-1',
      (e) => {
        expect(e.verdict).toBe('eol');
        expect(e.matches.map((m) => [m.verdict, m.advisoryId])).toEqual([
          ['eol', 'PVE-EOL-8'],
          ['install', 'DEBIAN-12.15'],
        ]);
      },
    ],
    [
      'an install names the version to install',
      'pve-node-2',
      (e) => {
        expect(e.verdict).toBe('install');
        expect(e.matches.find((m) => m.product === 'proxmox-ve')?.recommendedVersion).toBe('9.2');
      },
    ],
    [
      'an install whose requirement is unmet is blocked, with the order of upgrades',
      'cloud',
      (e) => {
        expect(e.verdict).toBe('blocked');
        const nextcloud = e.matches.find((m) => m.product === 'nextcloud');
        expect(nextcloud?.verdict).toBe('blocked');
        expect(nextcloud?.unmet.map((u) => u.ordering)).toEqual([
          'upgrade php to >=8.2.0 <8.6.0 before nextcloud 33.0.8',
        ]);
      },
    ],
    [
      'a hold is a verdict of its own (no action)',
      'files',
      (e) => {
        expect(e.verdict).toBe('hold');
        expect(e.matches.map((m) => m.advisoryId)).toEqual(['NC-HOLD-34']);
      },
    ],
    [
      'several end-of-life products: each is listed',
      'files-legacy',
      (e) => {
        expect(e.verdict).toBe('eol');
        expect(
          e.matches
            .filter((m) => m.verdict === 'eol')
            .map((m) => m.product)
            .sort(),
        ).toEqual(['mariadb', 'nextcloud']);
      },
    ],
    [
      'an old major version is end of life',
      'reporting-db',
      (e) => {
        expect(e.verdict).toBe('eol');
        expect(e.matches[0]?.recommendedVersion).toBe('18.6');
      },
    ],
    [
      'a CVE is carried with its advisory',
      'cache',
      (e) => {
        expect(e.matches.flatMap((m) => m.cves.map((c) => c.id))).toEqual(['CVE-2025-49844']);
        expect(e.matches.flatMap((m) => m.cves)[0]?.cvss).toBe(9.9);
      },
    ],
    [
      'an old apt-style version (7.4-3) is read as 7.4',
      'pve-legacy',
      (e) => {
        expect(e.matches.map((m) => m.advisoryId)).toEqual(['DEBIAN-EOL-11', 'PVE-EOL-7']);
      },
    ],
    [
      'a reminder is due when the fact is older than the period',
      'pve-node-1',
      (e) =>
        expect(e.reminders).toMatchObject([
          { advisoryId: 'PVE-SERVICE-RESTORE', due: true, dueAt: '2026-08-02T00:00:00.000Z' },
        ]),
    ],
    [
      'a reminder is not due within the period (three calendar months)',
      'pve-node-2',
      (e) => expect(e.reminders).toMatchObject([{ due: false, dueAt: '2027-01-20T00:00:00.000Z' }]),
    ],
    [
      'a reminder never recorded is due',
      'pve-legacy',
      (e) => expect(e.reminders).toMatchObject([{ due: true, dueAt: null }]),
    ],
    [
      'a vulnerability with no fix for the installed series is wait-for-patch, with its CVE',
      'ci-runner',
      (e) => {
        expect(e.verdict).toBe('wait-for-patch');
        expect(e.matches.map((m) => [m.verdict, m.advisoryId, m.recommendedVersion])).toEqual([
          ['wait-for-patch', 'LINUX-DIRTY-FRAG-6.13-6.17', null],
        ]);
        expect(e.matches[0]?.cves.map((c) => [c.id, c.cvss])).toEqual([['CVE-2026-43284', 8.8]]);
      },
    ],
    [
      'an asset no advisory applies to has no verdict (nginx is in no module; php 8.2.33 is current)',
      'web',
      (e) => {
        expect(e.verdict).toBeNull();
        expect(e.matches).toEqual([]);
      },
    ],
    [
      'a version that is not one is shown as it is, never guessed at',
      'badge-printer',
      (e) => {
        expect(e.verdict).toBeNull();
        expect(e.unreadable).toEqual([{ product: 'debian', version: 'bookworm' }]);
      },
    ],
  ];

  it('the demo inventory shows all five verdicts, each on at least one asset', async () => {
    const shown = new Set(Object.values(await verdicts()).map((e) => e.verdict));
    expect([...Verdicts].filter((verdict) => !shown.has(verdict))).toEqual([]);
  });

  it.each(rows)('%s (%s)', async (_rule, asset, check) => {
    const evaluation = (await verdicts())[asset];
    if (!evaluation) throw new Error(`no asset ${asset}`);
    check(evaluation);
  });

  it('only advisories whose window holds now: PHP 8.2 is end of life from 2026-12-31', async () => {
    expect((await verdicts(new Date('2026-12-30T23:59:59Z'))).web?.verdict).toBeNull();
    expect((await verdicts(new Date('2026-12-31T00:00:00Z'))).web?.verdict).toBe('eol');
  });
});
