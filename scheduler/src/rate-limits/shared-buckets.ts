import { sql } from 'kysely';
import type { BucketRule, RateLimits } from '../config.ts';
import type { Db } from '../db/database.ts';
import { asTenant } from '../db/tenant-scope.ts';
import {
  type BucketScope,
  type RateAnswer,
  type RateLimiter,
  type RateRefusal,
  refusal,
  tokensAt,
} from './buckets.ts';

/**
 * The buckets kept in the database (RATE_LIMIT_STORE=database), shared by every API
 * process: one row per tenant and per user in `rate_limit_buckets` (migration 0030),
 * behind the tenant wall like every tenant's row. A token is taken by one statement, an
 * upsert that refills the bucket and takes the token only where one is there: it locks the
 * row, so concurrent requests through any number of processes take one after another and
 * never more than the bucket holds. The user's bucket goes first; when the tenant's then
 * has no token, the user's is given back (the two statements are not one transaction, so
 * a request of that user racing in between may be refused for it, never let through
 * beyond either bucket). A refusal reads both buckets for Retry-After. The table holds one
 * row per user who sent a request and per tenant: no sweep is needed (a full bucket and
 * none are the same), and a tenant's rows go with the tenant.
 */
export class DatabaseRateLimiter implements RateLimiter {
  constructor(
    private readonly db: Db,
    readonly limits: RateLimits,
  ) {}

  take(tenantId: string, userId: string, nowMs: number): Promise<RateAnswer> {
    return asTenant(tenantId, async (): Promise<RateAnswer> => {
      const now = new Date(nowMs).toISOString();
      if (!(await this.takeOne(tenantId, 'user', userId, now))) return this.refused(tenantId, userId, nowMs);
      if (await this.takeOne(tenantId, 'tenant', tenantId, now)) return { allowed: true };
      await this.giveBack(tenantId, userId);
      return this.refused(tenantId, userId, nowMs);
    });
  }

  /** Whether a token was taken from the bucket (created full, less the token, on its first request). */
  private async takeOne(
    tenantId: string,
    scope: BucketScope,
    subject: string,
    now: string,
  ): Promise<boolean> {
    const { burst, perSecond } = this.limits[scope];
    const refilled = sql`least(${burst}::float8, b.tokens + greatest(0, extract(epoch FROM ${now}::timestamptz - b.updated_at))::float8 * ${perSecond}::float8)`;
    const { rows } = await sql<{ tokens: number }>`
      INSERT INTO rate_limit_buckets AS b (tenant_id, scope, subject, tokens, capacity, updated_at)
      VALUES (${tenantId}, ${scope}, ${subject}, ${burst - 1}::float8, ${burst}::float8, ${now}::timestamptz)
      ON CONFLICT (tenant_id, scope, subject) DO UPDATE
         SET tokens = ${refilled} - 1, capacity = ${burst}::float8,
             updated_at = greatest(b.updated_at, ${now}::timestamptz)
       WHERE ${refilled} >= 1
      RETURNING b.tokens`.execute(this.db);
    return rows.length > 0;
  }

  /** The user's token back, when the tenant had none: never above the bucket's capacity. */
  private async giveBack(tenantId: string, userId: string): Promise<void> {
    await sql`
      UPDATE rate_limit_buckets SET tokens = least(capacity, tokens + 1)
       WHERE tenant_id = ${tenantId} AND scope = 'user' AND subject = ${userId}`.execute(this.db);
  }

  private async refused(tenantId: string, userId: string, nowMs: number): Promise<RateRefusal> {
    const { rows } = await sql<{ scope: BucketScope; tokens: number; updated_ms: number }>`
      SELECT scope, tokens, (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms FROM rate_limit_buckets
       WHERE tenant_id = ${tenantId}
         AND ((scope = 'user' AND subject = ${userId}) OR (scope = 'tenant' AND subject = ${tenantId}))`.execute(
      this.db,
    );
    const short = rows
      .map((row) => {
        const rule: BucketRule = this.limits[row.scope];
        return {
          scope: row.scope,
          tokens: tokensAt(Number(row.tokens), Number(row.updated_ms), nowMs, rule),
        };
      })
      .filter((bucket) => bucket.tokens < 1);
    // Refilled meanwhile by the other's give-back or the clock: a second's wait is the least.
    return short.length > 0
      ? refusal(short, this.limits)
      : refusal([{ scope: 'user', tokens: 0 }], this.limits);
  }
}
