import { type RowColumns, unnestRows } from '../../src/db/arrays.ts';
import type { Db } from '../../src/db/database.ts';
import type { JobKind } from '../../src/db/types.ts';

/**
 * Jobs as a test queues them, of any kind and payload (the application queues push
 * deliveries only through notifications/outbox.ts): one statement of one array per column
 * (src/db/arrays.ts), a key queued before left as it is, in the caller's tenant scope.
 */
export interface NewJob {
  tenant_id: string;
  id: string;
  kind: JobKind;
  key: string;
  payload: Record<string, unknown>;
  max_attempts: number;
}

const jobColumns: RowColumns<Omit<NewJob, 'payload'> & { payload: string }> = [
  ['tenant_id', 'uuid'],
  ['id', 'uuid'],
  ['kind', 'text'],
  ['key', 'text'],
  ['payload', 'jsonb'],
  ['max_attempts', 'integer'],
];

export async function enqueueJobs(db: Db, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await db
    .insertInto('jobs')
    .columns(jobColumns.map(([column]) => column))
    .expression(
      unnestRows(
        jobs.map((job) => ({ ...job, payload: JSON.stringify(job.payload) })),
        jobColumns,
      ),
    )
    .onConflict((oc) => oc.columns(['tenant_id', 'kind', 'key']).doNothing())
    .execute();
}
