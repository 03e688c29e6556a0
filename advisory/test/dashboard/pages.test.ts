import { describe, expect, it } from 'vitest';
import type { ApplianceStatus } from '../../src/appliance/status.ts';
import { hostAllowed } from '../../src/dashboard/access.ts';
import {
  assetsPage,
  feedPage,
  logPage,
  notice,
  pageNumber,
  remindersPage,
} from '../../src/dashboard/pages.ts';
import { localTime } from '../../src/dashboard/views/time.ts';
import type { DecisionEntry } from '../../src/decisions/chain.ts';
import type { AssetEvaluation } from '../../src/evaluation/verdicts.ts';

const evaluation = (asset: string, fields: Partial<AssetEvaluation> = {}): AssetEvaluation => ({
  asset,
  source: 'inventory',
  status: 'ok',
  products: { widget: '2.1' },
  verdict: null,
  matches: [],
  reminders: [],
  unreadable: [],
  ...fields,
});

const status = (fields: Partial<ApplianceStatus> = {}): ApplianceStatus => ({
  startedAt: '2026-11-26T00:00:00.000Z',
  feedLocation: '/srv/feed/',
  feedSource: 'directory',
  feed: null,
  problem: null,
  lastPull: null,
  lastRefresh: null,
  inventory: [],
  inventoryError: null,
  evaluations: [],
  evaluatedAt: '2026-11-26T01:00:00.000Z',
  outbox: { channels: [], pending: 0, failed: 0, damaged: 0 },
  feedExpiryWarningMs: 7 * 86_400_000,
  readOnly: false,
  lastRefreshError: null,
  logProblem: null,
  ...fields,
});

