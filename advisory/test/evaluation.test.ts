import { describe, expect, it } from 'vitest';
import type { Inventory } from '../src/evaluation/inventory.ts';
import { parseInventory } from '../src/evaluation/inventory.ts';
import { evaluate } from '../src/evaluation/verdicts.ts';
import type { Advisory } from '../src/feed/schema.ts';
import type { VerifiedAdvisory } from '../src/feed/verify.ts';

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

const host = (products: Record<string, string>, facts?: Record<string, string>): Inventory => ({
  assets: [{ name: 'host', products, ...(facts ? { facts } : {}) }],
});

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
    expect(evaluate([php], host({ php: 'unknown' }), NOW)[0]?.verdict).toBeNull();
  });

  it('service reminders: due from the asset fact, due when the fact is missing, never a verdict', () => {
    const reminder = advisory({
      id: 'R',
      product: 'p',
      affects: '>=1.0.0',
      verdict: undefined,
      reminder: { from: 'last_restore_test', every: '3m', task: 'restore a backup' },
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

describe('inventory file', () => {
  it('parses the generic format and refuses a wrong one with the field', () => {
    expect(parseInventory('assets:\n  - name: a\n    products: { p: "1.0" }\n').assets).toHaveLength(1);
    expect(() => parseInventory('assets:\n  - products: { p: 1 }\n')).toThrow(/inventory/);
  });
});
