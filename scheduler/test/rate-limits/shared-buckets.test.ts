import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { RateLimits } from '../../src/config.ts';
import { DatabaseRateLimiter } from '../../src/rate-limits/shared-buckets.ts';
import { useTestDatabase } from '../support/database.ts';
import { bareTenant } from '../support/jobs.ts';

/**
 * The buckets kept in the database (RATE_LIMIT_STORE=database) on their own: what the
 * rows hold after each take, and many takes at once through the pool (20 connections on
 * PostgreSQL, where they truly run side by side; one session taking turns on PGlite). The
 * HTTP behaviour, the same as the in-process store's, is in hook.test.ts.
 */
const handle = useTestDatabase();
const t0 = Date.parse('2030-01-01T12:00:00Z');

const user = () => randomUUID().replaceAll('-', '');

async function rows(tenantId: string) {
  const { rows } = await sql<{
    scope: string;
    subject: string;
    tokens: number;
    capacity: number;
    at: string;
  }>`
    SELECT scope, subject, tokens, capacity, to_char(updated_at AT TIME ZONE 'UTC', 'HH24:MI:SS.MS') AS at
      FROM rate_limit_buckets WHERE tenant_id = ${tenantId} ORDER BY scope, subject`.execute(handle.owner);
  return rows.map((row) => ({ ...row, tokens: Number(row.tokens), capacity: Number(row.capacity) }));
}

describe('the buckets in the database', () => {
  it('keeps one row per tenant and per user, full less what was taken, as of the last take', async () => {
    const tenant = await bareTenant(handle.owner);
    const ann = user();
    const limiter = new DatabaseRateLimiter(handle.db, {
      tenant: { burst: 10, perSecond: 2 },
      user: { burst: 3, perSecond: 1 },
    });
    expect(await limiter.take(tenant, ann, t0)).toEqual({ allowed: true });
    expect(await limiter.take(tenant, ann, t0 + 250)).toEqual({ allowed: true });
    expect(await rows(tenant)).toEqual([
      { scope: 'tenant', subject: tenant, tokens: 8.5, capacity: 10, at: '12:00:00.250' },
      { scope: 'user', subject: ann, tokens: 1.25, capacity: 3, at: '12:00:00.250' },
    ]);
    // A process whose clock is behind adds no tokens and does not move the bucket's time back.
    expect(await limiter.take(tenant, ann, t0 - 60_000)).toEqual({ allowed: true });
    expect(await limiter.take(tenant, ann, t0 - 60_000)).toEqual({
      allowed: false,
      scope: 'user',
      retryAfterSeconds: 1,
    });
    expect(await rows(tenant)).toEqual([
      { scope: 'tenant', subject: tenant, tokens: 7.5, capacity: 10, at: '12:00:00.250' },
      { scope: 'user', subject: ann, tokens: 0.25, capacity: 3, at: '12:00:00.250' },
    ]);
  });

  it('gives the user’s token back when the tenant’s bucket refuses, and says the tenant’s wait', async () => {
    const tenant = await bareTenant(handle.owner);
    const [ann, bob] = [user(), user()];
    const limiter = new DatabaseRateLimiter(handle.db, {
      tenant: { burst: 2, perSecond: 0.25 },
      user: { burst: 2, perSecond: 1 },
    });
    expect(await limiter.take(tenant, ann, t0)).toEqual({ allowed: true });
    expect(await limiter.take(tenant, ann, t0)).toEqual({ allowed: true });
    expect(await limiter.take(tenant, bob, t0)).toEqual({
      allowed: false,
      scope: 'tenant',
      retryAfterSeconds: 4,
    });
    const users = [
      { scope: 'user', subject: ann, tokens: 0, capacity: 2, at: '12:00:00.000' },
      { scope: 'user', subject: bob, tokens: 2, capacity: 2, at: '12:00:00.000' },
    ].sort((a, b) => a.subject.localeCompare(b.subject));
    expect(await rows(tenant)).toEqual([
      { scope: 'tenant', subject: tenant, tokens: 0, capacity: 2, at: '12:00:00.000' },
      ...users,
    ]);
    // Both short: the longer wait is said (the tenant's 4 s against the user's 1 s).
    expect(await limiter.take(tenant, ann, t0)).toEqual({
      allowed: false,
      scope: 'tenant',
      retryAfterSeconds: 4,
    });
  });

  it('follows a change of the configured size: never above the new burst', async () => {
    const tenant = await bareTenant(handle.owner);
    const ann = user();
    const big: RateLimits = { tenant: { burst: 100, perSecond: 1 }, user: { burst: 50, perSecond: 1 } };
    expect(await new DatabaseRateLimiter(handle.db, big).take(tenant, ann, t0)).toEqual({ allowed: true });
    const small: RateLimits = { tenant: { burst: 5, perSecond: 1 }, user: { burst: 2, perSecond: 1 } };
    expect(await new DatabaseRateLimiter(handle.db, small).take(tenant, ann, t0)).toEqual({ allowed: true });
    expect((await rows(tenant)).map((row) => [row.scope, row.tokens, row.capacity])).toEqual([
      ['tenant', 4, 5],
      ['user', 1, 2],
    ]);
  });

  it(
    'lets exactly the bucket’s tokens through when many requests race for them',
    async () => {
      const tenant = await bareTenant(handle.owner);
      const users = [user(), user(), user(), user(), user()];
      const limiter = new DatabaseRateLimiter(handle.db, {
        tenant: { burst: 25, perSecond: 0.001 },
        user: { burst: 8, perSecond: 0.001 },
      });
      // 5 users, 20 requests each, all at once: each user may have 8, the tenant only 25.
      const answers = await Promise.all(
        users.flatMap((id) =>
          Array.from({ length: 20 }, () => limiter.take(tenant, id, t0).then((a) => ({ id, a }))),
        ),
      );
      const allowed = answers.filter(({ a }) => a.allowed);
      expect(allowed).toHaveLength(25);
      for (const id of users) expect(allowed.filter((x) => x.id === id).length).toBeLessThanOrEqual(8);
      const after = await rows(tenant);
      expect(after.find((row) => row.scope === 'tenant')?.tokens).toBe(0);
      // Every token a user lost went through: the ones taken for a refused request came back.
      for (const id of users) {
        const left = after.find((row) => row.subject === id)?.tokens;
        expect(left, id).toBe(8 - allowed.filter((x) => x.id === id).length);
      }
    },
    100 * 200,
  );
});
