import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { listNotifications, markAllRead, markRead } from './repository.ts';
import type { MarkAllReadResponse, Notification } from './schemas.ts';

/** The newest this many are listed (the list is not paginated, so it is bounded). */
export const NOTIFICATION_LIST_LIMIT = 1000;

export function getNotifications(deps: Deps, caller: Identity): Promise<Notification[]> {
  return listNotifications(deps.db, caller.tenantId, caller.userId, NOTIFICATION_LIST_LIMIT);
}

/** Marks one of the caller's notifications read; idempotent; anyone else's is 404. */
export async function readNotification(deps: Deps, caller: Identity, id: string): Promise<void> {
  const marked = await unitOfWork(deps, caller, 'notifications.read', async (tx) => {
    const marked = await markRead(tx.db, caller.tenantId, caller.userId, id);
    if (marked)
      await tx.record({ type: 'notifications.read', userId: caller.userId, notificationId: id, marked: 1 });
    return marked;
  });
  if (!marked) throw notFound('notification');
}

export async function readAllNotifications(deps: Deps, caller: Identity): Promise<MarkAllReadResponse> {
  const marked = await unitOfWork(deps, caller, 'notifications.read', async (tx) => {
    const marked = await markAllRead(tx.db, caller.tenantId, caller.userId);
    await tx.record({ type: 'notifications.read', userId: caller.userId, notificationId: null, marked });
    return marked;
  });
  return { marked };
}
