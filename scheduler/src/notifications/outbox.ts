import type { Db } from '../db/database.ts';
import { newId } from '../ids.ts';
import { enqueueJobs, type NewJob } from '../jobs/repository.ts';
import { insertNotifications } from './repository.ts';
import type { Notification, NotificationMessage } from './schemas.ts';

/**
 * The transactional outbox: a notification row per user, and a Web Push delivery job per
 * browser of theirs (src/push/delivery.ts), written with `db`, the transaction of the
 * change that causes them. The change and its notifications commit together or not at
 * all; the job queue (src/jobs/) sends them after the commit, in whichever process claims
 * them, at least once. A delivery's idempotency key is its notification and subscription.
 */
export async function stageNotifications(
  db: Db,
  tenantId: string,
  userIds: readonly string[],
  message: NotificationMessage,
  maxAttempts: number,
): Promise<Notification[]> {
  if (userIds.length === 0) return [];
  const notifications = await insertNotifications(
    db,
    userIds.map((userId) => ({
      tenant_id: tenantId,
      id: newId(),
      user_id: userId,
      type: message.type,
      title: message.title,
      body: message.body ?? null,
      data: message.data ?? null,
    })),
  );
  const browsers = await db
    .selectFrom('push_subscriptions')
    .select(['id', 'user_id'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', 'in', [...userIds])
    .execute();
  const jobs: NewJob[] = notifications.flatMap((notification) =>
    browsers
      .filter((browser) => browser.user_id === notification.user_id)
      .map((browser) => ({
        tenant_id: tenantId,
        id: newId(),
        kind: 'push' as const,
        key: `${notification.id}:${browser.id}`,
        payload: { notification_id: notification.id, subscription_id: browser.id },
        max_attempts: maxAttempts,
      })),
  );
  await enqueueJobs(db, jobs);
  return notifications;
}
