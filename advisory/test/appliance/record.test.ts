import { describe, expect, it } from 'vitest';
import { planRecording } from '../../src/appliance/record.ts';
import type { AssetEvaluation } from '../../src/evaluation/verdicts.ts';

const NOW = new Date('2026-11-26T12:00:00Z');

function evaluation(
  asset: string,
  verdict: AssetEvaluation['verdict'],
  extra: Partial<AssetEvaluation> = {},
): AssetEvaluation {
  return {
    asset,
    source: 'inventory',
    status: 'ok',
    products: { widget: '2.1' },
    verdict,
    matches: verdict
      ? [
          {
            advisoryId: `A-${verdict}`,
            title: 't',
            product: 'widget',
            installed: '2.1',
            verdict,
            recommendedVersion: null,
            unmet: [],
            cves: [],
            summary: 's',
            references: ['https://example.org/a'],
          },
        ]
      : [],
    reminders: [],
    unreadable: [],
    ...extra,
  };
}

const assets = (names: string[], source = 'inventory', status = 'ok') =>
  names.map((name) => ({ name, source, status }));

/** The recording step is pure: previous state and evaluations in, entries, alert and state out. */
describe('planRecording', () => {
  it('writes one initial entry and one summary alert the first time, under the recording id', () => {
    const plan = planRecording(
      null,
      [evaluation('a', 'install'), evaluation('b', null)],
      assets(['a', 'b']),
      '2026.11.26',
      NOW,
      'rec-1',
    );
    expect(plan.entries).toEqual([
      {
        kind: 'initial-evaluation',
        data: { feed_version: '2026.11.26', verdicts: { a: 'install', b: null }, due_reminders: [] },
      },
    ]);
    expect(plan.alert).toMatchObject({
      id: 'rec-1',
      kind: 'initial',
      at: NOW.toISOString(),
      checkpoint: null,
    });
    expect(plan.evaluation).toMatchObject({ record: 'rec-1', known: { inventory: ['a', 'b'] } });
    expect(plan.evaluation.snapshot.assets.a).toEqual({
      verdict: 'install',
      advisories: ['A-install'],
      dueReminders: [],
    });
  });

  it('writes only news afterwards: a changed verdict and a newly due reminder, one alert', () => {
    const first = planRecording(
      null,
      [evaluation('a', 'install')],
      assets(['a']),
      '2026.11.26',
      NOW,
      'rec-1',
    );
    const due = { advisoryId: 'R-1', product: 'widget', task: 'check backups', dueAt: null, due: true };
    const second = planRecording(
      first.evaluation,
      [evaluation('a', 'hold', { reminders: [due] })],
      assets(['a']),
      '2026.11.27',
      NOW,
      'rec-2',
    );
    expect(second.entries.map((e) => e.kind)).toEqual(['verdict-changed', 'reminder-due']);
    expect(second.entries[0]?.data).toEqual({
      asset: 'a',
      from: 'install',
      to: 'hold',
      advisories: ['A-hold'],
      feed_version: '2026.11.27',
    });
    expect(second.alert).toMatchObject({
      id: 'rec-2',
      kind: 'changes',
      summary: '1 verdict change, 1 reminder due',
    });
    // Nothing new: no entries, no alert, the state still moves on.
    const third = planRecording(
      second.evaluation,
      [evaluation('a', 'hold', { reminders: [due] })],
      assets(['a']),
      '2026.11.27',
      NOW,
      'rec-3',
    );
    expect(third.entries).toEqual([]);
    expect(third.alert).toBeNull();
    expect(third.evaluation.record).toBe('rec-3');
  });

  it('keeps what was known of a failed source: its outage is no news, its names are remembered', () => {
    const first = planRecording(
      null,
      [evaluation('pve/a', 'install')],
      assets(['pve/a'], 'pve'),
      'v',
      NOW,
      'r1',
    );
    const outage = planRecording(
      first.evaluation,
      [evaluation('pve/a', null, { status: 'unknown', error: 'down' })],
      assets(['pve/a'], 'pve', 'unknown'),
      'v',
      NOW,
      'r2',
    );
    expect(outage.entries).toEqual([]);
    expect(outage.evaluation.snapshot.assets['pve/a']?.verdict).toBe('install');
    expect(outage.evaluation.known).toEqual({ pve: ['pve/a'] });
  });

  it('treats an asset named like a property of every object as any other name', () => {
    const first = planRecording(
      null,
      [evaluation('constructor', 'eol')],
      assets(['constructor']),
      'v',
      NOW,
      'r1',
    );
    const again = planRecording(
      first.evaluation,
      [evaluation('constructor', 'eol')],
      assets(['constructor']),
      'v',
      NOW,
      'r2',
    );
    expect(again.entries).toEqual([]);
    const fresh = planRecording(
      { snapshot: { at: '', feedVersion: null, assets: {} }, known: {} },
      [evaluation('constructor', 'eol')],
      assets(['constructor']),
      'v',
      NOW,
      'r3',
    );
    expect(fresh.entries).toEqual([
      {
        kind: 'verdict-changed',
        data: { asset: 'constructor', from: null, to: 'eol', advisories: ['A-eol'], feed_version: 'v' },
      },
    ]);
  });
});
