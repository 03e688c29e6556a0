import type { WebhookEventType } from '../changes/catalogue.ts';
import type { Deps } from '../deps.ts';
import { newId } from '../ids.ts';
import { queueJobRuns } from '../jobs/queue.ts';
import { insertBatch, insertDeliveries, lockSubscribedHooks, takeSequenceNumbers } from './repository.ts';

/**
 * Tries per delivery before it is given up (`dead`): with the job queue's doubling wait
 * (1 s at first, at most 10 minutes) the last try comes about half an hour after the first.
 */
export const WEBHOOK_ATTEMPTS = 12;

/**
 * Runs of a hook's job (src/webhooks/delivery.ts) that may fail in a row before the job is
 * given up: a run fails only when the database does (a receiver's failure is the
 * delivery's try, not the job's), so this outlasts a long outage; a later event of the
 * hook queues the job again.
 */
export const HOOK_JOB_ATTEMPTS = 100;

/**
 * Deliveries one change writes itself at most (hooks × records). Beyond that the change
 * writes its bodies once, with each hook's share of them, and each hook's job writes its
 * deliveries when they are next in its order, `EXPAND_PER_STEP` at a time (migration
 * 0022): what one change costs is then one row per record and one per hook, whatever the
 * product, so a publication of 541 shifts to 20 hooks writes 561 rows, not 10,820.
 */
export const DIRECT_DELIVERIES = 100;

/** Deliveries a hook's job writes from a batch in one step (one short transaction). */
export const EXPAND_PER_STEP = 500;

/** The job that sends a hook's deliveries, in order: one per hook (migration 0019). */
export const hookJob = (webhookId: string) => ({
  kind: 'webhook' as const,
  key: `hook:${webhookId}`,
  payload: { webhook_id: webhookId },
  maxAttempts: HOOK_JOB_ATTEMPTS,
});

/**
 * Queues events of one type for every enabled webhook of the tenant subscribed to it, in
 * the change's transaction (src/webhooks/reactions.ts calls it for every change the
 * catalogue maps to a webhook): the change and its deliveries commit together, and a
 * change that rolls back sends nothing. Each delivery gets the hook's next number under
 * the hook's row lock, held to the end of the transaction, so a hook's numbers follow the
 * order its changes commit in (the hook's job sends them in that order). The body is the
 * Standard Webhooks shape `{type, timestamp, data}`, fixed here so every retry sends (and
 * signs) the same bytes.
 *
 * The records are read only when a hook subscribes to the type: a tenant without
 * webhooks pays one statement per change. The
 * deliveries are one statement whatever their number, or, past `DIRECT_DELIVERIES`, the
 * bodies once and a share per hook; each subscribed hook's job is made sure to run after
 * the commit (src/jobs/queue.ts): a hook with a backlog gets no second job, one that is
 * sending right now runs once more.
 */
export async function queueWebhookEvents(
  tx: Deps,
  tenantId: string,
  type: WebhookEventType,
  records: () => Promise<Record<string, unknown>[]>,
): Promise<void> {
  const hookIds = await lockSubscribedHooks(tx.db, tenantId, type);
  if (hookIds.length === 0) return;
  const data = await records();
  if (data.length === 0) return;
  const hooks = await takeSequenceNumbers(tx.db, tenantId, hookIds, data.length);
  const timestamp = tx.clock.now().toISOString();
  const bodies = data.map((record) => ({ type, timestamp, data: record }));
  // The hook's numbers after the ones taken before: lastSeq is the last of this range.
  const firstSeq = (hook: { lastSeq: number }) => hook.lastSeq - data.length + 1;
  if (hooks.length * bodies.length <= DIRECT_DELIVERIES) {
    await insertDeliveries(
      tx.db,
      tenantId,
      hooks.flatMap((hook) =>
        bodies.map((payload, index) => ({
          id: newId(),
          webhookId: hook.id,
          seq: firstSeq(hook) + index,
          type,
          payload,
        })),
      ),
    );
  } else {
    await insertBatch(
      tx.db,
      tenantId,
      { id: newId(), type, bodies },
      hooks.map((hook) => ({ id: hook.id, firstSeq: firstSeq(hook) })),
    );
  }
  await queueJobRuns(
    tx.db,
    tenantId,
    hooks.map((hook) => hookJob(hook.id)),
  );
}
