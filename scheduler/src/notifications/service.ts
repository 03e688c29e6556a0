import type { Identity } from '../auth/identity.ts';
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
  if (!(await markRead(deps.db, caller.tenantId, caller.userId, id))) throw notFound('notification');
}

export async function readAllNotifications(deps: Deps, caller: Identity): Promise<MarkAllReadResponse> {
  return { marked: await markAllRead(deps.db, caller.tenantId, caller.userId) };
}