/** The page builders are pure: what the appliance knows in, what the page shows out. */
describe('dashboard pages', () => {
  it('filters assets by verdict (none and unknown too), product and source', () => {
    const all = status({
      evaluations: [
        evaluation('a', { verdict: 'eol' }),
        evaluation('b'),
        evaluation('c', { status: 'unknown', source: 'pve', products: {} }),
        evaluation('d', { verdict: 'install', products: { php: '8.1' } }),
      ],
    });
    const rows = (query: Record<string, string>) =>
      (assetsPage(all, query).data as { rows: { asset: string }[] }).rows.map((r) => r.asset);
    expect(rows({})).toEqual(['a', 'b', 'c', 'd']);
    expect(rows({ verdict: 'eol' })).toEqual(['a']);
    expect(rows({ verdict: 'none' })).toEqual(['b']);
    expect(rows({ verdict: 'unknown' })).toEqual(['c']);
    expect(rows({ product: 'php' })).toEqual(['d']);
    expect(rows({ product: 'constructor' })).toEqual([]);
    expect(rows({ source: 'pve' })).toEqual(['c']);
    expect(assetsPage(all, { verdict: '' }).data).toMatchObject({
      filtered: false,
      total: 4,
      productOptions: ['php', 'widget'],
      sourceOptions: ['inventory', 'pve'],
    });
    expect(assetsPage(all, { source: 'pve' }).data).toMatchObject({ filtered: true });
  });

  it('lists reminders overdue and upcoming, each by due date', () => {
    const r = (advisoryId: string, due: boolean, dueAt: string | null) => ({
      advisoryId,
      product: 'p',
      task: 't',
      due,
      dueAt,
    });
    const page = remindersPage(
      status({
        evaluations: [
          evaluation('a', {
            reminders: [
              r('late', true, '2026-11-02'),
              r('never', true, null),
              r('soon', false, '2026-12-09'),
            ],
          }),
          evaluation('b', { reminders: [r('later', false, '2026-12-01'), r('early', true, '2026-11-01')] }),
        ],
      }),
    );
    const ids = (list: { advisoryId: string }[]) => list.map((x) => x.advisoryId);
    const data = page.data as { overdue: { advisoryId: string }[]; upcoming: { advisoryId: string }[] };
    expect(ids(data.overdue)).toEqual(['never', 'early', 'late']);
    expect(ids(data.upcoming)).toEqual(['later', 'soon']);
  });

  it('names the fact each reminder is measured from, from the feed in use', () => {
    const reminder = { advisoryId: 'R-1', product: 'p', task: 't', due: true, dueAt: null };
    const evaluations = [evaluation('a', { reminders: [reminder, { ...reminder, advisoryId: 'R-gone' }] })];
    const feed = {
      from: 'live' as const,
      since: 'T',
      feed: {
        advisories: [
          {
            module: 'm',
            file: 'f',
            advisory: { id: 'R-1', reminder: { from: 'last_restore_test', every: 'P3M', task: 't' } },
          },
          { module: 'm', file: 'g', advisory: { id: 'X-1' } },
        ],
      },
    } as unknown as ApplianceStatus['feed'];
    const facts = (fields: Partial<ApplianceStatus>) =>
      (
        remindersPage(status({ evaluations, ...fields })).data as { overdue: { fact: string | null }[] }
      ).overdue.map((r) => r.fact);
    expect(facts({ feed })).toEqual(['last_restore_test', null]);
    expect(facts({})).toEqual([null, null]);
  });

  it('names on the Feed page what is in use, as the banner does, and when the last pull was', () => {
    const settings = { cachePath: '/c', refreshInterval: '6h', trustedKeys: ['k'] };
    const manifest = {
      feed_version: '2026.11.26',
      schema_version: '2.0',
      published_at: 'P',
      expires_at: 'E',
    };
    const feed = (from: 'live' | 'cache') =>
      ({
        from,
        since: '2026-11-26T02:00:00.000Z',
        feed: { manifest, signedBy: [], manifestSha256: '', advisoryCount: 0, advisories: [] },
      }) as unknown as ApplianceStatus['feed'];
    const data = (fields: Partial<ApplianceStatus>) =>
      feedPage(status(fields), settings).data as {
        feed: { inUse: string; since: { iso: string } } | null;
        servingCache: boolean;
        liveProblem: boolean;
        lastPull: { at: { iso: string; local: string }; outcome: string } | null;
      };
    const problem = { at: '2026-11-26T03:00:00.000Z', outcome: 'rejected' as const, message: 'refused' };
    // Named by its origin as `advisory check` names it: a directory is no "live feed".
    expect(data({ feed: feed('live') })).toMatchObject({
      feed: { inUse: 'the feed directory /srv/feed/', since: { iso: '2026-11-26T02:00:00.000Z' } },
      servingCache: false,
      liveProblem: false,
      lastPull: null,
    });
    expect(data({ feed: feed('live'), problem, lastPull: problem })).toMatchObject({
      feed: { inUse: 'the last accepted copy from the feed directory /srv/feed/' },
      servingCache: false,
      liveProblem: true,
      lastPull: { at: { iso: problem.at, local: localTime(problem.at) }, outcome: 'rejected' },
    });
    expect(data({ feed: feed('cache'), problem })).toMatchObject({
      feed: { inUse: 'the cache (/c)' },
      servingCache: true,
      liveProblem: true,
    });
    // A variant: the feed host, by its address, and never as a directory.
    const host = { feedSource: 'http' as const, feedLocation: 'https://feed.example/advisories/' };
    expect(data({ ...host, feed: feed('live') }).feed?.inUse).toBe(
      'the feed host https://feed.example/advisories/',
    );
    expect(data({ ...host, feed: feed('live'), problem }).feed?.inUse).toBe(
      'the last accepted copy from the feed host https://feed.example/advisories/',
    );
    expect(data({ ...host, feed: feed('cache'), problem }).feed?.inUse).toBe('the cache (/c)');
    expect(data({})).toMatchObject({ feed: null, servingCache: false });
  });

  it('marks a product whose version is unreadable, and only that one', () => {
    const rows = (
      assetsPage(
        status({
          evaluations: [
            evaluation('a', {
              products: { debian: 'bookworm', widget: '2.1' },
              unreadable: [{ product: 'debian', version: 'bookworm' }],
            }),
          ],
        }),
        {},
      ).data as { rows: { products: { product: string; unreadable: boolean }[] }[] }
    ).rows;
    expect(rows[0]?.products.map((p) => [p.product, p.unreadable])).toEqual([
      ['debian', true],
      ['widget', false],
    ]);
  });

  it('says on the Feed page what went wrong last: the pull, the refresh, or both, each with its time', () => {
    const settings = { cachePath: '/c', refreshInterval: '6h', trustedKeys: ['k'] };
    const errors = (fields: Partial<ApplianceStatus>) =>
      (
        feedPage(status(fields), settings).data as { errors: { at: { iso: string }; text: string }[] }
      ).errors.map((e) => `${e.at.iso}: ${e.text}`);
    expect(errors({})).toEqual([]);
    const problem = { at: 'T1', outcome: 'unreachable' as const, message: 'connection refused' };
    expect(errors({ problem })).toEqual(['T1: connection refused']);
    expect(errors({ lastRefreshError: { at: 'T2', message: 'ENOSPC' } })).toEqual([
      'T2: the refresh failed: ENOSPC',
    ]);
    expect(errors({ problem, lastRefreshError: { at: 'T2', message: 'ENOSPC' } })).toEqual([
      'T1: connection refused',
      'T2: the refresh failed: ENOSPC',
    ]);
  });

  it("names in every page's banner where the feed comes from: the feed directory or the feed host", () => {
    const health = { status: 'degraded' as const, problems: [] };
    expect(notice(status(), health).source).toBe('the feed directory /srv/feed/');
    expect(
      notice(status({ feedSource: 'http', feedLocation: 'https://feed.example/a/' }), health).source,
    ).toBe('the feed host https://feed.example/a/');
  });

  it('shows problems beyond the feed in use on every page, and the last verdicts only without a feed', () => {
    const refusal = { at: 'T', outcome: 'rejected' as const, message: 'refused' };
    const shown = notice(status({ problem: refusal }), {
      status: 'down',
      problems: [
        { code: 'no-feed', message: 'x' },
        { code: 'feed-expired', message: 'x' },
        { code: 'feed-refused', message: 'x' },
        { code: 'feed-stale', message: 'stale' },
      ],
    });
    expect(shown).toEqual({
      source: 'the feed directory /srv/feed/',
      feed: null,
      problem: 'refused.',
      problems: [{ code: 'feed-stale', message: 'stale.' }],
      inventoryError: null,
      lastEvaluatedAt: { iso: '2026-11-26T01:00:00.000Z', local: localTime('2026-11-26T01:00:00.000Z') },
    });
  });

  it('shows a refusal still in effect while the host cannot be reached, once', () => {
    const unreachable = { at: 'T2', outcome: 'unreachable' as const, message: 'ECONNREFUSED' };
    const problems = [
      { code: 'feed-refused' as const, message: 'the feed from the feed host was refused: bad' },
      { code: 'feed-unreachable' as const, message: 'the feed host cannot be reached: ECONNREFUSED' },
    ];
    const shown = notice(status({ problem: unreachable }), { status: 'degraded', problems });
    // Every message shown ends with one full stop.
    const stopped = problems.map((p) => ({ ...p, message: `${p.message}.` }));
    expect(shown.problem).toBe('ECONNREFUSED.');
    expect(shown.problems).toEqual([stopped[0]]);
    // Before the first pull (a refusal remembered from before a restart): both show.
    expect(notice(status(), { status: 'degraded', problems }).problems).toEqual(stopped);
    const refused = { at: 'T1', outcome: 'rejected' as const, message: 'bad' };
    expect(notice(status({ problem: refused }), { status: 'degraded', problems }).problems).toEqual([
      stopped[1],
    ]);
  });

  it('reads ?page= as a page from 1, and words every kind of log entry', () => {
    for (const [raw, page] of [
      [undefined, 1],
      ['', 1],
      ['1', 1],
      ['2', 2],
      ['0', 1],
      ['-3', 1],
      ['1.5', 1],
      ['12x', 1],
      ['9999999', 9999999],
      ['10000000', 1],
    ] as const)
      expect(pageNumber(raw), String(raw)).toBe(page);
    const entry = (kind: DecisionEntry['kind'], data: Record<string, unknown>): DecisionEntry => ({
      seq: 1,
      at: 'T',
      kind,
      data,
      prev: '',
      hash: '',
    });
    const texts = (
      logPage(
        {
          intact: true,
          entries: 6,
          head: null,
          checkpoints: 1,
          lastCheckpoint: null,
          unsigned: 0,
          breaks: [],
        },
        {
          entries: [
            entry('feed-accepted', { feed_version: 'v', advisories: 3, signed_by: ['k1', 'k2'] }),
            entry('feed-rejected', { reason: 'rollback', message: 'older' }),
            entry('initial-evaluation', { feed_version: 'v', verdicts: { a: 'eol', b: null } }),
            entry('verdict-changed', { asset: 'a', from: null, to: 'eol', advisories: ['X', 'Y'] }),
            entry('reminder-due', { asset: 'a', task: 'restore', advisory: 'R' }),
            entry('log-repaired', {
              file: 'decisions.jsonl',
              removed_bytes: 12,
              kept_in: 'decisions.jsonl.partial-T',
            }),
          ],
          total: 250,
        },
        2,
      ).data as { entries: { text: string }[]; pages: number; page: number }
    ).entries.map((e) => e.text);
    expect(texts).toEqual([
      'feed v accepted (3 advisories, signed by k1, k2)',
      'feed refused: rollback: older',
      'first evaluation with feed v: 2 assets',
      'a: no verdict → eol (X, Y)',
      'a: restore is due (R)',
      'a partial last line of decisions.jsonl (12 bytes) was set apart in decisions.jsonl.partial-T',
    ]);
  });

  it('accepts a Host header of its own only', () => {
    const names = new Set(['advisory.lan']);
    const allowed = [
      '127.0.0.1',
      '127.0.0.1:8090',
      '10.1.2.3',
      'localhost',
      'LOCALHOST:1',
      '[::1]',
      '[::1]:8090',
      '[fd00::5]',
      'advisory.lan',
      'Advisory.LAN:443',
      'advisory.lan.',
    ];
    const refused = [
      undefined,
      '',
      'evil.example',
      'advisory.lan.evil.example',
      '127.0.0.1.nip.io',
      '[::1',
      '[not-ip]:80',
      '[127.0.0.1]',
      'a:b:c',
      '1.2.3',
    ];
    for (const host of allowed) expect(hostAllowed(host, names), host).toBe(true);
    for (const host of refused) expect(hostAllowed(host, names), String(host)).toBe(false);
  });
});

describe('banner messages', () => {
  it('end with a full stop, once', () => {
    const shown = notice(
      status({
        problem: { at: 'T', outcome: 'rejected', message: 'the feed in use expired' },
        inventoryError: 'inventory.yaml: line 3 is bad.',
      }),
      {
        status: 'degraded',
        problems: [
          { code: 'feed-stale', message: 'stale, is it?' },
          { code: 'refresh-failed', message: 'y ' },
        ],
      },
    );
    expect(shown.problem).toBe('the feed in use expired.');
    expect(shown.inventoryError).toBe('inventory.yaml: line 3 is bad.');
    expect(shown.problems.map((p) => p.message)).toEqual(['stale, is it?', 'y.']);
  });
});
