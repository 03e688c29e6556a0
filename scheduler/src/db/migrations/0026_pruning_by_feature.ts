import { type Kysely, sql } from 'kysely';

/**
 * Each feature prunes its own tables. `prune_jobs` goes back to removing finished jobs
 * only, as migration 0007 made it; the webhook records it had come to prune too
 * (migrations 0018, 0022) are the webhooks feature's `prune_webhook_records`, which the
 * job worker runs beside it because src/webhooks/ registers it (src/app.ts). Both run as
 * their owner (the worker prunes every tenant, past the tenant wall) and answer how many
 * rows they removed, at most `batch` of each kind.
 */
const statements = [
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
         RETURNING 1)
       SELECT count(*)::integer FROM gone
     $$`,
  // Deliveries a month after they were through; a batch's bodies once no hook's share
  // needs them, then the batch.
  `CREATE FUNCTION prune_webhook_records(batch integer) RETURNS integer
     LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
     AS $$
       WITH deliveries AS (
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
       SELECT ((SELECT count(*) FROM deliveries) + (SELECT count(*) FROM bodies)
               + (SELECT count(*) FROM batches))::integer
     $$`,
  'REVOKE ALL ON FUNCTION prune_webhook_records(integer) FROM PUBLIC',
  'GRANT EXECUTE ON FUNCTION prune_webhook_records(integer) TO scheduler_app',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
