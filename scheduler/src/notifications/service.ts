import type { Identity } from '../auth/identity.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { findShift } from '../shifts/repository.ts';
import { notificationSettings } from '../tenants/repository.ts';
import { stageNotifications } from './outbox.ts';
import { listNotifications, markAllRead, markRead } from './repository.ts';
import type { MarkAllReadResponse, Notification, NotificationMessage } from './schemas.ts';
import type { TimeStyle } from './wording.ts';

/** The newest this many are listed (the list is not paginated, so it is bounded). */
export const NOTIFICATION_LIST_LIMIT = 1000;

export function getNotifications(deps: Deps, caller: Identity): Promise<Notification[]> {
  return listNotifications(deps.db, caller.tenantId, caller.userId, NOTIFICATION_LIST_LIMIT);
}

/** Marks one of the caller's notifications read; idempotent; anyone else's is 404. */
export async function readNotification(deps: Deps, caller: Identity, id: string): Promise<void> {
  if (!(await markRead(deps.db, caller.tenantId, caller.userId, id))) throw notFound('notification');
}

export async function readAllNotifications(deps: Deps, caller: Identity): Promise<MarkAllReadResponse> {
  return { marked: await markAllRead(deps.db, caller.tenantId, caller.userId) };
}

/** Who is told of a change, and what: read only once the tenant wants to be told. */
export interface AssignmentChange {
  userIds: readonly string[];
  message: NotificationMessage;
}

/**
 * Whether staff may see the shift (published, of a published event): a notification
 * names the shift and its times, so a draft is announced to nobody, as every route
 * keeps it from employees.
 */
async function announceable(deps: Deps, tenantId: string, shiftId: string): Promise<boolean> {
  const shift = await findShift(deps.db, { tenantId, now: deps.clock.now(), onlyVisible: true, shiftId });
  return shift !== undefined;
}

/**
 * Queues notifications for the people a change of shift `shiftId` concerns (never
 * `caller`, who made it), when the tenant asked for that (`notify_on_assignment`, off by
 * default) and the shift is one staff may see. Call it with the `Deps` of the change's
 * transaction (jobs/transaction.ts): the notifications and their Web Push deliveries
 * commit with the change, or neither does. `compose` reads what the message needs; it
 * runs only when the setting is on, and is given the tenant's way of writing times.
 */
export async function notifyAssignmentChange(
  tx: Deps,
  caller: Identity,
  shiftId: string,
  compose: (style: TimeStyle) => Promise<AssignmentChange>,
): Promise<void> {
  const settings = await notificationSettings(tx.db, caller.tenantId);
  if (!settings.notifyOnAssignment) return;
  if (!(await announceable(tx, caller.tenantId, shiftId))) return;
  const { userIds, message } = await compose({ timezone: settings.timezone, locale: settings.locale });
  const recipients = [...new Set(userIds)].filter((id) => id !== caller.userId);
  await stageNotifications(tx.db, caller.tenantId, recipients, message, tx.pushAttempts);
}
