import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { JobKind } from '../db/types.ts';
import { withTraceContext } from '../tracing/context.ts';

/** Work for the queue: what kind, under which key (unique per tenant and kind), with what. */
export interface JobRequest {
  kind: JobKind;
  key: string;
  payload: Record<string, unknown>;
  /** Tries before the job is given up. */
  maxAttempts: number;
}

/**
 * Each (kind, key) once, the last request of it winning, in (kind, key) order by code
 * unit: the order completeJobs locks the rows in, so that no two transactions wait for
 * each other in a circle.
 */
export function inLockOrder(jobs: readonly JobRequest[]): JobRequest[] {
  const unique = new Map<string, JobRequest>();
  for (const job of jobs) unique.set(`${job.kind}\u0000${job.key}`, job);
  return [...unique.values()].sort((a, b) =>
    a.kind === b.kind ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.kind < b.kind ? -1 : 1,
  );
}

/**
 * Makes sure a run of each job starts after this transaction commits, in the caller's
 * transaction: a new key is queued, due now; a finished job of the key (done or given up)
 * is due again with fresh tries; a waiting one keeps its time (it runs anyway, and a
 * retry's wait is not cut short); one a worker holds now, or held until its lease ran
 * out without a record of the run, runs once more after that run (`run_again`, migration
 * 0019), because that run may have read its work before this transaction's work
 * committed. One statement, whatever the number of jobs.
 *
 * With tracing on, each payload carries the queuing trace's `traceparent`
 * (src/tracing/context.ts), a queued job's run joining the latest request's trace.
 */
export async function queueJobRuns(db: Db, tenantId: string, jobs: readonly JobRequest[]): Promise<void> {
  const list = inLockOrder(jobs);
  if (list.length === 0) return;
  await sql`
    INSERT INTO jobs (tenant_id, id, kind, key, payload, max_attempts)
    SELECT ${tenantId}::uuid, gen_random_uuid(), r.kind, r.key, r.payload, r.max_attempts
      FROM unnest(${list.map((j) => j.kind)}::text[], ${list.map((j) => j.key)}::text[],
                  ${list.map((j) => JSON.stringify(withTraceContext(j.payload)))}::jsonb[],
                  ${list.map((j) => j.maxAttempts)}::integer[]) AS r(kind, key, payload, max_attempts)
    ON CONFLICT (tenant_id, kind, key) DO UPDATE SET
      status = 'pending',
      payload = CASE WHEN EXCLUDED.payload ? 'traceparent'
                     THEN jobs.payload || jsonb_build_object('traceparent', EXCLUDED.payload->'traceparent')
                     ELSE jobs.payload END,
      finished_at = NULL,
      attempts = CASE WHEN jobs.status = 'pending' THEN jobs.attempts ELSE 0 END,
      run_at = CASE WHEN jobs.status = 'pending' THEN jobs.run_at ELSE now() END,
      last_error = CASE WHEN jobs.status = 'pending' THEN jobs.last_error END,
      run_again = jobs.run_again OR (jobs.status = 'pending' AND jobs.locked_until IS NOT NULL)`.execute(db);
}
