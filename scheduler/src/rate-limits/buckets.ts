import type { BucketRule, RateLimits } from '../config.ts';

/**
 * The API's rate limits: token buckets, one per tenant and one per user. A bucket holds
 * at most `burst` tokens and gains `perSecond` tokens a second up to that; each request
 * takes one token from its user's bucket and one from its tenant's, or neither: when
 * either is empty the request is refused (429 RATE_LIMITED) and takes nothing. The
 * tenant's bucket is what one tenant's scripts share, so they cannot take more of the
 * server than it allows; the user's bucket keeps one user's script from using up the
 * tenant's before the others get a turn.
 */
export type BucketScope = keyof RateLimits;

/** Requests let through or refused; a refusal names the emptier bucket and when to try again. */
export type RateAnswer =
  | { allowed: true }
  | { allowed: false; scope: BucketScope; retryAfterSeconds: number };

/** Where the buckets are kept: this process, or the database shared by every process. */
export interface RateLimiter {
  readonly limits: RateLimits;
  /** Takes a token from `userId`'s bucket and from `tenantId`'s at `nowMs`, or none. */
  take(tenantId: string, userId: string, nowMs: number): RateAnswer | Promise<RateAnswer>;
}

/** A bucket's tokens at `nowMs`, holding `tokens` at `updatedMs` (a clock gone back adds none). */
export function tokensAt(tokens: number, updatedMs: number, nowMs: number, rule: BucketRule): number {
  return Math.min(rule.burst, tokens + (Math.max(0, nowMs - updatedMs) * rule.perSecond) / 1000);
}

/**
 * Whole seconds until a bucket holding `tokens` has one again: at least 1 (Retry-After
 * is whole seconds, and 0 would invite an immediate retry). A hair of rounding below a
 * whole number is not a second more.
 */
export function secondsUntilToken(tokens: number, rule: BucketRule): number {
  return Math.max(1, Math.ceil((1 - tokens) / rule.perSecond - 1e-9));
}

export type RateRefusal = Extract<RateAnswer, { allowed: false }>;

/** The refusal for the buckets short of a token (at least one): the longer wait, and its bucket. */
export function refusal(short: { scope: BucketScope; tokens: number }[], limits: RateLimits): RateRefusal {
  const waits = short.map(({ scope, tokens }) => ({
    allowed: false as const,
    scope,
    retryAfterSeconds: secondsUntilToken(tokens, limits[scope]),
  }));
  return waits.reduce((longest, wait) =>
    wait.retryAfterSeconds > longest.retryAfterSeconds ? wait : longest,
  );
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/**
 * The buckets kept in this process (RATE_LIMIT_STORE=process, the default): each process
 * of several counts alone, so N processes let a tenant through N times the rate. A
 * request takes from both buckets at once or from neither. At most `maxBuckets` are kept:
 * past that, buckets that have filled up again go first (a full bucket is the same as
 * none), then the least recently used; one pushed out starts full, which errs on the side
 * of letting a real user through.
 */
export class ProcessRateLimiter implements RateLimiter {
  /** Map order is recency: a bucket is re-inserted on every request, refused ones included. */
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly limits: RateLimits,
    readonly maxBuckets = 100_000,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  take(tenantId: string, userId: string, nowMs: number): RateAnswer {
    const keys = { tenant: `tenant ${tenantId}`, user: `user ${tenantId} ${userId}` };
    const levels = {
      tenant: this.level(keys.tenant, this.limits.tenant, nowMs),
      user: this.level(keys.user, this.limits.user, nowMs),
    };
    const short = (['user', 'tenant'] as const)
      .filter((scope) => levels[scope] < 1)
      .map((scope) => ({ scope, tokens: levels[scope] }));
    if (short.length > 0) return refusal(short, this.limits);
    for (const scope of ['tenant', 'user'] as const) {
      this.buckets.set(keys[scope], { tokens: levels[scope] - 1, updatedMs: nowMs });
    }
    if (this.buckets.size > this.maxBuckets) this.evict(nowMs);
    return { allowed: true };
  }

  /** The bucket's tokens now, moved to the end of the recency order (a fresh one is full). */
  private level(key: string, rule: BucketRule, nowMs: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return rule.burst;
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    return tokensAt(bucket.tokens, bucket.updatedMs, nowMs, rule);
  }

  /** Down to 90 % of maxBuckets at once, so a flood of new users sweeps once per many requests. */
  private evict(nowMs: number): void {
    const target = Math.floor(this.maxBuckets * 0.9);
    for (const [key, bucket] of this.buckets) {
      const rule = key.startsWith('tenant ') ? this.limits.tenant : this.limits.user;
      if (tokensAt(bucket.tokens, bucket.updatedMs, nowMs, rule) >= rule.burst) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= target) break;
      this.buckets.delete(key);
    }
  }
}
