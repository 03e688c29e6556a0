import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { JobKind, JobStatus } from '../db/types.ts';

/** A job a worker holds: leased, its attempt counted. */
export interface ClaimedJob {
  tenant_id: string;
  id: string;
  kind: JobKind;
  payload: Record<string, unknown>;
  /** This attempt's number, from 1. */
  attempts: number;
  max_attempts: number;
}

export interface ClaimOptions {
  worker: string;
  leaseMs: number;
  batch: number;
  perTenant: number;
  /** Tenants this worker has enough of in hand: none of theirs this time. */
  busy: readonly string[];
}

/** Leases up to `batch` due jobs across tenants, tenant by tenant (migration 0007). */
export async function claimJobs(db: Db, options: ClaimOptions): Promise<ClaimedJob[]> {
  const { rows } = await sql<ClaimedJob>`
    SELECT * FROM claim_jobs(${options.worker}, ${options.leaseMs}, ${options.batch}, ${options.perTenant},
                             ${`{${options.busy.join(',')}}`}::uuid[])`.execute(db);
  return rows.map((row) => ({
    ...row,
    payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<
      string,
      unknown
    >,
  }));
}

/** One run a worker holds: the job and the number of the attempt its claim counted. */
export interface HeldRun {
  id: string;
  attempts: number;
}

/**
 * Done, one tenant's runs at once, as `worker` holds them: a job another worker holds
 * now, or claimed again since this run (its lease ran out: a later attempt), or finished
 * or given up meanwhile, stays as it is. A job queued again during the run (`run_again`,
 * migration 0019) is due again at once instead, its tries counted afresh: the run may
 * have read its work before the new work committed. Both cases are decided on the row as
 * it is when it is written, so a queuing that commits while this statement waits for the
 * row still counts. The rows are locked in the order `queueJobRuns` locks them (kind,
 * key), so the two never wait on each other in a circle.
 */
export async function completeJobs(
  db: Db,
  tenantId: string,
  worker: string,
  runs: readonly HeldRun[],
): Promise<void> {
  await sql`
    UPDATE jobs j
       SET status = CASE WHEN j.run_again THEN 'pending' ELSE 'done' END,
           finished_at = CASE WHEN j.run_again THEN NULL ELSE now() END,
           run_at = CASE WHEN j.run_again THEN now() ELSE j.run_at END,
           attempts = CASE WHEN j.run_again THEN 0 ELSE j.attempts END,
           run_again = false, locked_until = NULL, last_error = NULL
      FROM (SELECT o.tenant_id, o.id FROM jobs o
             JOIN unnest(${runs.map((r) => r.id)}::uuid[], ${runs.map((r) => r.attempts)}::integer[])
                  AS r(id, attempts) ON r.id = o.id AND r.attempts = o.attempts
            WHERE o.tenant_id = ${tenantId}::uuid AND o.status = 'pending' AND o.locked_by = ${worker}
            ORDER BY o.kind, o.key
            FOR UPDATE OF o) held
     WHERE j.tenant_id = held.tenant_id AND j.id = held.id`.execute(db);
}

/**
 * An attempt failed: again after `delayMs`, or `dead` when it was the last one (or when
 * `final`: no attempt can succeed). Returns the status the job is left in. A job queued
 * again during the attempt is not given up: the new work gets tries of its own.
 */
