import { type Kysely, sql } from 'kysely';

/**
 * The job queue wakes work instead of polling for it (src/jobs/, src/webhooks/delivery.ts):
 *
 * - `jobs.run_again`: work queued under a key whose job a worker holds right now. Queuing
 *   it again sets the flag instead of doing nothing, and the worker's record of the run
 *   (done, failed or set back) then leaves the job due at once rather than finished: the
 *   run that was under way may have read its work before the new work committed, so one
 *   more run follows. Queuing under the key of a finished job makes it pending again;
 *   under the key of a job that waits, changes nothing (it runs anyway). So no work queued
 *   is ever left behind a job that just finished, whatever the order of the two commits.
 * - Webhook deliveries get one job per hook instead of one per delivery: the hook's job
 *   sends the hook's open deliveries in `seq` order, one after the other, and waits for
 *   a retry's time when the first of them failed. A later delivery is therefore never
 *   claimed to find an earlier one open and set back (which polled every waiting
 *   delivery, and lost its wake-up when the earlier one finished between the check and
 *   the wait). Open deliveries of today's queue get their hook's job, due now; the jobs of
 *   single deliveries still pending are removed (finished ones stay for the admins' list
 *   until the usual prune).
 * - A job becoming due now (queued, or set back with no wait, or due again after its run)
 *   is announced on the channel `scheduler_jobs` (NOTIFY, delivered at commit, once per
 *   transaction however many rows): on PostgreSQL every API process LISTENs and claims at
 *   once instead of at its next poll.
 */
const statements = [
  'ALTER TABLE jobs ADD COLUMN run_again boolean NOT NULL DEFAULT false',
  `ALTER TABLE jobs ADD CONSTRAINT jobs_run_again_pending CHECK (NOT run_again OR status = 'pending')`,

  `DELETE FROM jobs WHERE kind = 'webhook' AND status = 'pending'`,
  `INSERT INTO jobs (tenant_id, id, kind, key, payload, max_attempts)
     SELECT DISTINCT d.tenant_id, gen_random_uuid(), 'webhook', 'hook:' || replace(d.webhook_id::text, '-', ''),
            jsonb_build_object('webhook_id', replace(d.webhook_id::text, '-', '')), 100
       FROM webhook_deliveries d
      WHERE d.status IN ('pending', 'failed')
     ON CONFLICT (tenant_id, kind, key) DO NOTHING`,

  `CREATE FUNCTION jobs_announce_due() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_notify('scheduler_jobs', '');
       RETURN NULL;
     END $$`,
  `CREATE TRIGGER jobs_due_now AFTER INSERT OR UPDATE ON jobs FOR EACH ROW
     WHEN (NEW.status = 'pending' AND NEW.locked_until IS NULL AND NEW.run_at <= now())
     EXECUTE FUNCTION jobs_announce_due()`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
