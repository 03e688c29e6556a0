import { sql } from 'kysely';
import { isAnyOf } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import { newId } from '../ids.ts';
import { activeAmong } from '../users/repository.ts';
import { insertNotifications } from './repository.ts';
import type { Notification, NotificationMessage } from './schemas.ts';

/**
 * The transactional outbox: a notification row per active user, and a Web Push delivery job per
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
  // Deactivated users are told nothing, by any path (changes, reminders): they can no
  // longer read it, and seats of started shifts stay theirs, so those shifts still concern them.
  const recipients = await activeAmong(db, tenantId, userIds);
  if (recipients.length === 0) return [];
  const notifications = await insertNotifications(
    db,
    recipients.map((userId) => ({
      tenant_id: tenantId,
      id: newId(),
      user_id: userId,
      type: message.type,
      title: message.title,
      body: message.body ?? null,
      data: message.data ?? null,
    })),
  );
  // One statement for every delivery: each recipient's browsers, as they are now, the
  // notifications named in one array. Ids in their wire form (32 hex digits), as
  // everywhere else.
  const hex = (column: string) => sql<string>`replace(${sql.ref(column)}::text, '-', '')`;
  await db
    .insertInto('jobs')
    .columns(['tenant_id', 'id', 'kind', 'key', 'payload', 'max_attempts'])
    .expression((eb) =>
      eb
        .selectFrom('push_subscriptions as b')
        .innerJoin('notifications as n', (join) =>
          join.onRef('n.tenant_id', '=', 'b.tenant_id').onRef('n.user_id', '=', 'b.user_id'),
        )
        .where('b.tenant_id', '=', tenantId)
        .where(
          isAnyOf(
            'n.id',
            notifications.map((n) => n.id),
          ),
        )
        .select([
          'b.tenant_id',
          sql<string>`gen_random_uuid()`.as('id'),
          sql<'push'>`'push'`.as('kind'),
          sql<string>`${hex('n.id')} || ':' || ${hex('b.id')}`.as('key'),
          sql<string>`jsonb_build_object('notification_id', ${hex('n.id')}, 'subscription_id', ${hex('b.id')})`.as(
            'payload',
          ),
          sql<number>`${maxAttempts}::integer`.as('max_attempts'),
        ]),
    )
    .onConflict((oc) => oc.columns(['tenant_id', 'kind', 'key']).doNothing())
    .execute();
  return notifications;
}
