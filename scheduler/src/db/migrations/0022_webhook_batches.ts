import { type Kysely, sql } from 'kysely';

/**
 * A change that reports many records to many webhooks costs one row per record, not one
 * per record and hook (src/webhooks/events.ts, src/webhooks/delivery.ts):
 *
 * - `webhook_batches`: one change's events of one type; `webhook_batch_bodies` their
 *   bodies, one row each at its `position` (a publication of 541 shifts: one batch, 541
 *   bodies), written once for every hook.
 * - `webhook_fanouts`: one row per subscribed hook and batch: the hook's numbers for the
 *   batch start at `first_seq` (taken under the hook's row lock, as every delivery's
 *   number is, so the order still follows the commits), and `expanded` of its `total`
 *   bodies are delivery rows already. The hook's own job turns them into deliveries, a
 *   bounded number at a time read by position, when they are next in the hook's order,
 *   and removes the row once every body is a delivery. A hook removed takes its fan-outs
 *   with it.
 * - A batch no fan-out needs any more is removed by the workers' periodic prune
 *   (`prune_jobs`, as finished jobs and deliveries are), its bodies a bounded number per
 *   statement, then the batch.
 *
 * The three tables sit behind the tenant wall (migration 0006) like every tenant table.
 */
const eventTypes = `ARRAY['shift.published', 'assignment.created', 'assignment.removed', 'offer.updated',
  'time_off.updated', 'time_entry.recorded', 'form.submitted']::text[]`;

const statements = [
  `CREATE TABLE webhook_batches (
     tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
     id          uuid NOT NULL,
     event_type  text NOT NULL CONSTRAINT webhook_batches_event_type CHECK (event_type = ANY (${eventTypes})),
     size        integer NOT NULL CHECK (size >= 1),
     created_at  timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (tenant_id, id)
   )`,
  `CREATE TABLE webhook_batch_bodies (
     tenant_id   uuid NOT NULL,
     batch_id    uuid NOT NULL,
     position    integer NOT NULL CHECK (position >= 0),
     body        jsonb NOT NULL,
     PRIMARY KEY (tenant_id, batch_id, position),
     FOREIGN KEY (tenant_id, batch_id) REFERENCES webhook_batches (tenant_id, id) ON DELETE CASCADE
   )`,
  `CREATE TABLE webhook_fanouts (
     tenant_id   uuid NOT NULL,
     webhook_id  uuid NOT NULL,
     batch_id    uuid NOT NULL,
     first_seq   bigint NOT NULL CHECK (first_seq >= 1),
     total       integer NOT NULL CHECK (total >= 1),
     expanded    integer NOT NULL DEFAULT 0,
     PRIMARY KEY (tenant_id, webhook_id, batch_id),
     FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE,
     FOREIGN KEY (tenant_id, batch_id) REFERENCES webhook_batches (tenant_id, id) ON DELETE CASCADE,
     CONSTRAINT webhook_fanouts_expanded CHECK (expanded >= 0 AND expanded < total)
   )`,
  'CREATE INDEX webhook_fanouts_next ON webhook_fanouts (tenant_id, webhook_id, first_seq)',
  'CREATE INDEX webhook_fanouts_batch ON webhook_fanouts (tenant_id, batch_id)',
  ...['webhook_batches', 'webhook_batch_bodies', 'webhook_fanouts'].flatMap((table) => [
    `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
    `CREATE POLICY tenant_wall ON ${table}
       USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO scheduler_app`,
  ]),
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
         RETURNING 1),
       bodies AS (
         DELETE FROM public.webhook_batch_bodies d
          WHERE (d.tenant_id, d.batch_id, d.position) IN (
            SELECT o.tenant_id, o.batch_id, o.position FROM public.webhook_batch_bodies o
             WHERE NOT EXISTS (SELECT FROM public.webhook_fanouts f
                                WHERE f.tenant_id = o.tenant_id AND f.batch_id = o.batch_id)
             LIMIT batch)
         RETURNING 1),
       batches AS (
         DELETE FROM public.webhook_batches b
          WHERE (b.tenant_id, b.id) IN (
            SELECT o.tenant_id, o.id FROM public.webhook_batches o
             WHERE NOT EXISTS (SELECT FROM public.webhook_fanouts f
                                WHERE f.tenant_id = o.tenant_id AND f.batch_id = o.id)
               AND NOT EXISTS (SELECT FROM public.webhook_batch_bodies d
                                WHERE d.tenant_id = o.tenant_id AND d.batch_id = o.id)
             LIMIT batch)
         RETURNING 1)
       SELECT ((SELECT count(*) FROM gone) + (SELECT count(*) FROM deliveries)
               + (SELECT count(*) FROM bodies) + (SELECT count(*) FROM batches))::integer
     $$`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
