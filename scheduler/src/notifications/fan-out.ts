import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/database.ts';
import { asTenant } from '../db/tenant-scope.ts';
import { newId } from '../ids.ts';
import { dropSubscription, subscriptionsOf } from '../push/repository.ts';
import type { PushSender } from '../push/sender.ts';
import { vapidKeys } from '../tenants/repository.ts';
import { insertNotifications } from './repository.ts';
import type { Notification, NotificationMessage } from './schemas.ts';

/**
 * The one fan-out operation: stores a notification row for a user, then sends it by Web
 * Push to each of the user's subscriptions, signed with the tenant's VAPID key pair.
 *
 * It is called after the business operation has committed and never fails it: every
 * error is logged and swallowed. The sends run on the push queue, not in the request
 * (the request waits only for the row); a subscription the push service calls gone
 * (404/410) is removed, transient failures are retried by the sender.
 */
export class Notifier {
  private readonly deliveries = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly push: PushSender,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Stores one row per user (one statement), then sends each off the caller's path. */
  async notify(tenantId: string, userIds: readonly string[], message: NotificationMessage): Promise<void> {
    if (userIds.length === 0) return;
    let notifications: Notification[];
    try {
      notifications = await asTenant(tenantId, () =>
        insertNotifications(
          this.db,
          userIds.map((userId) => ({
            tenant_id: tenantId,
            id: newId(),
            user_id: userId,
            type: message.type,
            title: message.title,
            body: message.body ?? null,
            data: message.data ?? null,
          })),
        ),
      );
    } catch (error) {
      this.log.error(
        { err: error, tenantId, users: userIds.length, type: message.type },
        'notification not stored',
      );
      return;
    }
    for (const notification of notifications) {
      // Its own tenant's scope, whatever scope the caller was in when it queued.
      const delivery = asTenant(notification.tenant_id, () => this.deliver(notification)).catch(
        (error: unknown) => {
          this.log.error({ err: error, notification: notification.id }, 'push delivery failed');
        },
      );
      this.deliveries.add(delivery);
      void delivery.finally(() => this.deliveries.delete(delivery));
    }
  }

  /** Resolves when every delivery started so far has finished (tests, graceful stop). */
  async idle(): Promise<void> {
    while (this.deliveries.size > 0) await Promise.all([...this.deliveries]);
  }

  private async deliver(notification: Notification): Promise<void> {
    const [targets, keys] = await Promise.all([
      subscriptionsOf(this.db, notification.tenant_id, notification.user_id),
      vapidKeys(this.db, notification.tenant_id),
    ]);
    if (targets.length === 0 || !keys) return;
    const payload = JSON.stringify(notification);
    const vapid = { publicKey: keys.vapid_public_key, privateKey: keys.vapid_private_key };
    await Promise.all(
      targets.map(async (target) => {
        const outcome = await this.push.send(target, payload, vapid);
        if (outcome === 'gone') await dropSubscription(this.db, notification.tenant_id, target.id);
        if (outcome === 'refused') {
          this.log.warn(
            { notification: notification.id, subscription: target.id },
            'push endpoint refused by the outbound address rules; not sent',
          );
        }
        if (outcome === 'failed') {
          this.log.warn(
            { notification: notification.id, pushHost: new URL(target.endpoint).host },
            'push message not delivered after retries',
          );
        }
      }),
    );
  }
}
