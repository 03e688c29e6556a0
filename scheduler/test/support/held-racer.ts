import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { inject } from 'vitest';
import type { Db } from '../../src/db/database.ts';

/**
 * A race made to happen every time: `racer` writes in a transaction of the owner's that
 * stays open while `request` starts and reaches the rows the racer holds; then the racer
 * commits. On PostgreSQL the transaction stays open until the request waits on one of the
 * racer's locks (or has settled without ever needing one), and the request then meets the
 * racer's changes as they commit (a key it checks may be gone by then). On the embedded
 * database the request cannot run a statement before the racer's transaction ends (one
 * session, lent whole), so there is nothing to hold the transaction open for: it commits
 * at once, and the request reads what the racer left. Neither waits for a stretch of time.
 */
export async function raceAgainst(
  owner: Db,
  racer: (trx: Db) => Promise<unknown>,
  request: () => Promise<LightMyRequestResponse>,
): Promise<LightMyRequestResponse> {
  let answer: Promise<LightMyRequestResponse> | undefined;
  await owner.transaction().execute(async (trx) => {
    await racer(trx);
    answer = request();
    await untilAnotherSessionWaitsOnALock(owner, answer);
  });
  if (!answer) throw new Error('the request never started');
  return answer;
}

/**
 * Resolves once another session of this database waits on a lock (PostgreSQL's
 * `pg_stat_activity`), or once `request` has settled without ever waiting. Only for
 * PostgreSQL runs: PGlite has one session, so a second request there queues for it whole
 * and no statement of it runs until the first transaction ends; there is nothing to wait
 * for. Polls through the owner's pool, whose second connection is free while a holder's
 * transaction takes the first (raceAgainst); the test's timeout bounds the wait.
 */
export async function untilAnotherSessionWaitsOnALock(owner: Db, request: Promise<unknown>): Promise<void> {
  if (inject('testDb') !== 'postgres') return;
  let settled = false;
  const settle = () => {
    settled = true;
  };
  request.then(settle, settle);
  while (!settled) {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(owner);
    if ((rows[0]?.waiting ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
