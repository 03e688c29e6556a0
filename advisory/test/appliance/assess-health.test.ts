import { describe, expect, it } from 'vitest';
import { assessHealth } from '../../src/appliance/health.ts';
import type { ApplianceStatus, FeedInUse } from '../../src/appliance/status.ts';

const DAY = 86_400_000;
const feed = (published: string, expires: string): FeedInUse =>
  ({
    from: 'live',
    since: published,
    feed: { manifest: { feed_version: '2026.11.20', published_at: published, expires_at: expires } },
  }) as unknown as FeedInUse;

const status = (fields: Partial<ApplianceStatus>): ApplianceStatus =>
  ({
    feed: feed('2026-11-20T00:00:00Z', '2026-12-20T00:00:00Z'),
    problem: null,
    lastPull: null,
    lastRefreshError: null,
    logProblem: null,
    outbox: { channels: [], pending: 0, failed: 0, damaged: 0 },
    // ADVISORY_FEED_EXPIRY_WARNING's default (appliance/config.ts).
    feedExpiryWarningMs: 7 * DAY,
    ...fields,
  }) as ApplianceStatus;

const at = (iso: string) => new Date(iso);

/** Pure: the status and the time in, ok / degraded / down with coded problems out. */
describe('assessHealth', () => {
  it('is ok with a current feed and nothing wrong', () => {
    expect(assessHealth(status({}), at('2026-11-21T00:00:00Z'), 14 * DAY)).toEqual({
      status: 'ok',
      problems: [],
    });
  });

  it('is down without a feed, or once the feed in use has expired (at that instant)', () => {
    expect(assessHealth(status({ feed: null }), at('2026-11-21T00:00:00Z'), 14 * DAY)).toEqual({
      status: 'down',
      problems: [{ code: 'no-feed', message: 'no feed has been accepted yet' }],
    });
    const problem = { at: 'T', outcome: 'rejected' as const, message: 'the cached feed does not verify: x' };
    expect(
      assessHealth(status({ feed: null, problem }), at('2026-11-21T00:00:00Z'), 14 * DAY).problems,
    ).toEqual([{ code: 'no-feed', message: 'the cached feed does not verify: x' }]);
    expect(assessHealth(status({}), at('2026-12-19T23:59:59.999Z'), 60 * DAY).status).toBe('degraded');
    expect(assessHealth(status({}), at('2026-12-20T00:00:00Z'), 60 * DAY)).toEqual({
      status: 'down',
      problems: [
        {
          code: 'feed-expired',
          message: 'the feed in use expired at 2026-12-20T00:00:00Z and no fresher feed was accepted',
        },
      ],
    });
  });

  it('is degraded when stale (past the maximum age, not at it), refused, failing, unaccounted or damaged', () => {
    expect(assessHealth(status({}), at('2026-11-27T00:00:00Z'), 7 * DAY).status).toBe('ok');
    expect(assessHealth(status({}), at('2026-11-27T00:00:00.001Z'), 7 * DAY)).toMatchObject({
      status: 'degraded',
      problems: [
        {
          code: 'feed-stale',
          message: expect.stringMatching(
            /^the newest accepted feed was published at 2026-11-20T00:00:00Z, longer ago than ADVISORY_FEED_MAX_AGE allows/,
          ),
        },
      ],
    });
    const all = assessHealth(
      status({
        lastPull: { at: 'T', outcome: 'rejected', message: 'rollback' },
        lastRefreshError: { at: 'T2', message: 'ENOSPC: write failed' },
        logProblem: 'no checkpoint',
        outbox: { channels: [], pending: 0, failed: 0, damaged: 2 },
      }),
      at('2026-11-21T00:00:00Z'),
      14 * DAY,
    );
    expect(all).toEqual({
      status: 'degraded',
      problems: [
        { code: 'feed-refused', message: 'the feed from the feed host was refused: rollback' },
        { code: 'refresh-failed', message: 'the refresh at T2 failed: ENOSPC: write failed' },
        { code: 'log-unaccounted', message: 'no checkpoint' },
        {
          code: 'alerts-damaged',
          message:
            "2 alert files were damaged and set apart in the outbox's damaged/ folder: those alerts were not sent",
        },
      ],
    });
    expect(
      assessHealth(
        status({ outbox: { channels: [], pending: 0, failed: 0, damaged: 1 } }),
        at('2026-11-21T00:00:00Z'),
        14 * DAY,
      ).problems[0]?.message,
    ).toMatch(/^1 alert file was damaged/);
    // An unreachable live feed needs an operator from the first failed pull, the feed in
    // use serving meanwhile.
    expect(
      assessHealth(
        status({ lastPull: { at: 'T', outcome: 'unreachable', message: 'down' } }),
        at('2026-11-21T00:00:00Z'),
        14 * DAY,
      ).status,
    ).toBe('degraded');
    // Without a feed, a failed refresh still shows, and the status is down.
    expect(
      assessHealth(
        status({ feed: null, lastRefreshError: { at: 'T', message: 'EMFILE' } }),
        at('2026-11-21T00:00:00Z'),
        14 * DAY,
      ),
    ).toMatchObject({ status: 'down', problems: [{ code: 'no-feed' }, { code: 'refresh-failed' }] });
  });

  it('says the feed expires soon within ADVISORY_FEED_EXPIRY_WARNING (10 days, then the default 7), then expired', () => {
    // The feed expires 2026-12-20T00:00:00Z.
    const warned = status({ feedExpiryWarningMs: 10 * DAY });
    expect(assessHealth(warned, at('2026-12-09T23:59:59.999Z'), 60 * DAY)).toEqual({
      status: 'ok',
      problems: [],
    });
    expect(assessHealth(warned, at('2026-12-10T00:00:00Z'), 60 * DAY)).toEqual({
      status: 'degraded',
      problems: [
        {
          code: 'feed-expiring',
          message:
            'the feed in use (2026.11.20) expires at 2026-12-20T00:00:00Z, within 10d (ADVISORY_FEED_EXPIRY_WARNING), and no newer feed was accepted: without one the appliance stops evaluating then',
        },
      ],
    });
    expect(assessHealth(status({}), at('2026-12-12T23:59:59Z'), 60 * DAY).status).toBe('ok');
    expect(assessHealth(status({}), at('2026-12-13T00:00:00Z'), 60 * DAY).problems).toMatchObject([
      { code: 'feed-expiring', message: expect.stringContaining('within 1w (ADVISORY_FEED_EXPIRY_WARNING)') },
    ]);
    // Taken out of use (appliance/feed-keeper.ts): expired, not merely missing.
    const message = 'the feed in use expired at 2026-12-20T00:00:00Z and no fresher feed was accepted';
    const gone = {
      at: 'T',
      outcome: 'rejected' as const,
      message,
      rejection: { reason: 'expired' as const, message },
    };
    expect(
      assessHealth(
        status({ feed: null, problem: gone, expired: gone }),
        at('2026-12-20T00:00:00Z'),
        60 * DAY,
      ),
    ).toEqual({ status: 'down', problems: [{ code: 'feed-expired', message }] });
    // Still expired while the feed host cannot be reached: the expiry is what operators must hear of.
    const unreachable = { at: 'T2', outcome: 'unreachable' as const, message: 'connection refused' };
    expect(
      assessHealth(
        status({ feed: null, problem: unreachable, expired: gone }),
        at('2026-12-21T00:00:00Z'),
        60 * DAY,
      ),
    ).toEqual({ status: 'down', problems: [{ code: 'feed-expired', message }] });
    // Expired, and the newer feed refused: why it was refused is what the operator must fix.
    const rejection = { reason: 'signature-unknown-key' as const, message: 'signed by no trusted key' };
    const refused = { at: 'T3', outcome: 'rejected' as const, message: rejection.message, rejection };
    expect(
      assessHealth(
        status({ feed: null, problem: refused, expired: gone, lastPull: refused }),
        at('2026-12-22T00:00:00Z'),
        60 * DAY,
      ),
    ).toEqual({
      status: 'down',
      problems: [
        { code: 'feed-expired', message },
        {
          code: 'feed-refused',
          message: 'the feed from the feed host was refused: signed by no trusted key',
          rejection,
        },
      ],
    });
  });

  it("carries a refused live feed's rejection, and names a failing alert channel", () => {
    const rejection = { reason: 'rollback' as const, message: 'feed 2026.11.19 is older than 2026.11.20' };
    const failing = [
      { channel: 'webhook' as const, failures: 3, since: '2026-11-20T10:00:00.000Z', lastError: 'HTTP 500' },
    ];
    expect(
      assessHealth(
        status({
          lastPull: { at: 'T', outcome: 'rejected', message: rejection.message, rejection },
          outbox: { channels: ['webhook', 'email'], pending: 2, failed: 0, damaged: 0, failing },
        }),
        at('2026-11-21T00:00:00Z'),
        14 * DAY,
      ),
    ).toEqual({
      status: 'degraded',
      problems: [
        {
          code: 'feed-refused',
          message: 'the feed from the feed host was refused: feed 2026.11.19 is older than 2026.11.20',
          rejection,
        },
        {
          code: 'alerts-failing-webhook',
          channel: 'webhook',
          message:
            'alert delivery by webhook keeps failing since 2026-11-20T10:00:00.000Z: an alert failed 3 attempts, the last: HTTP 500',
        },
      ],
    });
  });

  it('beside the daemon, adds the problems it kept that this process cannot know, each once', () => {
    const kept = {
      at: '2026-11-20T23:00:00.000Z',
      pid: 42,
      problems: [
        { code: 'refresh-failed' as const, message: 'the refresh at T failed: ENOSPC' },
        { code: 'feed-stale' as const, message: 'the daemon says stale' },
      ],
    };
    const now = at('2026-11-27T00:00:00.001Z');
    expect(assessHealth(status({ kept }), now, 7 * DAY)).toEqual({
      status: 'degraded',
      problems: [
        expect.objectContaining({
          code: 'feed-stale',
          message: expect.stringMatching(/^the newest accepted/),
        }),
        { code: 'refresh-failed', message: 'the refresh at T failed: ENOSPC' },
      ],
    });
    expect(assessHealth(status({ kept: null }), now, 30 * DAY).status).toBe('ok');
    // The daemon has no verified feed (it expired there): this check is down too.
    for (const code of ['no-feed', 'feed-expired'] as const) {
      const down = { ...kept, problems: [{ code, message: 'none' }] };
      expect(assessHealth(status({ kept: down }), now, 30 * DAY)).toEqual({
        status: 'down',
        problems: [{ code, message: 'none' }],
      });
    }
    const degraded = { ...kept, problems: [{ code: 'log-unaccounted' as const, message: 'x' }] };
    expect(assessHealth(status({ kept: degraded }), now, 30 * DAY).status).toBe('degraded');
  });

  it('shows an unreachable host from the first failed pull, and a refusal kept through it', () => {
    const now = at('2026-11-21T00:00:00Z');
    const unreachable = { at: 'T2', outcome: 'unreachable' as const, message: 'ECONNREFUSED' };
    const rejection = { reason: 'signature-invalid' as const, message: 'bad' };
    const refused = { at: 'T1', outcome: 'rejected' as const, message: 'bad', rejection };
    expect(assessHealth(status({ lastPull: unreachable, problem: unreachable }), now, 14 * DAY)).toEqual({
      status: 'degraded',
      problems: [{ code: 'feed-unreachable', message: 'the feed host cannot be reached: ECONNREFUSED' }],
    });
    expect(
      assessHealth(status({ lastPull: unreachable, refused }), now, 14 * DAY).problems.map((p) => p.code),
    ).toEqual(['feed-refused', 'feed-unreachable']);
    // A feed directory is named as one, never as a host or "the live feed".
    expect(
      assessHealth(status({ feedSource: 'directory', lastPull: unreachable, refused }), now, 14 * DAY)
        .problems,
    ).toEqual([
      { code: 'feed-refused', message: 'the feed from the feed directory was refused: bad', rejection },
      { code: 'feed-unreachable', message: 'the feed directory cannot be read: ECONNREFUSED' },
    ]);
    expect(
      assessHealth(status({ feedSource: 'http', lastPull: unreachable, refused }), now, 14 * DAY).problems[0]
        ?.message,
    ).toBe('the feed from the feed host was refused: bad');
    // Without any feed, no-feed carries the pull's problem; after an expiry, both show.
    expect(
      assessHealth(status({ feed: null, lastPull: unreachable, problem: unreachable }), now, 14 * DAY)
        .problems,
    ).toEqual([{ code: 'no-feed', message: 'ECONNREFUSED' }]);
    const expired = { at: 'T0', outcome: 'rejected' as const, message: 'expired at X' };
    expect(
      assessHealth(status({ feed: null, expired, lastPull: unreachable }), now, 14 * DAY).problems.map(
        (p) => p.code,
      ),
    ).toEqual(['feed-expired', 'feed-unreachable']);
  });

  it('shows a cache refused at start, with its rejection, and a refusal beside an expiry unless it is the expiry', () => {
    const now = at('2026-11-21T00:00:00Z');
    const rejection = { reason: 'file-hash-mismatch' as const, message: 'a.yaml changed', file: 'a.yaml' };
    const cacheRefused = {
      at: 'T0',
      outcome: 'rejected' as const,
      message: 'the cached feed does not verify: x',
      rejection,
    };
    expect(assessHealth(status({ cacheRefused }), now, 14 * DAY)).toEqual({
      status: 'degraded',
      problems: [
        {
          code: 'cache-refused',
          message:
            'the cached feed does not verify: x (found at T0; it shows until the appliance starts with a cache that verifies)',
          rejection,
        },
      ],
    });
    const { rejection: _, ...bare } = cacheRefused;
    expect(assessHealth(status({ cacheRefused: bare }), now, 14 * DAY).problems[0]).not.toHaveProperty(
      'rejection',
    );
    const expired = { at: 'T0', outcome: 'rejected' as const, message: 'expired at X' };
    const refusedBy = (reason?: 'expired' | 'rollback') => ({
      at: 'T1',
      outcome: 'rejected' as const,
      message: 'no',
      ...(reason ? { rejection: { reason, message: 'no' } } : {}),
    });
    const codes = (fields: Partial<ApplianceStatus>) =>
      assessHealth(status(fields), now, 14 * DAY).problems.map((p) => p.code);
    expect(codes({ feed: null, expired, refused: refusedBy('rollback') })).toEqual([
      'feed-expired',
      'feed-refused',
    ]);
    expect(codes({ feed: null, expired, refused: refusedBy('expired') })).toEqual(['feed-expired']);
    expect(codes({ feed: null, expired, refused: refusedBy() })).toEqual(['feed-expired', 'feed-refused']);
    expect(codes({ refused: refusedBy('expired') })).toEqual(['feed-refused']);
    expect(codes({ feed: null, refused: refusedBy('rollback') })).toEqual(['no-feed']);
  });
});
