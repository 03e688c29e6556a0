import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/database.ts';
import type { JobHandler } from '../jobs/worker.ts';
import { dropSubscription } from './repository.ts';
import type { PushSender } from './sender.ts';

/**
 * The job that sends one notification to one browser (queued by
 * src/notifications/outbox.ts), run by the job queue in the notification's tenant scope.
 * The payload is the stored notification; its `id` lets the browser drop a repeat (the
 * queue delivers at least once). A subscription the push service calls gone (404/410) is
 * removed; a notification or subscription gone meanwhile, or a browser that has changed
 * hands since, leaves nothing to send.
 */
export function pushDelivery(db: Db, sender: PushSender, log: FastifyBaseLogger): JobHandler {
  return async (job) => {
    const { notification_id, subscription_id } = job.payload as {
      notification_id: string;
      subscription_id: string;
    };
    // One round trip: the notification, the browser and the tenant's keys together.
    const row = await db
      .selectFrom('notifications as n')
      .innerJoin('push_subscriptions as s', (join) => join.onRef('s.tenant_id', '=', 'n.tenant_id'))
      .innerJoin('tenants as t', 't.id', 'n.tenant_id')
      .select([
        'n.id',
        'n.tenant_id',
        'n.user_id',
        'n.type',
        'n.title',
        'n.body',
        'n.data',
        'n.read_at',
        'n.created_at',
        's.id as browser_id',
        's.endpoint',
        's.p256dh',
        's.auth',
        't.vapid_public_key',
        't.vapid_private_key',
      ])
      .where('n.tenant_id', '=', job.tenant_id)
      .where('n.id', '=', notification_id)
      .where('s.id', '=', subscription_id)
      // An endpoint moves to whoever registers it last (a shared browser): a delivery
      // queued for the previous user is not sent to the new one.
      .whereRef('s.user_id', '=', 'n.user_id')
      .executeTakeFirst();
    if (!row) return { outcome: 'done' };
    const { browser_id, endpoint, p256dh, auth, vapid_public_key, vapid_private_key, ...notification } = row;
    const target = { id: browser_id, endpoint, p256dh, auth };
    const keys = { vapid_public_key, vapid_private_key };
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
