import { describe, expect, it } from 'vitest';
import { timeline, verdictHistory } from '../../src/dashboard/history.ts';
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
