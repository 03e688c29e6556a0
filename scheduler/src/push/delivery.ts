import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/database.ts';
import type { JobHandler } from '../jobs/worker.ts';
import { vapidKeys } from '../tenants/repository.ts';
import { dropSubscription } from './repository.ts';
import type { PushSender } from './sender.ts';

/**
 * The job that sends one notification to one browser (queued by
 * src/notifications/outbox.ts), run by the job queue in the notification's tenant scope.
 * The payload is the stored notification; its `id` lets the browser drop a repeat (the
 * queue delivers at least once). A subscription the push service calls gone (404/410) is
 * removed; a notification or subscription gone meanwhile leaves nothing to send.
 */
export function pushDelivery(db: Db, sender: PushSender, log: FastifyBaseLogger): JobHandler {
  return async (job) => {
    const { notification_id, subscription_id } = job.payload as {
      notification_id: string;
      subscription_id: string;
    };
    const [notification, target, keys] = await Promise.all([
      db
        .selectFrom('notifications')
        .select(['id', 'tenant_id', 'user_id', 'type', 'title', 'body', 'data', 'read_at', 'created_at'])
        .where('tenant_id', '=', job.tenant_id)
        .where('id', '=', notification_id)
        .executeTakeFirst(),
      db
        .selectFrom('push_subscriptions')
        .select(['id', 'endpoint', 'p256dh', 'auth'])
        .where('tenant_id', '=', job.tenant_id)
        .where('id', '=', subscription_id)
        .executeTakeFirst(),
      vapidKeys(db, job.tenant_id),
    ]);
    if (!notification || !target || !keys) return { outcome: 'done' };
    const vapid = { publicKey: keys.vapid_public_key, privateKey: keys.vapid_private_key };
    const result = await sender.send(target, JSON.stringify(notification), vapid);
    switch (result.outcome) {
      case 'delivered':
        return { outcome: 'done' };
      case 'gone':
        await dropSubscription(db, job.tenant_id, target.id);
        return { outcome: 'done' };
      case 'refused':
        log.warn(
          { notification: notification.id, subscription: target.id },
          'push endpoint refused by the outbound address rules; not sent',
        );
        return { outcome: 'dead', error: `refused by the outbound address rules: ${result.detail}` };
      case 'failed':
        return { outcome: 'dead', error: `the push service refused the message: ${result.detail}` };
      case 'unavailable':
        if (job.attempts >= job.max_attempts) {
          // The operator reads which notification went undelivered, and to which push service.
          log.warn(
            {
              notification: notification.id,
              pushHost: new URL(target.endpoint).host,
              attempts: job.attempts,
            },
            'push message not delivered after retries',
          );
        }
        return { outcome: 'retry', error: `the push service did not take the message: ${result.detail}` };
    }
  };
}
