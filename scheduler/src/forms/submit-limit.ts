import type { LimitAnswer, SubmitLimit, SubmitLimiter } from '../deps.ts';

/**
 * A sliding-window limit kept in this process (the contract counts per process): at most
 * `max` hits per key within any `windowMs`. Each key keeps the times of its last hits
 * (never more than `max`), and at most `maxKeys` keys are kept: past that, keys whose
 * hits have all expired go first, then the least recently hit. So memory is bounded by
 * max x maxKeys whatever the number of clients; a key pushed out by a flood of others
 * starts afresh, which errs on the side of letting a real customer through.
 */
export class SlidingWindowLimiter implements SubmitLimiter {
  /** Map order is recency: a key is re-inserted on every hit, refused ones included. */
  private readonly hits = new Map<string, number[]>();

  constructor(
    readonly limit: SubmitLimit,
    readonly maxKeys = 50_000,
  ) {}

  get size(): number {
    return this.hits.size;
  }

  /** Counts a hit for `key` at `now` (ms) unless the window is full. */
  take(key: string, now: number): LimitAnswer {
    const since = now - this.limit.windowMs;
    const times = (this.hits.get(key) ?? []).filter((at) => at > since);
    this.hits.delete(key);
    this.hits.set(key, times);
    if (times.length >= this.limit.max) {
      // The oldest hit in the window leaves it first.
      return { allowed: false, retryAfterMs: (times[0] ?? now) + this.limit.windowMs - now };
    }
    times.push(now);
    if (this.hits.size > this.maxKeys) this.evict(since);
    return { allowed: true };
  }

  /** Down to 90 % of maxKeys at once, so a flood of new keys sweeps once per many hits. */
  private evict(since: number): void {
    const target = Math.floor(this.maxKeys * 0.9);
    for (const [key, times] of this.hits) {
      if ((times.at(-1) ?? 0) <= since) this.hits.delete(key);
    }
    for (const key of this.hits.keys()) {
      if (this.hits.size <= target) break;
      this.hits.delete(key);
    }
  }
}
