import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../db/database.ts';
import type { Clock } from '../deps.ts';
import type { JobHandler, JobOutcome } from '../jobs/worker.ts';
import { EXPAND_PER_STEP, WEBHOOK_ATTEMPTS } from './events.ts';
import {
  type AttemptRecord,
  abandonOpenDeliveries,
  type DeliveryToSend,
  disableWebhook,
  expandFanout,
  nextFanout,
  nextOpenDelivery,
  recordAttempt,
} from './repository.ts';
import { postWebhook, type WebhookSendOptions } from './sender.ts';

export interface WebhookDeliveryOptions extends WebhookSendOptions {
  clock: Clock;
  /** The wait before try `attempt + 1` after try `attempt` failed (the queue's doubling backoff). */
  retryDelayMs(attempt: number): number;
  /**
   * Steps one run takes at most (a delivery sent, or a batch's deliveries written) before
   * it hands its slot back to the queue (other hooks and tenants take turns in between);
   * the next run goes on at once.
   */
  perRun: number;
  /**
   * How long after a run's start it may begin another step. A step (one send, at most
   * `timeoutMs`) must end well inside the job's lease, or the queue hands the job to
   * another worker while this run still goes on: half the lease less one send's deadline.
   */
  runBudgetMs: number;
}

export const defaultDeliveriesPerRun = 10;

/** The headers of one try, signed with the hook's secret over id, timestamp and body. */
export function signedHeaders(secret: string, msgId: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(msgId, at, body),
  };
}

/**
 * The job of one hook (queued by src/webhooks/events.ts, one per hook): sends the hook's
 * open deliveries in `seq` order, each after the one before was delivered or given up,
 * writing a large change's deliveries from its batch when they come next (migration 0022).
 * Later deliveries are never claimed while an earlier one is open: they have no job of
 * their own, so nothing polls them and no wake-up can be lost. A run sends up to
 * `perRun` deliveries, or fewer when the next might not end well inside the job's lease,
 * and then lets the queue hand its slot to others (due again at once);
 * when the first open delivery failed, the run ends and the job is due at that
 * delivery's next try. A run that finds nothing open is done; an event queued meanwhile
 * makes the job run once more (src/jobs/queue.ts), so nothing queued waits for a later event.
 *
 * 2xx: delivered. 410 Gone: the hook is disabled, and its open deliveries are given up
 * by the next steps, 500 at a time (its events not yet written out are dropped). A
 * destination the address rules refuse: that delivery is given up. Anything else (no
 * answer, 3xx, 4xx, 5xx): tried again with the queue's doubling wait until the
 * delivery's `WEBHOOK_ATTEMPTS` tries are used, then given up, and the next one goes.
 * A run begins no step past `runBudgetMs` (half the lease less a send's deadline), so
 * only a send that outlives the whole lease (its deadline is far shorter) could repeat a
 * delivery after the job was handed on.
 */
export function webhookDelivery(db: Db, options: WebhookDeliveryOptions, log: FastifyBaseLogger): JobHandler {
  return async (job): Promise<JobOutcome> => {
    const { webhook_id } = job.payload as { webhook_id: string };
    const started = performance.now();
    for (let step = 0; step < options.perRun; step++) {
      // Past the budget the run hands on; the first step always goes (one step fits a lease).
      if (step > 0 && performance.now() - started > options.runBudgetMs) break;
      const delivery = await nextOpenDelivery(db, job.tenant_id, webhook_id);
      // Events of a large change come first in the order: their deliveries are written now.
      const fanout = await nextFanout(db, job.tenant_id, webhook_id);
      if (fanout && (!delivery || fanout.next_seq < delivery.seq)) {
        await expandFanout(db, job.tenant_id, webhook_id, fanout.batch_id, EXPAND_PER_STEP);
        continue;
      }
      // Everything delivered or given up, or the hook was deleted.
      if (!delivery) return { outcome: 'done' };
      // The hook was disabled (a 410): its open deliveries are given up, a step at a time.
      if (delivery.disabled_at !== null) {
        await abandonOpenDeliveries(db, job.tenant_id, webhook_id, EXPAND_PER_STEP);
        continue;
      }
      const waitMs =
        delivery.next_retry_at === null
          ? 0
          : Date.parse(delivery.next_retry_at) - options.clock.now().getTime();
      // Run early (a lease ran out, an upgrade): the first open delivery's next try is not due yet.
      if (waitMs > 0) return { outcome: 'later', delayMs: waitMs };
      const next = await send(db, options, log, job.tenant_id, delivery);
      if (next !== 'next') return next;
    }
    return { outcome: 'later', delayMs: 0 };
  };
}

/**
 * One try of `delivery`, recorded on its row: `next` when it is through (delivered or
 * given up), so the hook's next delivery may go; otherwise the job's outcome.
 */
async function send(
  db: Db,
  options: WebhookDeliveryOptions,
  log: FastifyBaseLogger,
  tenantId: string,
  delivery: DeliveryToSend,
): Promise<JobOutcome | 'next'> {
  const body = JSON.stringify(delivery.payload);
  // The receiver checks this time against its clock: the real one, whatever the app's clock says.
  const headers = signedHeaders(delivery.secret, delivery.id, new Date(), body);
  const result = await postWebhook(options, delivery.url, body, headers);
  const attempts = delivery.attempts + 1;
  const last = attempts >= WEBHOOK_ATTEMPTS;
  const record = (attempt: Omit<AttemptRecord, 'attempts'>) =>
    recordAttempt(db, tenantId, delivery.id, { ...attempt, attempts });

  if ('refused' in result) {
    log.warn(
      { delivery: delivery.id, webhook: delivery.webhook_id },
      'webhook URL refused by the address rules',
    );
    await record({
      status: 'dead',
      responseCode: null,
      durationMs: null,
      nextRetryAt: null,
      lastError: `refused by the outbound address rules: ${result.refused}`,
    });
    return 'next';
  }
  const { status, durationMs } = result;
  const responseCode = status >= 100 && status <= 599 ? status : null;
  if (status >= 200 && status < 300) {
    await record({ status: 'delivered', responseCode, durationMs, nextRetryAt: null, lastError: null });
    return 'next';
  }
  if (status === 410) {
    const reason = 'the receiver answered 410 Gone';
    // Disabled first (nothing more is queued for it), then this one's answer recorded; the
    // next steps give up the rest.
    await disableWebhook(db, tenantId, delivery.webhook_id, reason);
    await record({ status: 'dead', responseCode, durationMs, nextRetryAt: null, lastError: reason });
    log.info({ webhook: delivery.webhook_id }, 'webhook disabled: the receiver answered 410 Gone');
    return 'next';
  }
  const error =
    status === 0 ? 'no answer (refused, reset or timed out)' : `the receiver answered HTTP ${status}`;
  if (last) {
    await record({ status: 'dead', responseCode, durationMs, nextRetryAt: null, lastError: error });
    return 'next';
  }
  const delayMs = options.retryDelayMs(attempts);
  const nextRetryAt = new Date(options.clock.now().getTime() + delayMs).toISOString();
  await record({ status: 'failed', responseCode, durationMs, nextRetryAt, lastError: error });
  return { outcome: 'later', delayMs };
}