export async function failJob(
  db: Db,
  job: Pick<ClaimedJob, 'tenant_id' | 'id' | 'attempts'>,
  worker: string,
  error: string,
  retry: { delayMs: number } | 'final',
): Promise<JobStatus | null> {
  const final = retry === 'final';
  const delayMs = final ? 0 : retry.delayMs;
  const row = await db
    .updateTable('jobs')
    .set({
      status: sql<JobStatus>`CASE WHEN NOT run_again AND (${final} OR attempts >= max_attempts) THEN 'dead' ELSE 'pending' END`,
      finished_at: sql<
        string | null
      >`CASE WHEN NOT run_again AND (${final} OR attempts >= max_attempts) THEN now() END`,
      attempts: sql<number>`CASE WHEN run_again AND (${final} OR attempts >= max_attempts) THEN 0 ELSE attempts END`,
      run_at: sql<string>`now() + make_interval(secs => ${delayMs}::integer / 1000.0)`,
      run_again: false,
      locked_until: null,
      last_error: error.slice(0, 1000),
    })
    .where('tenant_id', '=', job.tenant_id)
    .where('id', '=', job.id)
    .where('status', '=', 'pending')
    // This attempt's outcome, not a later one another worker is making.
    .where('locked_by', '=', worker)
    .where('attempts', '=', job.attempts)
    .returning('status')
    .executeTakeFirst();
  return row?.status ?? null;
}

/**
 * Not tried after all: the attempt the claim counted is given back and the job is due
 * again after `delayMs`, as `worker` holds it. Answers whether it was this worker's to set
 * back. Work queued meanwhile is for that next run (`run_again` is cleared).
 */
export async function postponeJob(
  db: Db,
  job: Pick<ClaimedJob, 'tenant_id' | 'id' | 'attempts'>,
  worker: string,
  delayMs: number,
): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({
      attempts: sql<number>`attempts - 1`,
      run_at: sql<string>`now() + make_interval(secs => ${Math.round(delayMs)}::integer / 1000.0)`,
      run_again: false,
      locked_until: null,
    })
    .where('tenant_id', '=', job.tenant_id)
    .where('id', '=', job.id)
    .where('status', '=', 'pending')
    .where('locked_by', '=', worker)
    .where('attempts', '=', job.attempts)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Removes up to `batch` jobs finished long enough ago (migration 0007); how many. */
export async function pruneJobs(db: Db, batch: number): Promise<number> {
  const { rows } = await sql<{ removed: number }>`SELECT prune_jobs(${batch}) AS removed`.execute(db);
  return rows[0]?.removed ?? 0;
}

export interface JobRecord {
  id: string;
  kind: JobKind;
  key: string;
  status: JobStatus;
  attempts: number;
  max_attempts: number;
  run_at: string;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
}

/** A tenant's jobs, newest first, at most `limit`. */
export function listJobs(
  db: Db,
  tenantId: string,
  filter: { status?: JobStatus | undefined; kind?: JobKind | undefined; limit: number },
): Promise<JobRecord[]> {
  let query = db
    .selectFrom('jobs')
    .select([
      'id',
      'kind',
      'key',
      'status',
      'attempts',
      'max_attempts',
      'run_at',
      'last_error',
      'created_at',
      'finished_at',
    ])
    .where('tenant_id', '=', tenantId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
}

/** The queue's depth by kind across every tenant (src/metrics/); read with the owner's view. */
export interface QueueDepthRow {
  kind: JobKind;
  pending: number;
  due: number;
  oldestDueSeconds: number;
}

/**
 * Pending jobs by kind: all of them, those due now that no worker holds (what
 * `claim_jobs` would take), and how long the oldest of those has been due. Needs a view
 * past the tenant wall (the schema owner's): the application role sees one tenant's jobs.
 */
export async function queueDepth(owner: Db): Promise<QueueDepthRow[]> {
  const { rows } = await sql<{ kind: JobKind; pending: number; due: number; oldest: number | null }>`
    SELECT kind, count(*)::int AS pending, count(*) FILTER (WHERE ready)::int AS due,
           EXTRACT(EPOCH FROM now() - min(run_at) FILTER (WHERE ready))::float8 AS oldest
      FROM (SELECT kind, run_at,
                   run_at <= now() AND (locked_until IS NULL OR locked_until <= now()) AS ready
              FROM jobs WHERE status = 'pending') p
     GROUP BY kind ORDER BY kind`.execute(owner);
  return rows.map((r) => ({
    kind: r.kind,
    pending: r.pending,
    due: r.due,
    oldestDueSeconds: Math.max(0, Number(r.oldest ?? 0)),
  }));
}
