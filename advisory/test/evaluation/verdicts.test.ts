import { describe, expect, it } from 'vitest';
import { evaluate, needsAction, windowHolds } from '../../src/evaluation/verdicts.ts';
import type { Advisory } from '../../src/feed/format/schema.ts';
import type { VerifiedAdvisory } from '../../src/feed/verify/verify-bytes.ts';
import type { Asset } from '../../src/inventory/asset.ts';
import { InventoryError, parseInventoryFile } from '../../src/inventory/config.ts';

const NOW = new Date('2026-11-21T12:00:00Z');

function advisory(
  fields: Partial<Advisory> & Pick<Advisory, 'id' | 'product' | 'affects'>,
): VerifiedAdvisory {
  return {
    module: 'm',
    file: `m/${fields.id}.yaml`,
    advisory: {
      title: fields.id,
      effective: '2026-01-01',
      expires: '2027-12-31',
      summary: 's',
      references: ['https://example.org'],
      verdict: 'install',
      ...fields,
    },
  };
}

const host = (products: Record<string, string>, facts: Record<string, string> = {}): Asset[] => [
  { name: 'host', source: 'inventory', products, facts, status: 'ok' },
];

describe('verdicts', () => {
  it('the most severe verdict wins: blocked > eol > wait-for-patch > hold > install', () => {
    const all = [
      advisory({ id: 'I', product: 'p', affects: '<2', verdict: 'install', recommended_version: '2.0' }),
      advisory({ id: 'H', product: 'p', affects: '<2', verdict: 'hold' }),
      advisory({ id: 'W', product: 'p', affects: '<2', verdict: 'wait-for-patch' }),
      advisory({ id: 'E', product: 'p', affects: '<2', verdict: 'eol' }),
    ];
    for (let n = all.length; n >= 1; n--) {
      const [result] = evaluate(all.slice(0, n), host({ p: '1.5' }), NOW);
      expect(result?.verdict).toBe(['install', 'hold', 'wait-for-patch', 'eol'][n - 1]);
    }
  });

  it('an asset no advisory matches has no verdict', () => {
    const [result] = evaluate(
      [advisory({ id: 'A', product: 'p', affects: '<2' })],
      host({ p: '2.1', q: '1.0' }),
      NOW,
    );
    expect(result).toMatchObject({ verdict: null, matches: [] });
  });

  it('an install whose requirement is unmet becomes blocked, with the ordering spelled out', () => {
    const nc = advisory({
      id: 'NC',
      product: 'nextcloud',
      affects: '>=33.0.0 <33.0.8',
      recommended_version: '33.0.8',
      requires: [{ product: 'php', version: '>=8.2.0 <8.6.0', reason: 'Nextcloud 33 needs PHP 8.2 to 8.5' }],
    });
    const [blocked] = evaluate([nc], host({ nextcloud: '33.0.5', php: '8.1.33' }), NOW);
    expect(blocked?.verdict).toBe('blocked');
    expect(blocked?.matches[0]?.unmet).toEqual([
      {
        product: 'php',
        required: '>=8.2.0 <8.6.0',
        installed: '8.1.33',
        reason: 'Nextcloud 33 needs PHP 8.2 to 8.5',
        ordering: 'upgrade php to >=8.2.0 <8.6.0 before nextcloud 33.0.8',
      },
    ]);
    const [met] = evaluate([nc], host({ nextcloud: '33.0.5', php: '8.3.20' }), NOW);
    expect(met?.verdict).toBe('install');
    const [unknown] = evaluate([nc], host({ nextcloud: '33.0.5' }), NOW);
    expect(unknown?.verdict).toBe('blocked');
    expect(unknown?.matches[0]?.unmet[0]?.installed).toBeNull();
  });

  it('only advisories whose window holds now are evaluated', () => {
    const future = advisory({
      id: 'F',
      product: 'p',
      affects: '<2',
      verdict: 'eol',
      effective: '2026-12-31',
    });
    const past = advisory({
      id: 'P',
      product: 'p',
      affects: '<2',
      verdict: 'eol',
      effective: '2025-01-01',
      expires: '2026-01-01',
    });
    expect(evaluate([future, past], host({ p: '1.0' }), NOW)[0]?.verdict).toBeNull();
    expect(evaluate([future], host({ p: '1.0' }), new Date('2027-01-01T00:00:00Z'))[0]?.verdict).toBe('eol');
  });

  it('coerces product versions that are not semver', () => {
    const a = advisory({
      id: 'D',
      product: 'debian',
      affects: '>=12.0.0 <12.15.0',
      recommended_version: '12.15',
    });
    expect(evaluate([a], host({ debian: '12.9' }), NOW)[0]?.verdict).toBe('install');
    expect(evaluate([a], host({ debian: '12.15' }), NOW)[0]?.verdict).toBeNull();
    const php = advisory({ id: 'PHP', product: 'php', affects: '<8.2.0', verdict: 'eol' });
    expect(evaluate([php], host({ php: '8.1.2-1ubuntu2.14' }), NOW)[0]?.verdict).toBe('eol');
    expect(evaluate([php], host({ php: 'unknown' }), NOW)[0]).toMatchObject({
      verdict: null,
      unreadable: [{ product: 'php', version: 'unknown' }],
    });
  });

  it('service reminders: due from the asset fact, due when the fact is missing, never a verdict', () => {
    const reminder = advisory({
      id: 'R',
      product: 'p',
      affects: '>=1.0.0',
      verdict: undefined,
      reminder: { from: 'last_restore_test', every: 'P3M', task: 'restore a backup' },
    });
    const [done] = evaluate([reminder], host({ p: '1.0' }, { last_restore_test: '2026-10-01' }), NOW);
    expect(done).toMatchObject({
      verdict: null,
      reminders: [{ due: false, dueAt: '2027-01-01T00:00:00.000Z' }],
    });
    const [overdue] = evaluate([reminder], host({ p: '1.0' }, { last_restore_test: '2026-05-01' }), NOW);
    expect(overdue?.reminders[0]).toMatchObject({ due: true, dueAt: '2026-08-01T00:00:00.000Z' });
    const [never] = evaluate([reminder], host({ p: '1.0' }), NOW);
    expect(never?.reminders[0]).toMatchObject({ due: true, dueAt: null });
  });
});

