import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { LimitAnswer, SubmitLimit, SubmitLimiter } from '../deps.ts';

/**
 * The submit limit counted in the database, shared by every API process
 * (FORM_SUBMIT_LIMIT_STORE=database): the same sliding window as the in-process one, at
 * most `max` hits per key within any `windowMs`. One key's hits are counted under a
 * transaction-long advisory lock on the key, so concurrent submissions through different
 * processes are counted one after another. A key's expired hits go at its next hit; every
 * `sweepEvery` hits, this process removes every expired hit, so the table holds one window
 * of hits at most (client addresses and slugs: nothing older is kept).
 */
export class DatabaseSubmitLimiter implements SubmitLimiter {
  private hitsSinceSweep = 0;

  constructor(
    private readonly db: Db,
    readonly limit: SubmitLimit,
    private readonly sweepEvery = 500,
  ) {}

  async take(key: string, now: number): Promise<LimitAnswer> {
    const since = new Date(now - this.limit.windowMs).toISOString();
    if (++this.hitsSinceSweep >= this.sweepEvery) {
      // On its own, before the key's transaction: a sweep inside it would lock rows in
      // another order than a concurrent key's delete, and the two could deadlock.
      this.hitsSinceSweep = 0;
      await this.db.deleteFrom('form_submit_hits').where('at', '<=', since).execute();
    }
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
      await trx.deleteFrom('form_submit_hits').where('key', '=', key).where('at', '<=', since).execute();
      const hits = await trx
        .selectFrom('form_submit_hits')
        .select('at')
        .where('key', '=', key)
        .orderBy('at')
        .limit(this.limit.max)
        .execute();
      if (hits.length >= this.limit.max) {
        // The oldest hit in the window leaves it first.
        return { allowed: false, retryAfterMs: Date.parse(hits[0]?.at ?? '') + this.limit.windowMs - now };
      }
      await trx
        .insertInto('form_submit_hits')
        .values({ key, at: new Date(now).toISOString() })
        .execute();
      return { allowed: true };
    });
  }
}
