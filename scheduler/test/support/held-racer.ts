import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { inject } from 'vitest';
import type { Db } from '../../src/db/database.ts';

/**
 * A race made to happen every time: `racer` writes in a transaction of the owner's that
 * stays open while `request` starts and reaches the rows the racer holds; then the racer
 * commits. On PostgreSQL the request waits on the racer's row locks and meets its changes
 * as they commit (a key it checks may be gone by then); on the embedded database it waits
 * for the one session and then reads what the racer left.
 */
export async function raceAgainst(
  owner: Db,
  racer: (trx: Db) => Promise<unknown>,
  request: () => Promise<LightMyRequestResponse>,
  holdMs = 300,
): Promise<LightMyRequestResponse> {
  let answer: Promise<LightMyRequestResponse> | undefined;
  await owner.transaction().execute(async (trx) => {
    await racer(trx);
    answer = request();
    await new Promise((resolve) => setTimeout(resolve, holdMs));
  });
  if (!answer) throw new Error('the request never started');
  return answer;
}

/**
 * Resolves once another session of this database waits on a lock (PostgreSQL's
 * `pg_stat_activity`), or once `request` has settled without ever waiting. Only for
 * PostgreSQL runs: PGlite has one session, so a second request there queues for it whole
 * and no statement of it runs until the first transaction ends; there is nothing to wait
 * for. Polls through the owner's pool, which is not the one the holder's transaction uses.
 */
export async function untilAnotherSessionWaitsOnALock(owner: Db, request: Promise<unknown>): Promise<void> {
  if (inject('testDb') !== 'postgres') return;
  let settled = false;
  void request.finally(() => {
    settled = true;
  });
  while (!settled) {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(owner);
    if ((rows[0]?.waiting ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