describe('verdicts: details', () => {
  it('an advisory holds from its effective instant until just before it expires', () => {
    const a = advisory({
      id: 'W',
      product: 'p',
      affects: '<2',
      verdict: 'eol',
      effective: '2026-03-01T10:00:00Z',
      expires: '2026-03-02',
    });
    const at = (iso: string) => windowHolds(a.advisory, new Date(iso));
    expect(at('2026-03-01T09:59:59.999Z')).toBe(false);
    expect(at('2026-03-01T10:00:00Z')).toBe(true);
    expect(at('2026-03-01T23:59:59.999Z')).toBe(true);
    expect(at('2026-03-02T00:00:00Z')).toBe(false);
    expect(evaluate([a], host({ p: '1.0' }), new Date('2026-03-01T10:00:00Z'))[0]?.verdict).toBe('eol');
    expect(evaluate([a], host({ p: '1.0' }), new Date('2026-03-02T00:00:00Z'))[0]?.verdict).toBeNull();
  });

  it('a window with a date that does not parse never holds', () => {
    const at = new Date('2026-06-01T00:00:00Z');
    const window = (effective: string, expires: string) =>
      windowHolds(advisory({ id: 'X', product: 'p', affects: '*', effective, expires }).advisory, at);
    expect(window('2026-01-01', '2027-01-01')).toBe(true);
    expect(window('someday', '2027-01-01')).toBe(false);
    expect(window('2026-01-01', 'never')).toBe(false);
    expect(window('someday', 'never')).toBe(false);
  });

  it('a match carries the advisory, the installed version, the recommendation, the CVEs and the advice', () => {
    const a = advisory({
      id: 'PG-1',
      title: 'PostgreSQL 16.4 fixes two CVEs',
      product: 'postgresql',
      affects: '>=16.0.0 <16.4.0',
      verdict: 'install',
      recommended_version: '16.4',
      cves: [{ id: 'CVE-2024-7348', cvss: 8.8 }, { id: 'CVE-2024-0001' }],
      summary: 'Update to 16.4 within the week.',
      references: ['https://www.postgresql.org/about/news/x/', 'https://example.org/b'],
    });
    const db: Asset = {
      name: 'db-1',
      source: 'inventory',
      products: { postgresql: '16.2' },
      facts: {},
      status: 'ok',
    };
    expect(evaluate([a], [db], NOW)).toEqual([
      {
        asset: 'db-1',
        source: 'inventory',
        status: 'ok',
        products: { postgresql: '16.2' },
        unreadable: [],
        verdict: 'install',
        matches: [
          {
            advisoryId: 'PG-1',
            title: 'PostgreSQL 16.4 fixes two CVEs',
            product: 'postgresql',
            installed: '16.2',
            verdict: 'install',
            recommendedVersion: '16.4',
            unmet: [],
            cves: [
              { id: 'CVE-2024-7348', cvss: 8.8, summary: null },
              { id: 'CVE-2024-0001', cvss: null, summary: null },
            ],
            summary: 'Update to 16.4 within the week.',
            references: ['https://www.postgresql.org/about/news/x/', 'https://example.org/b'],
          },
        ],
        reminders: [],
      },
    ]);
    const [bare] = evaluate(
      [advisory({ id: 'B', product: 'p', affects: '<2', verdict: 'hold' })],
      host({ p: '1.0' }),
      NOW,
    );
    expect(bare?.matches[0]).toMatchObject({ recommendedVersion: null, cves: [] });
  });

  it('every asset gets its own evaluation, in inventory order', () => {
    const a = advisory({ id: 'A', product: 'p', affects: '<2', verdict: 'eol' });
    const asset = (name: string, products: Record<string, string>): Asset => ({
      name,
      source: 'inventory',
      products,
      facts: {},
      status: 'ok',
    });
    const inventory = [asset('old', { p: '1.0' }), asset('new', { p: '2.0' }), asset('other', { q: '1.0' })];
    expect(evaluate([a], inventory, NOW).map((e) => [e.asset, e.verdict, e.matches.length])).toEqual([
      ['old', 'eol', 1],
      ['new', null, 0],
      ['other', null, 0],
    ]);
  });

  it('matches are listed most severe first, then by advisory id', () => {
    const all = [
      advisory({
        id: 'B-install',
        product: 'p',
        affects: '<2',
        verdict: 'install',
        recommended_version: '2.0',
      }),
      advisory({ id: 'Z-eol', product: 'p', affects: '<2', verdict: 'eol' }),
      advisory({ id: 'C-hold', product: 'p', affects: '<2', verdict: 'hold' }),
      advisory({ id: 'A-eol', product: 'p', affects: '<2', verdict: 'eol' }),
      advisory({
        id: 'A-install',
        product: 'p',
        affects: '<2',
        verdict: 'install',
        recommended_version: '2.0',
      }),
    ];
    const [result] = evaluate(all, host({ p: '1.0' }), NOW);
    expect(result?.matches.map((m) => m.advisoryId)).toEqual([
      'A-eol',
      'Z-eol',
      'C-hold',
      'A-install',
      'B-install',
    ]);
  });

  it('requirements block only installs; other verdicts stand and list nothing unmet', () => {
    const requires = [{ product: 'php', version: '>=8.2.0', reason: 'needs PHP 8.2' }];
    const [hold] = evaluate(
      [advisory({ id: 'H', product: 'nextcloud', affects: '<33', verdict: 'hold', requires })],
      host({ nextcloud: '32.0', php: '8.1' }),
      NOW,
    );
    expect(hold).toMatchObject({ verdict: 'hold', matches: [{ verdict: 'hold', unmet: [] }] });
  });

  it('a requirement or reminder naming a property of every object (constructor, toString) is just a name', () => {
    const [result] = evaluate(
      [
        advisory({
          id: 'C',
          product: 'nextcloud',
          affects: '<33',
          requires: [{ product: 'constructor', version: '>=1.0.0', reason: 'r' }],
        }),
        advisory({
          id: 'R',
          product: 'nextcloud',
          affects: '<33',
          verdict: undefined,
          reminder: { task: 'check', every: 'P1Y', from: 'toString' },
        }),
      ],
      host({ nextcloud: '32.0' }),
      NOW,
    );
    expect(result?.matches[0]?.unmet[0]).toMatchObject({ product: 'constructor', installed: null });
    expect(result?.reminders[0]).toMatchObject({ dueAt: null, due: true });
  });

  it('the ordering of an unmet requirement without a recommended version', () => {
    const [result] = evaluate(
      [
        advisory({
          id: 'N',
          product: 'nextcloud',
          affects: '<33',
          requires: [{ product: 'php', version: '>=8.2.0', reason: 'needs PHP 8.2' }],
        }),
      ],
      host({ nextcloud: '32.0', php: '8.1' }),
      NOW,
    );
    expect(result?.matches[0]?.unmet[0]?.ordering).toBe('upgrade php to >=8.2.0 before nextcloud');
  });

  it('an advisory with neither verdict nor reminder gives nothing', () => {
    const [result] = evaluate(
      [advisory({ id: 'N', product: 'p', affects: '<2', verdict: undefined })],
      host({ p: '1.0' }),
      NOW,
    );
    expect(result).toEqual({
      asset: 'host',
      source: 'inventory',
      status: 'ok',
      products: { p: '1.0' },
      verdict: null,
      matches: [],
      reminders: [],
      unreadable: [],
    });
  });

  it.each([
    ['P90D', '2026-04-01T00:00:00.000Z'],
    ['P12D', '2026-01-13T00:00:00.000Z'],
    ['P2W', '2026-01-15T00:00:00.000Z'],
    ['P10W', '2026-03-12T00:00:00.000Z'],
    ['P1M', '2026-02-01T00:00:00.000Z'],
    ['P14M', '2027-03-01T00:00:00.000Z'],
    ['P1Y', '2027-01-01T00:00:00.000Z'],
    ['P10Y', '2036-01-01T00:00:00.000Z'],
  ])('a reminder every %s from 2026-01-01 is due at %s', (every, dueAt) => {
    const reminder = advisory({
      id: 'R',
      product: 'p',
      affects: '*',
      verdict: undefined,
      reminder: { from: 'last_check', every, task: 'check it' },
    });
    const [result] = evaluate([reminder], host({ p: '1.0' }, { last_check: '2026-01-01' }), NOW);
    expect(result?.reminders).toEqual([
      { advisoryId: 'R', product: 'p', task: 'check it', dueAt, due: dueAt <= NOW.toISOString() },
    ]);
  });

  it('a reminder is due at its due instant; a fact that is not a date counts as never done', () => {
    const reminder = advisory({
      id: 'R',
      product: 'p',
      affects: '*',
      verdict: undefined,
      reminder: { from: 'last_check', every: 'P1D', task: 'check it' },
    });
    const due = (fact: string) =>
      evaluate([reminder], host({ p: '1.0' }, { last_check: fact }), NOW)[0]?.reminders[0];
    expect(due('2026-11-20T12:00:00Z')).toMatchObject({ due: true, dueAt: '2026-11-21T12:00:00.000Z' });
    expect(due('2026-11-20T12:00:00.001Z')).toMatchObject({ due: false, dueAt: '2026-11-21T12:00:00.001Z' });
    expect(due('last tuesday')).toMatchObject({ due: true, dueAt: null });
  });
});

