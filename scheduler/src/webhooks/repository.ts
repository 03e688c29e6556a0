import { sql } from 'kysely';
import { isAnyOf } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import type { WebhookDeliveryStatus } from '../db/types.ts';
import type { Webhook, WebhookDelivery } from './schemas.ts';

const webhookColumns = [
  'id',
  'tenant_id',
  'url',
  'events',
  'disabled_at',
  'disabled_reason',
  'created_at',
] as const;

export interface WebhookValues {
  tenant_id: string;
  id: string;
  url: string;
  events: readonly string[];
  secret: string;
}

/** A new hook; never its secret back (the caller has it). */
export async function insertWebhook(db: Db, values: WebhookValues): Promise<Webhook> {
  const row = await db
    .insertInto('webhooks')
    .values({ ...values, events: [...values.events] })
    .returning(webhookColumns)
    .executeTakeFirstOrThrow();
  return row as Webhook;
}

/** A tenant's hooks, oldest first; never their secrets. */
export async function listWebhooks(db: Db, tenantId: string): Promise<Webhook[]> {
  const rows = await db
    .selectFrom('webhooks')
    .select(webhookColumns)
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows as Webhook[];
}

export async function webhookExists(db: Db, tenantId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('webhooks')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes a hook and its deliveries (their jobs then find nothing to send). */
export async function deleteWebhook(db: Db, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhooks')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A hook's deliveries, newest first, at most `limit`. */
export function listDeliveries(
  db: Db,
  tenantId: string,
  webhookId: string,
  limit: number,
): Promise<WebhookDelivery[]> {
  return db
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'webhook_id',
      sql<WebhookDelivery['event_type']>`event_type`.as('event_type'),
      'status',
      'attempts',
      'response_code',
      'duration_ms',
      'next_retry_at',
      'last_error',
      'created_at',
      'delivered_at',
    ])
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * The enabled hooks of a tenant subscribed to `type`, locked to the end of the caller's
 * transaction in id order (two changes queuing for the same hooks lock them in the same
 * order).
 */
export async function lockSubscribedHooks(db: Db, tenantId: string, type: string): Promise<string[]> {
  const rows = await db
    .selectFrom('webhooks')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('disabled_at', 'is', null)
    .where(sql<boolean>`${type} = ANY (events)`)
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
  return rows.map((row) => row.id);
}

/** Takes the next `count` numbers of each hook; answers the last number each took. */
export async function takeSequenceNumbers(
  db: Db,
  tenantId: string,
  hookIds: readonly string[],
  count: number,
): Promise<{ id: string; lastSeq: number }[]> {
  const rows = await db
    .updateTable('webhooks')
    .set({ last_seq: sql<number>`last_seq + ${count}::integer` })
    .where('tenant_id', '=', tenantId)
    .where(isAnyOf('id', hookIds))
    .returning(['id', 'last_seq'])
    .execute();
  return rows.map((row) => ({ id: row.id, lastSeq: row.last_seq }));
}

export interface NewDelivery {
  id: string;
  webhookId: string;
  seq: number;
  type: string;
  payload: Record<string, unknown>;
}

/** The deliveries, in one statement whatever their number (arrays, not a row of parameters each). */
export async function insertDeliveries(
  db: Db,
  tenantId: string,
  deliveries: readonly NewDelivery[],
): Promise<void> {
  if (deliveries.length === 0) return;
  await sql`
    INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, seq, event_type, payload)
    SELECT ${tenantId}::uuid, d.id, d.webhook_id, d.seq, d.event_type, d.payload
      FROM unnest(${deliveries.map((d) => d.id)}::uuid[], ${deliveries.map((d) => d.webhookId)}::uuid[],
                  ${deliveries.map((d) => d.seq)}::bigint[], ${deliveries.map((d) => d.type)}::text[],
                  ${deliveries.map((d) => JSON.stringify(d.payload))}::jsonb[])
           AS d(id, webhook_id, seq, event_type, payload)`.execute(db);
}

/**
 * One change's bodies written once, and each hook's share of them: its numbers from
 * `firstSeq`. The hooks' jobs turn the shares into deliveries (`expandFanout`). Two
 * statements whatever the number of records and hooks.
 */
export async function insertBatch(
  db: Db,
  tenantId: string,
  batch: { id: string; type: string; bodies: readonly Record<string, unknown>[] },
  hooks: readonly { id: string; firstSeq: number }[],
): Promise<void> {
  await db
    .insertInto('webhook_batches')
    .values({ tenant_id: tenantId, id: batch.id, event_type: batch.type, size: batch.bodies.length })
    .execute();
  await sql`
    INSERT INTO webhook_batch_bodies (tenant_id, batch_id, position, body)
    SELECT ${tenantId}::uuid, ${batch.id}::uuid, b.position - 1, b.body::jsonb
      FROM unnest(${batch.bodies.map((body) => JSON.stringify(body))}::text[]) WITH ORDINALITY AS b(body, position)`.execute(
    db,
  );
  await sql`
    INSERT INTO webhook_fanouts (tenant_id, webhook_id, batch_id, first_seq, total)
    SELECT ${tenantId}::uuid, h.id, ${batch.id}::uuid, h.first_seq, ${batch.bodies.length}::integer
      FROM unnest(${hooks.map((h) => h.id)}::uuid[], ${hooks.map((h) => h.firstSeq)}::bigint[])
           AS h(id, first_seq)`.execute(db);
}

/** The hook's share of a batch that comes first in its order, with the number of its next body. */
export interface Fanout {
  batch_id: string;
  /** The number the next body to expand gets. */
  next_seq: number;
}

export async function nextFanout(db: Db, tenantId: string, webhookId: string): Promise<Fanout | undefined> {
  return db
    .selectFrom('webhook_fanouts')
    .select(['batch_id', sql<number>`first_seq + expanded`.as('next_seq')])
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .orderBy('first_seq')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Turns the next `count` bodies of the hook's share of a batch into deliveries, with
 * their numbers, and records how far the share is expanded (the share goes once every
 * body is a delivery): one transaction, so a crash repeats nothing and loses nothing.
 * Answers how many deliveries it wrote.
 */
export async function expandFanout(
  db: Db,
  tenantId: string,
  webhookId: string,
  batchId: string,
  count: number,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const share = await trx
      .selectFrom('webhook_fanouts')
      .select(['first_seq', 'total', 'expanded'])
      .where('tenant_id', '=', tenantId)
      .where('webhook_id', '=', webhookId)
      .where('batch_id', '=', batchId)
      .forUpdate()
      .executeTakeFirst();
    if (!share) return 0;
    const upTo = Math.min(share.total, share.expanded + count);
    // The bodies by their key's range: a step costs its own length, not the batch's.
    const { numAffectedRows } = await sql`
      INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, seq, event_type, payload)
      SELECT b.tenant_id, gen_random_uuid(), ${webhookId}::uuid, ${share.first_seq}::bigint + d.position,
             b.event_type, d.body
        FROM webhook_batches b
        JOIN webhook_batch_bodies d ON d.tenant_id = b.tenant_id AND d.batch_id = b.id
       WHERE b.tenant_id = ${tenantId}::uuid AND b.id = ${batchId}::uuid
         AND d.position >= ${share.expanded}::integer AND d.position < ${upTo}::integer`.execute(trx);
    if (upTo >= share.total) {
      await trx
        .deleteFrom('webhook_fanouts')
        .where('tenant_id', '=', tenantId)
        .where('webhook_id', '=', webhookId)
        .where('batch_id', '=', batchId)
        .execute();
    } else {
      await trx
        .updateTable('webhook_fanouts')
        .set({ expanded: upTo })
        .where('tenant_id', '=', tenantId)
        .where('webhook_id', '=', webhookId)
        .where('batch_id', '=', batchId)
        .execute();
    }
    return Number(numAffectedRows ?? 0n);
  });
}

