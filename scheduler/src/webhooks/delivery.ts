import type { FastifyBaseLogger } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../db/database.ts';
import type { Clock } from '../deps.ts';
import type { JobHandler, JobOutcome } from '../jobs/worker.ts';
import {
  type AttemptRecord,
  abandonDelivery,
  type DeliveryToSend,
  disableWebhook,
  earlierOpenDelivery,
  findDeliveryToSend,
  recordAttempt,
  wakeNextDelivery,
} from './repository.ts';
import { postWebhook, type WebhookSendOptions } from './sender.ts';

export interface WebhookDeliveryOptions extends WebhookSendOptions {
  clock: Clock;
  /** The job queue's wait before try `attempt + 1` after try `attempt` failed (its doubling backoff). */
  retryDelayMs(attempt: number): number;
  /**
   * How long past an earlier delivery's due time a later one waits at most: the earlier
   * one wakes it when it is through, so this only counts when that wake-up is lost (a
   * worker gone mid-try). The job lease is right: by then the earlier try is over.
   */
  fallbackMs: number;
}

/** The headers of one try, signed with the hook's secret over id, timestamp and body. */
export function signedHeaders(secret: string, msgId: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(msgId, at, body),
  };
}

/**
 * The job that sends one webhook delivery (queued by src/webhooks/events.ts), run by the
 * job queue in the delivery's tenant scope.
 *
 * In order per hook: a delivery is not sent while an earlier one of the same hook (by
 * `seq`) is still open with a pending job; it waits without spending a try, and the
 * earlier one, once delivered or given up, makes the next one due at once. So a hook
 * receives its events in the order they were committed, each after the one before was
 * delivered or given up; only a try that outlives its job lease (far longer than the
 * send deadline) could be repeated after a later one.
 *
 * 2xx: delivered. 410 Gone: the hook is disabled and its open deliveries given up. A
 * destination the address rules refuse: given up. Anything else (no answer, 3xx, 4xx,
 * 5xx): tried again with the queue's doubling wait until the job's tries are used.
 */
export function webhookDelivery(db: Db, options: WebhookDeliveryOptions, log: FastifyBaseLogger): JobHandler {
  return async (job): Promise<JobOutcome> => {
    const { delivery_id } = job.payload as { delivery_id: string };
    const queued = await findDeliveryToSend(db, job.tenant_id, delivery_id);
    // Its hook was deleted, or it was settled meanwhile (the hook disabled).
    if (!queued || !isOpen(queued)) return { outcome: 'done' };
    const earlier = await earlierOpenDelivery(db, job.tenant_id, queued);
    if (earlier) {
      const due = Date.parse(earlier.run_at) - options.clock.now().getTime();
      return { outcome: 'later', delayMs: Math.max(0, due) + options.fallbackMs };
    }
    // Read again once the earlier ones are through: a 410 to one of them disables the hook
    // before that delivery is closed, so this read sees the hook disabled whenever the
    // check above saw the earlier delivery closed by it.
    const delivery = await findDeliveryToSend(db, job.tenant_id, delivery_id);
    if (!delivery || !isOpen(delivery)) return { outcome: 'done' };
    if (delivery.disabled_at !== null) {
      await abandonDelivery(db, job.tenant_id, delivery.id, 'not sent: the webhook is disabled');
      return { outcome: 'done' };
    }
    return send(db, options, log, job, delivery);
  };
}

const isOpen = (delivery: { status: string }) =>
  delivery.status === 'pending' || delivery.status === 'failed';

async function send(
  db: Db,
  options: WebhookDeliveryOptions,
  log: FastifyBaseLogger,
  job: { tenant_id: string; attempts: number; max_attempts: number },
  delivery: DeliveryToSend,
): Promise<JobOutcome> {
  const body = JSON.stringify(delivery.payload);
  // The receiver checks this time against its clock: the real one, whatever the app's clock says.
  const headers = signedHeaders(delivery.secret, delivery.id, new Date(), body);
  const result = await postWebhook(options, delivery.url, body, headers);
  const last = job.attempts >= job.max_attempts;
  const record = (attempt: Omit<AttemptRecord, 'attempts'>) =>
    recordAttempt(db, job.tenant_id, delivery.id, { ...attempt, attempts: job.attempts });

  if ('refused' in result) {
    const error = `refused by the outbound address rules: ${result.refused}`;
    log.warn(
      { delivery: delivery.id, webhook: delivery.webhook_id },
      'webhook URL refused by the address rules',
    );
    await record({
      status: 'dead',
      responseCode: null,
      durationMs: null,
      nextRetryAt: null,
      lastError: error,
    });
    await wakeNextDelivery(db, job.tenant_id, delivery);
    return { outcome: 'dead', error };
  }
  const { status, durationMs } = result;
  const responseCode = status >= 100 && status <= 599 ? status : null;
  if (status >= 200 && status < 300) {
    await record({ status: 'delivered', responseCode, durationMs, nextRetryAt: null, lastError: null });
    await wakeNextDelivery(db, job.tenant_id, delivery);
    return { outcome: 'done' };
  }
  if (status === 410) {
    const reason = 'the receiver answered 410 Gone';
    // Disabled first, with every open delivery (this one too): a later delivery that
    // looks in between finds the hook disabled, never this one closed on an enabled hook.
    await disableWebhook(db, job.tenant_id, delivery.webhook_id, reason);
    await record({ status: 'dead', responseCode, durationMs, nextRetryAt: null, lastError: reason });
    log.info({ webhook: delivery.webhook_id }, 'webhook disabled: the receiver answered 410 Gone');
    return { outcome: 'done' };
  }
  const error =
    status === 0 ? 'no answer (refused, reset or timed out)' : `the receiver answered HTTP ${status}`;
  const nextRetryAt = last
    ? null
    : new Date(options.clock.now().getTime() + options.retryDelayMs(job.attempts)).toISOString();
  await record({ status: last ? 'dead' : 'failed', responseCode, durationMs, nextRetryAt, lastError: error });
  if (last) await wakeNextDelivery(db, job.tenant_id, delivery);
  return { outcome: 'retry', error };
}