describe('what needs action', () => {
  it('every verdict but hold, a due reminder, an unknown asset; not hold, nothing, or a reminder not due', () => {
    const a = (verdict: 'install' | 'hold' | 'eol' | 'wait-for-patch' | 'blocked') =>
      advisory({ id: verdict, product: 'p', affects: '<2', verdict, recommended_version: '2.0' });
    for (const verdict of ['install', 'eol', 'wait-for-patch', 'blocked'] as const) {
      expect(needsAction(evaluate([a(verdict)], host({ p: '1.0' }), NOW)[0] as never), verdict).toBe(true);
    }
    expect(needsAction(evaluate([a('hold')], host({ p: '1.0' }), NOW)[0] as never)).toBe(false);
    expect(needsAction(evaluate([a('install')], host({ p: '2.0' }), NOW)[0] as never)).toBe(false);
    const unknown: Asset = {
      name: 'x',
      source: 'pve',
      products: {},
      facts: {},
      status: 'unknown',
      error: 'timed out',
    };
    const [gone] = evaluate([a('install')], [unknown], NOW);
    expect(gone).toMatchObject({ status: 'unknown', error: 'timed out', verdict: null });
    expect(needsAction(gone as never)).toBe(true);
    const reminder = advisory({
      id: 'R',
      product: 'p',
      affects: '*',
      verdict: undefined,
      reminder: { from: 'last_check', every: 'P1M', task: 'check it' },
    });
    expect(
      needsAction(evaluate([reminder], host({ p: '1.0' }, { last_check: '2026-11-01' }), NOW)[0] as never),
    ).toBe(false);
    expect(
      needsAction(evaluate([reminder], host({ p: '1.0' }, { last_check: '2026-10-01' }), NOW)[0] as never),
    ).toBe(true);
  });
});

