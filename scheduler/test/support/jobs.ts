import type { Db } from '../../src/db/database.ts';
import type { JobKind } from '../../src/db/types.ts';

/**
 * Jobs as a test queues them, of any kind and payload (the application queues push
 * deliveries only through notifications/outbox.ts): one statement, a key queued before
 * left as it is, in the caller's tenant scope.
 */
export interface NewJob {
  tenant_id: string;
  id: string;
  kind: JobKind;
  key: string;
  payload: Record<string, unknown>;
  max_attempts: number;
}

export async function enqueueJobs(db: Db, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await db
    .insertInto('jobs')
    .values(jobs.map((job) => ({ ...job, payload: JSON.stringify(job.payload) })))
    .onConflict((oc) => oc.columns(['tenant_id', 'kind', 'key']).doNothing())
    .execute();
}
