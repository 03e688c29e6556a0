import { type Kysely, sql } from 'kysely';

/**
 * Background work in the database (src/jobs/), shared by every API process:
 *
 * - `jobs`: one row per piece of work (a Web Push delivery to one subscription today),
 *   written in the same transaction as the change that causes it, so the change and its
 *   work commit together or not at all. `key` is the idempotency key of a job within its
 *   tenant and kind (a push delivery's is its notification and subscription): the same
 *   work is never queued twice.
 * - A worker claims due jobs with `claim_jobs`, which leases them (`locked_until`) and
 *   counts the attempt in the same statement; a worker killed mid-job leaves a lease that
 *   runs out, and the job is claimed again (at least once). The claim takes the oldest
 *   due jobs tenant by tenant (at most `per_tenant` of each in one claim, none of the
 *   tenants the caller is busy with), so one tenant's backlog does not starve the others.
 * - The application role sees and changes only its tenant's jobs (row-level security, as
 *   every tenant table); `claim_jobs` is the one narrow door across tenants, run as the
 *   owner, as `form_tenant` is for forms.
 * - A job's attempts never exceed its cap; one that used them all is `dead` with its
 *   last error, for an admin to read (GET /api/v1/jobs).
 * - Finished jobs do not pile up: `prune_jobs` removes done jobs a week after they were
 *   done and dead ones after 30 days (the admins' window to read them), a bounded batch
 *   at a time; each worker calls it every few minutes.
 * - A user keeps at most 10 push subscriptions (browsers hold one per origin; 10 devices
 *   is plenty): registering an eleventh drops the one registered longest ago, so no user
 *   can make one notification fan out without bound. The user's row lock orders
 *   concurrent registrations, so the cap holds under races too.
 */
const statements = [
  `CREATE TABLE jobs (
     tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
     id            uuid NOT NULL,
     kind          text NOT NULL CHECK (kind IN ('push')),
     key           text NOT NULL CHECK (length(key) BETWEEN 1 AND 200),
     payload       jsonb NOT NULL,
     status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'dead')),
     attempts      integer NOT NULL DEFAULT 0,
     max_attempts  integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 100),
     run_at        timestamptz NOT NULL DEFAULT now(),
     locked_until  timestamptz,
     locked_by     text,
     last_error    text,
     created_at    timestamptz NOT NULL DEFAULT now(),
     finished_at   timestamptz,
     PRIMARY KEY (tenant_id, id),
     UNIQUE (tenant_id, kind, key),
     CHECK (attempts BETWEEN 0 AND max_attempts),
     CHECK ((status = 'pending') = (finished_at IS NULL))
   )`,
  `CREATE INDEX jobs_due ON jobs (tenant_id, run_at, id) WHERE status = 'pending'`,
  `CREATE INDEX jobs_leased ON jobs (locked_until) WHERE status = 'pending' AND locked_until IS NOT NULL`,
  `CREATE INDEX jobs_by_status ON jobs (tenant_id, status, created_at DESC)`,

  'ALTER TABLE jobs ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY tenant_wall ON jobs
     USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
  'GRANT SELECT, INSERT, UPDATE, DELETE ON jobs TO scheduler_app',

  // The row is re-checked after it is locked (status, lease, due time and attempts in the
  // locking query's own WHERE): a job another worker claimed, or set back to wait for a
  // retry, and committed meanwhile is not claimed.
  `CREATE FUNCTION claim_jobs(worker text, lease_ms integer, batch integer, per_tenant integer, busy uuid[])
     RETURNS TABLE (tenant_id uuid, id uuid, kind text, payload jsonb, attempts integer, max_attempts integer)
     LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
     AS $$
       -- A worker gone during a job's last attempt: its lease ran out, and no attempt is left.
       UPDATE public.jobs j
          SET status = 'dead', finished_at = now(), locked_until = NULL,
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
  `CREATE FUNCTION push_subscriptions_keep_newest() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       -- NO KEY UPDATE: it queues registrations of one user, and lets their foreign-key share locks be.
       PERFORM 1 FROM users u WHERE u.tenant_id = NEW.tenant_id AND u.id = NEW.user_id FOR NO KEY UPDATE;
       DELETE FROM push_subscriptions p
        WHERE p.tenant_id = NEW.tenant_id AND p.user_id = NEW.user_id
          AND p.id NOT IN (SELECT q.id FROM push_subscriptions q
                            WHERE q.tenant_id = NEW.tenant_id AND q.user_id = NEW.user_id
                            ORDER BY q.updated_at DESC, q.id DESC LIMIT 10);
       RETURN NULL;
     END $$`,
  `CREATE TRIGGER push_subscriptions_per_user AFTER INSERT OR UPDATE OF user_id ON push_subscriptions
     FOR EACH ROW EXECUTE FUNCTION push_subscriptions_keep_newest()`,
  `CREATE INDEX jobs_finished ON jobs (finished_at) WHERE status <> 'pending'`,
  `CREATE FUNCTION prune_jobs(batch integer) RETURNS integer
     LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
     AS $$
       WITH gone AS (
         DELETE FROM public.jobs j
          WHERE (j.tenant_id, j.id) IN (
            SELECT o.tenant_id, o.id FROM public.jobs o
             WHERE o.status <> 'pending'
               AND o.finished_at < now() - CASE o.status WHEN 'done' THEN interval '7 days' ELSE interval '30 days' END
             LIMIT batch)
         RETURNING 1)
       SELECT count(*)::integer FROM gone
     $$`,
  'REVOKE ALL ON FUNCTION prune_jobs(integer) FROM PUBLIC',
  'GRANT EXECUTE ON FUNCTION prune_jobs(integer) TO scheduler_app',
  'REVOKE ALL ON FUNCTION claim_jobs(text, integer, integer, integer, uuid[]) FROM PUBLIC',
  'GRANT EXECUTE ON FUNCTION claim_jobs(text, integer, integer, integer, uuid[]) TO scheduler_app',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
