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

  // The claim's first step gives up a job whose worker was lost during its last attempt;
  // a job queued again meanwhile (run_again) is due again instead, with fresh tries (a
  // give-up would break the check above and with it every claim).
  `CREATE OR REPLACE FUNCTION claim_jobs(worker text, lease_ms integer, batch integer, per_tenant integer, busy uuid[])
     RETURNS TABLE (tenant_id uuid, id uuid, kind text, payload jsonb, attempts integer, max_attempts integer)
     LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
     AS $$
       -- A worker gone during a job's last attempt: its lease ran out, and no attempt is
       -- left. Unless work was queued for it meanwhile (run_again): that work gets tries of
       -- its own, due now.
       UPDATE public.jobs j
          SET status = CASE WHEN j.run_again THEN 'pending' ELSE 'dead' END,
              finished_at = CASE WHEN j.run_again THEN NULL ELSE now() END,
              attempts = CASE WHEN j.run_again THEN 0 ELSE j.attempts END,
              run_at = CASE WHEN j.run_again THEN now() ELSE j.run_at END,
              run_again = false, locked_until = NULL,
              last_error = 'the worker stopped during the last attempt' || coalesce(': ' || j.last_error, '')
        WHERE j.status = 'pending' AND j.attempts >= j.max_attempts AND j.locked_until <= now();
       -- The tenants with pending jobs, one index probe each (a loose index scan), then the
       -- first due jobs of each by their index: the cost follows the tenants and the batch,
       -- not the backlog.
       WITH RECURSIVE waiting AS (
         (SELECT j.tenant_id FROM public.jobs j WHERE j.status = 'pending' ORDER BY j.tenant_id LIMIT 1)
         UNION ALL
         SELECT (SELECT j.tenant_id FROM public.jobs j
                  WHERE j.status = 'pending' AND j.tenant_id > w.tenant_id
                  ORDER BY j.tenant_id LIMIT 1)
           FROM waiting w WHERE w.tenant_id IS NOT NULL
       ), due AS (
         SELECT c.tenant_id, c.id, row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.run_at, c.id) AS turn
           FROM waiting w
           CROSS JOIN LATERAL (
             SELECT j.tenant_id, j.id, j.run_at FROM public.jobs j
              WHERE j.tenant_id = w.tenant_id AND j.status = 'pending' AND j.run_at <= now()
                AND j.attempts < j.max_attempts
                AND (j.locked_until IS NULL OR j.locked_until <= now())
              ORDER BY j.run_at, j.id
              LIMIT per_tenant
           ) c
          WHERE w.tenant_id IS NOT NULL AND NOT (w.tenant_id = ANY (busy))
       ), picked AS (
         SELECT j.tenant_id, j.id
           FROM public.jobs j JOIN due d ON d.tenant_id = j.tenant_id AND d.id = j.id
          WHERE d.turn <= per_tenant AND j.status = 'pending'
            AND j.run_at <= now() AND j.attempts < j.max_attempts
            AND (j.locked_until IS NULL OR j.locked_until <= now())
          ORDER BY d.turn, j.run_at, j.id
          LIMIT batch
          FOR UPDATE OF j SKIP LOCKED
       )
       UPDATE public.jobs j
          SET locked_until = now() + make_interval(secs => lease_ms / 1000.0),
              locked_by = worker,
              attempts = j.attempts + 1
         FROM picked p
        WHERE j.tenant_id = p.tenant_id AND j.id = p.id
       RETURNING j.tenant_id, j.id, j.kind, j.payload, j.attempts, j.max_attempts
     $$`,
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
