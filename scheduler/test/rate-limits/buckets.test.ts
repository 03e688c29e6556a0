import { describe, expect, it } from 'vitest';
import type { RateLimits } from '../../src/config.ts';
import { ProcessRateLimiter, secondsUntilToken, tokensAt } from '../../src/rate-limits/buckets.ts';

/** The token bucket's arithmetic, and the buckets kept in this process (RATE_LIMIT_STORE=process). */
const limits: RateLimits = { tenant: { burst: 10, perSecond: 2 }, user: { burst: 3, perSecond: 0.5 } };

describe('a bucket', () => {
  it('gains perSecond tokens a second up to its burst, and nothing from a clock gone back', () => {
    const rule = limits.user;
    expect(tokensAt(0, 0, 1000, rule)).toBe(0.5);
    expect(tokensAt(1, 0, 3000, rule)).toBe(2.5);
    expect(tokensAt(1, 0, 60_000, rule)).toBe(3);
    expect(tokensAt(1, 5000, 0, rule)).toBe(1);
  });

  it('says the whole seconds until its next token: at least one, no second for a rounding hair', () => {
    expect(secondsUntilToken(0, limits.user)).toBe(2);
    expect(secondsUntilToken(0.25, limits.user)).toBe(2);
    expect(secondsUntilToken(0.5, limits.user)).toBe(1);
    expect(secondsUntilToken(0.99, limits.tenant)).toBe(1);
    expect(secondsUntilToken(0, { burst: 1, perSecond: 100 })).toBe(1);
    // 0.1 a second: 0.7 tokens short is 7 s, though 0.7 / 0.1 is 6.999999999999999 in floating point.
    expect(secondsUntilToken(0.3, { burst: 1, perSecond: 0.1 })).toBe(7);
    expect(secondsUntilToken(0.35, { burst: 1, perSecond: 0.1 })).toBe(7);
  });
});

describe('the buckets kept in this process', () => {
  it('takes from the user’s and the tenant’s bucket, or from neither', () => {
    const limiter = new ProcessRateLimiter(limits);
    for (let i = 0; i < 3; i++) expect(limiter.take('t1', 'ann', 0)).toEqual({ allowed: true });
    expect(limiter.take('t1', 'ann', 0)).toEqual({ allowed: false, scope: 'user', retryAfterSeconds: 2 });
    for (let i = 0; i < 3; i++) expect(limiter.take('t1', 'bob', 0)).toEqual({ allowed: true });
    for (let i = 0; i < 3; i++) expect(limiter.take('t1', 'cy', 0)).toEqual({ allowed: true });
    expect(limiter.take('t1', 'dee', 0)).toEqual({ allowed: true });
    expect(limiter.take('t1', 'dee', 0)).toEqual({ allowed: false, scope: 'tenant', retryAfterSeconds: 1 });
    // A second later the tenant has 2 tokens again; dee has 1.5 of her own.
    expect(limiter.take('t1', 'dee', 1000)).toEqual({ allowed: true });
    // Both short: the longer wait is said (the user's 2 s against the tenant's 1 s).
    expect(limiter.take('t1', 'ann', 1000)).toEqual({ allowed: false, scope: 'user', retryAfterSeconds: 1 });
    expect(limiter.take('t2', 'ann', 0)).toEqual({ allowed: true });
  });

  it('keeps at most maxBuckets: full ones go first, then the least recently used, which start full', () => {
    const roomy: RateLimits = { tenant: { burst: 1000, perSecond: 1 }, user: { burst: 3, perSecond: 0.5 } };
    const limiter = new ProcessRateLimiter(roomy, 10);
    for (let i = 0; i < 3; i++) limiter.take('t1', 'ann', 0);
    for (let n = 1; n <= 8; n++) limiter.take('t1', `u${n}`, 0);
    expect(limiter.size).toBe(10);
    // 3 s later u1..u8 are full again (2 + 1.5), ann is not (1.5): one more bucket sweeps the full ones.
    limiter.take('t1', 'new', 3000);
    expect(limiter.size).toBe(3);
    expect(limiter.take('t1', 'ann', 3000)).toEqual({ allowed: true });
    expect(limiter.take('t1', 'ann', 3000)).toEqual({ allowed: false, scope: 'user', retryAfterSeconds: 1 });
    // A flood of users that are not full: the least recently used go, down to 90 %.
    for (let n = 1; n <= 8; n++) limiter.take('t1', `flood${n}`, 3000);
    expect(limiter.size).toBe(9);
    // ann was among them: her bucket starts full again, which errs on letting her through.
    for (let i = 0; i < 3; i++) expect(limiter.take('t1', 'ann', 3000)).toEqual({ allowed: true });
  });
});
