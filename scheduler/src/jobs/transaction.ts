import type { Deps } from '../deps.ts';

/**
 * Runs `work` in one transaction with a `Deps` whose `db` is that transaction, so that a
 * change and the work it queues (notifications and their deliveries: the transactional
 * outbox) commit together or not at all; then wakes this process's job worker. Inside,
 * use only the `Deps` given: the embedded database has one session, which the
 * transaction holds until it ends.
 */
export async function inTransaction<T>(deps: Deps, work: (tx: Deps) => Promise<T>): Promise<T> {
  const result = await deps.db.transaction().execute((trx) => work({ ...deps, db: trx }));
  deps.jobs.kick();
  return result;
}