/** What a hook's job needs to send its next delivery: the delivery, the hook's URL, secret and standing. */
export interface DeliveryToSend {
  id: string;
  webhook_id: string;
  seq: number;
  payload: Record<string, unknown>;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_retry_at: string | null;
  url: string;
  secret: string;
  disabled_at: string | null;
}

/**
 * The hook's first open delivery by `seq` (pending, or failed with tries left), with what
 * sending it takes; none when everything queued for the hook was delivered or given up,
 * or the hook is gone.
 */
export async function nextOpenDelivery(
  db: Db,
  tenantId: string,
  webhookId: string,
): Promise<DeliveryToSend | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', (join) =>
      join.onRef('w.tenant_id', '=', 'd.tenant_id').onRef('w.id', '=', 'd.webhook_id'),
    )
    .select([
      'd.id',
      'd.webhook_id',
      'd.seq',
      'd.payload',
      'd.status',
      'd.attempts',
      'd.next_retry_at',
      'w.url',
      'w.secret',
      'w.disabled_at',
    ])
    .where('d.tenant_id', '=', tenantId)
    .where('d.webhook_id', '=', webhookId)
    .where('d.status', 'in', ['pending', 'failed'])
    .orderBy('d.seq')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  const payload = typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload;
  return { ...row, payload: payload as Record<string, unknown> };
}

