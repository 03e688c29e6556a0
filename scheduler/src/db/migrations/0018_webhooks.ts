import { type Kysely, sql } from 'kysely';

/**
 * Signed webhooks (src/webhooks/): a tenant's admins register URLs that receive the
 * schedule's changes, signed per the Standard Webhooks specification.
 *
 * - `webhooks`: the URL, the event types it subscribes to (a non-empty set of the seven
 *   the API reports, no repeats) and the signing secret (`whsec_` + base64 of 24 to 32
 *   random bytes; kept, since every delivery is signed with it). `disabled_at` and its
 *   reason are set when a receiver answers 410 Gone: nothing more is queued or sent.
 *   `last_seq` numbers the hook's deliveries; queuing an event takes the hook's row lock
 *   to count it, so the numbers follow the order the changes commit in.
 * - A tenant holds at most 20 webhooks: a trigger locks the tenant's row and counts, so
 *   concurrent registrations cannot pass the cap together.
 * - `webhook_deliveries`: one row per event per hook. Its `id` is the `webhook-id` header,
 *   the same on every retry (receivers drop repeats by it); `seq` its place in the
 *   hook's order; the status (`pending` before the first try, `failed` while retries
 *   remain, `delivered`, `dead` when given up or the hook was disabled), attempts, the
 *   last response code and duration, and when the next try is due. A hook's deliveries
 *   go with it.
 * - The job queue (migration 0007) gets the kind `webhook`: one job per delivery.
 * - Both tables sit behind the tenant wall (migration 0006) like every tenant table.
 */
const eventTypes = `ARRAY['shift.published', 'assignment.created', 'assignment.removed', 'offer.updated',
  'time_off.updated', 'time_entry.recorded', 'form.submitted']::text[]`;

const statements = [
  `CREATE FUNCTION webhook_events_valid(events text[]) RETURNS boolean
     LANGUAGE sql IMMUTABLE PARALLEL SAFE
     AS $$ SELECT cardinality(events) >= 1
                  AND array_position(events, NULL) IS NULL
                  AND events <@ ${eventTypes}
                  AND cardinality(events) = (SELECT count(DISTINCT e) FROM unnest(events) AS e) $$`,
  `CREATE TABLE webhooks (
     tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
     id               uuid NOT NULL,
     url              text NOT NULL CONSTRAINT webhooks_url_length CHECK (length(url) BETWEEN 1 AND 2048),
     events           text[] NOT NULL CONSTRAINT webhooks_events CHECK (webhook_events_valid(events)),
     secret           text NOT NULL CONSTRAINT webhooks_secret
                        CHECK (secret ~ '^whsec_[A-Za-z0-9+/]{32,43}={0,2}$'),
     last_seq         bigint NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
     disabled_at      timestamptz,
     disabled_reason  text CHECK (length(disabled_reason) <= 500),
     created_at       timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (tenant_id, id),
     CONSTRAINT webhooks_disabled_reason CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL))
   )`,
  `CREATE FUNCTION webhooks_cap_per_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       -- Registrations of one tenant queue here, so the count below is not stale.
       PERFORM 1 FROM tenants t WHERE t.id = NEW.tenant_id FOR NO KEY UPDATE;
       IF (SELECT count(*) FROM webhooks w WHERE w.tenant_id = NEW.tenant_id) >= 20 THEN
         RAISE EXCEPTION 'a tenant holds at most 20 webhooks'
           USING ERRCODE = 'check_violation', CONSTRAINT = 'webhooks_per_tenant', TABLE = 'webhooks';
       END IF;
       RETURN NEW;
     END $$`,
  `CREATE TRIGGER webhooks_per_tenant BEFORE INSERT OR UPDATE OF tenant_id ON webhooks
     FOR EACH ROW EXECUTE FUNCTION webhooks_cap_per_tenant()`,

  `CREATE TABLE webhook_deliveries (
     tenant_id      uuid NOT NULL,
     id             uuid NOT NULL,
     webhook_id     uuid NOT NULL,
     seq            bigint NOT NULL CHECK (seq >= 1),
     event_type     text NOT NULL CONSTRAINT webhook_deliveries_event_type CHECK (event_type = ANY (${eventTypes})),
     payload        jsonb NOT NULL,
     status         text NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'delivered', 'failed', 'dead')),
     attempts       integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
     response_code  integer CHECK (response_code BETWEEN 100 AND 599),
     duration_ms    integer CHECK (duration_ms >= 0),
     next_retry_at  timestamptz,
     last_error     text CHECK (length(last_error) <= 1000),
     created_at     timestamptz NOT NULL DEFAULT now(),
     delivered_at   timestamptz,
     PRIMARY KEY (tenant_id, id),
     FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE,
     UNIQUE (tenant_id, webhook_id, seq),
     CONSTRAINT webhook_deliveries_delivered_at CHECK ((status = 'delivered') = (delivered_at IS NOT NULL)),
     CONSTRAINT webhook_deliveries_next_retry CHECK (next_retry_at IS NULL OR status = 'failed')
   )`,
  `CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (tenant_id, webhook_id, created_at DESC, id DESC)`,
  `CREATE INDEX webhook_deliveries_open ON webhook_deliveries (tenant_id, webhook_id, seq)
     WHERE status IN ('pending', 'failed')`,

  'ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check',
  `ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('push', 'webhook'))`,

  ...['webhooks', 'webhook_deliveries'].flatMap((table) => [
    `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
    `CREATE POLICY tenant_wall ON ${table}
       USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO scheduler_app`,
  ]),
  // Hooks made and removed, and disabled by a 410, in the audit log (migration 0015); the
  // secret is recorded as "[redacted]" (by its column name) and the delivery counter not
  // at all. Deliveries are the queue's bookkeeping, not anyone's decision.
  `CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON webhooks FOR EACH ROW
     EXECUTE FUNCTION audit_row('webhook', 'last_seq')`,
  // Deliveries do not pile up either: the workers' periodic prune (migration 0007) also
  // removes deliveries delivered or given up more than 30 days ago (the admins' window to
  // read them), a bounded batch at a time; open ones stay, whatever their age.
  `CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at)
     WHERE status IN ('delivered', 'dead')`,
  `CREATE OR REPLACE FUNCTION prune_jobs(batch integer) RETURNS integer
     LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
     AS $$
       WITH gone AS (
         DELETE FROM public.jobs j
          WHERE (j.tenant_id, j.id) IN (
            SELECT o.tenant_id, o.id FROM public.jobs o
             WHERE o.status <> 'pending'
               AND o.finished_at < now() - CASE o.status WHEN 'done' THEN interval '7 days' ELSE interval '30 days' END
             LIMIT batch)
         RETURNING 1),
       deliveries AS (
         DELETE FROM public.webhook_deliveries d
          WHERE (d.tenant_id, d.id) IN (
            SELECT o.tenant_id, o.id FROM public.webhook_deliveries o
             WHERE o.status IN ('delivered', 'dead') AND o.created_at < now() - interval '30 days'
             LIMIT batch)
         RETURNING 1)
       SELECT ((SELECT count(*) FROM gone) + (SELECT count(*) FROM deliveries))::integer
     $$`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
