import { sql } from 'kysely';
import { type RowColumns, unnestRows } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import type { Notification } from './schemas.ts';

const columns = [
  'id',
  'tenant_id',
  'user_id',
  'type',
  'title',
  'body',
  'data',
  'read_at',
  'created_at',
] as const;

export interface NotificationValues {
  tenant_id: string;
  id: string;
  user_id: string;
  type: string;
  title: string;
  body: string | null;
  data: Record<string, unknown> | null;
}

const insertedColumns: RowColumns<Omit<NotificationValues, 'data'> & { data: string | null }> = [
  ['tenant_id', 'uuid'],
  ['id', 'uuid'],
  ['user_id', 'uuid'],
  ['type', 'text'],
  ['title', 'text'],
  ['body', 'text'],
  ['data', 'jsonb'],
];

/** One statement for every recipient of the same message, one array per column. */
export function insertNotifications(db: Db, rows: readonly NotificationValues[]): Promise<Notification[]> {
  return db
    .insertInto('notifications')
    .columns(insertedColumns.map(([column]) => column))
    .expression(
      unnestRows(
        rows.map((row) => ({ ...row, data: row.data === null ? null : JSON.stringify(row.data) })),
        insertedColumns,
      ),
    )
    .returning(columns)
    .execute();
}

/** Newest first; at most `limit` (a list is not paginated, so it is bounded instead). */
export function listNotifications(
  db: Db,
  tenantId: string,
  userId: string,
  limit: number,
): Promise<Notification[]> {
  return db
    .selectFrom('notifications')
    .select(columns)
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** True when the notification is the user's (read now, or read already). */
export async function markRead(db: Db, tenantId: string, userId: string, id: string): Promise<boolean> {
  const row = await db
    .updateTable('notifications')
    .set({ read_at: sql<string>`coalesce(read_at, now())` })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** How many were unread. */
export async function markAllRead(db: Db, tenantId: string, userId: string): Promise<number> {
  const result = await db
    .updateTable('notifications')
    .set({ read_at: sql<string>`now()` })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