export interface AttemptRecord {
  status: WebhookDeliveryStatus;
  attempts: number;
  responseCode: number | null;
  durationMs: number | null;
  nextRetryAt: string | null;
  lastError: string | null;
}

/** The outcome of one try, on the delivery's row. */
export async function recordAttempt(
  db: Db,
  tenantId: string,
  id: string,
  attempt: AttemptRecord,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: attempt.status,
      attempts: attempt.attempts,
      response_code: attempt.responseCode,
      duration_ms: attempt.durationMs,
      next_retry_at: attempt.nextRetryAt,
      last_error: attempt.lastError === null ? null : attempt.lastError.slice(0, 1000),
      delivered_at: attempt.status === 'delivered' ? sql<string>`now()` : null,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}

/**
 * The receiver asked for no more (410 Gone): the hook is disabled and its events not yet
 * written out as deliveries are dropped, in one transaction; its open deliveries are then
 * given up by its job, `abandonOpenDeliveries` at a time (a hook may have thousands).
 */
export async function disableWebhook(db: Db, tenantId: string, id: string, reason: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhooks')
      .set({ disabled_at: sql<string>`now()`, disabled_reason: reason })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .execute();
    await trx
      .deleteFrom('webhook_fanouts')
      .where('tenant_id', '=', tenantId)
      .where('webhook_id', '=', id)
      .execute();
  });
}

/**
 * Gives up at most `count` open deliveries of a disabled hook, first by `seq`, with the
 * reason it was disabled for; answers how many.
 */
export async function abandonOpenDeliveries(
  db: Db,
  tenantId: string,
  webhookId: string,
  count: number,
): Promise<number> {
  const { numAffectedRows } = await sql`
    UPDATE webhook_deliveries d
       SET status = 'dead', next_retry_at = NULL,
           last_error = 'not sent: ' || coalesce(w.disabled_reason, 'the webhook is disabled')
      FROM webhooks w
     WHERE w.tenant_id = d.tenant_id AND w.id = d.webhook_id
       AND (d.tenant_id, d.id) IN (
         SELECT o.tenant_id, o.id FROM webhook_deliveries o
          WHERE o.tenant_id = ${tenantId}::uuid AND o.webhook_id = ${webhookId}::uuid
            AND o.status IN ('pending', 'failed')
          ORDER BY o.seq
          LIMIT ${count}::integer)`.execute(db);
  return Number(numAffectedRows ?? 0n);
}

/**
 * Removes up to `batch` deliveries a month after they were through, and the bodies and
 * batches no hook needs any more (migration 0026); how many rows. The job worker runs it
 * with its own pruning (src/app.ts registers it).
 */
export async function pruneWebhookRecords(db: Db, batch: number): Promise<number> {
  const { rows } = await sql<{ removed: number }>`SELECT prune_webhook_records(${batch}) AS removed`.execute(
    db,
  );
  return rows[0]?.removed ?? 0;
}
