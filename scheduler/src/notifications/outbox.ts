import type { InUnit } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { newId } from '../ids.ts';
import { activeAmong } from '../users/repository.ts';
import { insertNotifications } from './repository.ts';
import type { Notification, NotificationMessage } from './schemas.ts';

/**
 * The transactional outbox: a notification row per active user, written in the
 * transaction of the change that causes them, and recorded as `notifications.staged`, to
 * which the push feature reacts with a delivery job per browser (src/push/reactions.ts).
 * The change and its notifications commit together or not at all; the job queue
 * (src/jobs/) sends them after the commit, in whichever process claims them, at least
 * once.
 */
export async function stageNotifications(
  tx: InUnit<Deps>,
  userIds: readonly string[],
  message: NotificationMessage,
): Promise<Notification[]> {
  return stageMessages(
    tx,
    userIds.map((userId) => ({ userId, message })),
  );
}

/**
 * Each message to its person, in one statement and one `notifications.staged`, however
 * many: the outbox as `stageNotifications` fills it, for messages that differ per person
 * (a published schedule tells each person of their own weeks, in their own language).
 */
export async function stageMessages(
  tx: InUnit<Deps>,
  messages: readonly { userId: string; message: NotificationMessage }[],
): Promise<Notification[]> {
  const tenantId = tx.by.tenantId;
  // Deactivated users are told nothing, by any path (changes, reminders): they can no
  // longer read it, and seats of started shifts stay theirs, so those shifts still concern them.
  const active = new Set(
    await activeAmong(
      tx.db,
      tenantId,
      messages.map((m) => m.userId),
    ),
  );
  const rows = messages.filter((m) => active.has(m.userId));
  if (rows.length === 0) return [];
  const notifications = await insertNotifications(
    tx.db,
    rows.map(({ userId, message }) => ({
      tenant_id: tenantId,
      id: newId(),
      user_id: userId,
      type: message.type,
      title: message.title,
      body: message.body ?? null,
      data: message.data ?? null,
    })),
  );
  await tx.record({ type: 'notifications.staged', notificationIds: notifications.map((n) => n.id) });
  return notifications;
}
