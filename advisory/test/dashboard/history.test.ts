import { describe, expect, it } from 'vitest';
import { entriesAbout, timeline, verdictHistory } from '../../src/dashboard/history.ts';
import type { DecisionEntry } from '../../src/decisions/chain.ts';

const entry = (at: string, kind: DecisionEntry['kind'], data: Record<string, unknown>): DecisionEntry => ({
  seq: 1,
  at,
  kind,
  data,
  prev: '',
  hash: '',
});

const log = [
  entry('2026-11-01T00:00:00.000Z', 'feed-accepted', { feed_version: 'v1' }),
  entry('2026-11-01T00:00:01.000Z', 'initial-evaluation', {
    feed_version: 'v1',
    verdicts: { web: 'install', db: null },
  }),
  entry('2026-11-05T00:00:00.000Z', 'verdict-changed', {
    asset: 'db',
    from: null,
    to: 'eol',
    advisories: ['E-1'],
    feed_version: 'v2',
  }),
  entry('2026-11-06T00:00:00.000Z', 'verdict-changed', {
    asset: 'web',
    from: 'install',
    to: 'hold',
    advisories: ['H-1'],
    feed_version: 'v2',
  }),
  entry('2026-11-07T00:00:00.000Z', 'verdict-changed', { asset: 'web', from: 'hold', to: null }),
  entry('2026-11-08T00:00:00.000Z', 'reminder-due', { asset: 'web', advisory: 'R', task: 't' }),
];

/** The log as the store hands it to the asset page: one entry at a time. */
async function* stream(entries: readonly DecisionEntry[]): AsyncGenerator<DecisionEntry> {
  yield* entries;
}

describe('the entries an asset page holds', () => {
  it("keeps of the log only what tells this asset's history: its initial verdict and its changes", async () => {
    const kept = await entriesAbout(stream(log), 'web');
    expect(kept).toEqual([
      // The initial evaluation narrowed to this asset's verdict: the others' are not held.
      { ...log[1], data: { feed_version: 'v1', verdicts: { web: 'install' } } },
      log[3],
      log[4],
    ]);
    // The history the page shows from them is the one the whole log tells.
    expect(verdictHistory(kept, 'web')).toEqual(verdictHistory(log, 'web'));
    // An asset whose initial verdict was "none" (null) still has it kept.
    expect(await entriesAbout(stream(log), 'db')).toEqual([
      { ...log[1], data: { feed_version: 'v1', verdicts: { db: null } } },
      log[2],
    ]);
  });

  it('keeps nothing of an asset the log never names, nor of another kind of entry about it', async () => {
    expect(await entriesAbout(stream(log), 'other')).toEqual([]);
    // A name every object has is not in an evaluation that did not list it.
    expect(await entriesAbout(stream(log), 'constructor')).toEqual([]);
    // A reminder about the asset, or an evaluation without verdicts, is no verdict of it.
    const unrelated = [
      entry('2026-11-09T00:00:00.000Z', 'reminder-due', { asset: 'web', advisory: 'R', task: 't' }),
      entry('2026-11-09T00:00:01.000Z', 'initial-evaluation', { feed_version: 'v3' }),
      entry('2026-11-09T00:00:02.000Z', 'feed-accepted', { feed_version: 'v3', asset: 'web' }),
    ];
    expect(await entriesAbout(stream(unrelated), 'web')).toEqual([]);
  });
});

describe('verdict history', () => {
  it('follows one asset through the log: its initial verdict, then every change', () => {
    expect(verdictHistory(log, 'web')).toEqual([
      { at: '2026-11-01T00:00:01.000Z', verdict: 'install', advisories: [], feedVersion: 'v1' },
      { at: '2026-11-06T00:00:00.000Z', verdict: 'hold', advisories: ['H-1'], feedVersion: 'v2' },
      { at: '2026-11-07T00:00:00.000Z', verdict: null, advisories: [], feedVersion: null },
    ]);
    expect(verdictHistory(log, 'db')).toEqual([
      { at: '2026-11-01T00:00:01.000Z', verdict: null, advisories: [], feedVersion: 'v1' },
      { at: '2026-11-05T00:00:00.000Z', verdict: 'eol', advisories: ['E-1'], feedVersion: 'v2' },
    ]);
    expect(verdictHistory(log, 'other')).toEqual([]);
    // A name every object has is not in an evaluation that did not list it.
    expect(verdictHistory(log, 'constructor')).toEqual([]);
  });

  it('lays the history out from its first point to now, one segment per verdict held', () => {
    expect(timeline([], new Date())).toBeNull();
    const points = verdictHistory(log, 'web');
    const drawn = timeline(points, new Date('2026-11-11T00:00:01.000Z'), 1000);
    expect(drawn).toEqual({
      width: 1000,
      height: 64,
      segments: [
        {
          x: 0,
          width: 500,
          verdict: 'install',
          label: 'install',
          from: '2026-11-01T00:00:01.000Z',
          to: '2026-11-06T00:00:00.000Z',
        },
        {
          x: 500,
          width: 100,
          verdict: 'hold',
          label: 'hold',
          from: '2026-11-06T00:00:00.000Z',
          to: '2026-11-07T00:00:00.000Z',
        },
        {
          x: 600,
          width: 400,
          verdict: 'none',
          label: 'no verdict',
          from: '2026-11-07T00:00:00.000Z',
          to: '2026-11-11T00:00:01.000Z',
        },
      ],
      ticks: [
        { x: 0, label: '2026-11-01' },
        { x: 1000, label: '2026-11-11' },
      ],
    });
    // A history that began this instant still spans a minute, and no segment is thinner than 2.
    const begun = timeline(verdictHistory(log.slice(0, 2), 'db'), new Date('2026-11-01T00:00:01.000Z'), 800);
    expect(begun?.ticks).toEqual([
      { x: 0, label: '2026-11-01' },
      { x: 800, label: '2026-11-01' },
    ]);
    expect(begun?.segments.map((s) => [s.width, s.to])).toEqual([[800, '2026-11-01T00:01:01.000Z']]);
    const blink = timeline(
      [
        { at: '2026-11-01T00:00:00.000Z', verdict: 'eol', advisories: [], feedVersion: null },
        { at: '2026-11-01T00:00:00.001Z', verdict: 'hold', advisories: [], feedVersion: null },
      ],
      new Date('2026-11-02T00:00:00.000Z'),
      800,
    );
    expect(blink?.segments.map((s) => s.width)).toEqual([2, 800]);
  });
});
