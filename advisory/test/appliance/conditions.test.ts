import { describe, expect, it } from 'vitest';
import { conditionChanges } from '../../src/appliance/conditions.ts';
import type { Health } from '../../src/appliance/health.ts';

const T1 = new Date('2026-11-26T01:00:00Z');
const T2 = new Date('2026-11-26T02:00:00Z');
const health = (...codes: [Health['problems'][number]['code'], string][]): Health => ({
  status: codes.length ? 'degraded' : 'ok',
  problems: codes.map(([code, message]) => ({ code, message })),
});

describe('conditionChanges', () => {
  it('starts a condition once, keeps it while it holds, and clears it once', () => {
    const first = conditionChanges({}, health(['feed-refused', 'rollback']), T1);
    expect(first).toEqual({
      changes: [{ code: 'feed-refused', state: 'started', since: T1.toISOString(), message: 'rollback' }],
      active: { 'feed-refused': { since: T1.toISOString(), message: 'rollback' } },
    });
    // Still refused (even with another wording): no news, the start is kept.
    const again = conditionChanges(first.active, health(['feed-refused', 'bad signature']), T2);
    expect(again).toEqual({ changes: [], active: first.active });
    const cleared = conditionChanges(again.active, health(), T2);
    expect(cleared).toEqual({
      changes: [{ code: 'feed-refused', state: 'cleared', since: T1.toISOString(), message: 'rollback' }],
      active: {},
    });
  });

  it('alerts only the conditions an operator must hear of, each once', () => {
    const { changes, active } = conditionChanges(
      {},
      health(
        ['refresh-failed', 'ENOSPC'],
        ['feed-stale', 'old'],
        ['feed-stale', 'old twice'],
        ['alerts-damaged', '1'],
      ),
      T1,
    );
    expect(changes.map((c) => c.code)).toEqual(['feed-stale', 'alerts-damaged']);
    expect(Object.keys(active)).toEqual(['feed-stale', 'alerts-damaged']);
  });

  it("carries a refusal's rejection and a channel, from the start to the clearing", () => {
    const rejection = { reason: 'signature-invalid' as const, message: 'bad signature' };
    const started = conditionChanges(
      {},
      {
        status: 'degraded',
        problems: [
          {
            code: 'feed-refused',
            message: 'the feed from the feed host was refused: bad signature',
            rejection,
          },
          { code: 'alerts-failing-email', message: 'mail fails', channel: 'email' },
        ],
      },
      T1,
    );
    expect(started.changes).toEqual([
      {
        code: 'feed-refused',
        state: 'started',
        since: T1.toISOString(),
        message: 'the feed from the feed host was refused: bad signature',
        rejection,
      },
      {
        code: 'alerts-failing-email',
        state: 'started',
        since: T1.toISOString(),
        message: 'mail fails',
        channel: 'email',
      },
    ]);
    expect(conditionChanges(started.active, health(), T2).changes).toEqual([
      { ...started.changes[0], state: 'cleared' },
      { ...started.changes[1], state: 'cleared' },
    ]);
  });

  it('turns an expiring feed into an expired one without a "cleared" alert; a newer feed clears either', () => {
    const expiring = conditionChanges({}, health(['feed-expiring', 'expires soon']), T1);
    expect(expiring.changes.map((c) => [c.code, c.state])).toEqual([['feed-expiring', 'started']]);
    const expired = conditionChanges(expiring.active, health(['feed-expired', 'expired']), T2);
    expect(expired.changes).toEqual([
      { code: 'feed-expired', state: 'started', since: T2.toISOString(), message: 'expired' },
    ]);
    expect(expired.active).toEqual({ 'feed-expired': { since: T2.toISOString(), message: 'expired' } });
    expect(conditionChanges(expired.active, health(), T2).changes.map((c) => [c.code, c.state])).toEqual([
      ['feed-expired', 'cleared'],
    ]);
    expect(conditionChanges(expiring.active, health(), T2).changes.map((c) => [c.code, c.state])).toEqual([
      ['feed-expiring', 'cleared'],
    ]);
  });
});