describe('inventory file: errors', () => {
  function inventoryError(text: string): { name: string; message: string } {
    try {
      parseInventoryFile(text);
    } catch (error) {
      expect(error).toBeInstanceOf(InventoryError);
      const { name, message } = error as InventoryError;
      return { name, message };
    }
    throw new Error('expected an InventoryError');
  }

  it('names the first problem and where it is', () => {
    expect(inventoryError('assets:\n  - products: { p: "1" }\n')).toEqual({
      name: 'InventoryError',
      message: 'inventory: /assets/0 must have required properties name',
    });
    expect(inventoryError('assets:\n  - name: a\n    products: { p: 1 }\n').message).toBe(
      'inventory: /assets/0/products/p must be string',
    );
  });

  it('a document that is not a mapping', () => {
    expect(inventoryError('- a\n- b\n').message).toBe('inventory: document must be object');
    expect(inventoryError('').message).toBe('inventory: document must be object');
  });

  it('reads names, products and facts', () => {
    expect(
      parseInventoryFile(
        'assets:\n  - name: a\n    products: { p: "1.0" }\n    facts: { last_check: "2026-01-01" }\n',
      ),
    ).toEqual({ assets: [{ name: 'a', products: { p: '1.0' }, facts: { last_check: '2026-01-01' } }] });
  });

  it('refuses a fact that looks like a date but is none: a typo must not read as "never done"', () => {
    expect(
      inventoryError(
        'assets:\n  - name: a\n    products: { p: "1" }\n    facts: { last_check: "2026-02-30" }\n',
      ).message,
    ).toBe('inventory: /assets/0: fact last_check "2026-02-30" is not a real date (YYYY-MM-DD or RFC 3339)');
    expect(
      inventoryError('assets:\n  - { name: a, products: {} }\n  - { name: a, products: {} }\n').message,
    ).toBe('inventory: asset a is listed twice');
  });
});
