import { type Insertable, sql, type Updateable } from 'kysely';
import type { Db } from '../db/database.ts';
import { limitsWindow, overlapsWindow, type TimeWindow } from '../db/time-window.ts';
import type { EventsTable } from '../db/types.ts';
import type { Event } from './schemas.ts';

const columns = [
  'id',
  'tenant_id',
  'name',
  'description',
  'location_id',
  'starts_at',
  'ends_at',
  'published_at',
  'submission_id',
  'created_at',
] as const;

type EventRow = Omit<Event, 'status'>;

/** Status is not stored: an event is published once it has a publication time. */
function withStatus(row: EventRow): Event {
  return { ...row, status: row.published_at === null ? 'draft' : 'published' };
}

/** The events a list shows, by start, as a query (listEvents runs it; a test reads its plan). */
export function selectEventList(db: Db, tenantId: string, onlyPublished: boolean, window: TimeWindow = {}) {
  let query = db.selectFrom('events').select(columns).where('tenant_id', '=', tenantId);
  if (onlyPublished) query = query.where('published_at', 'is not', null);
  if (limitsWindow(window))
    query = query.where(overlapsWindow('events', window, { table: 'events', tenantId }));
  return query.orderBy('starts_at').orderBy('id');
}

export async function listEvents(
  db: Db,
  tenantId: string,
  onlyPublished: boolean,
  window: TimeWindow = {},
): Promise<Event[]> {
  const rows = await selectEventList(db, tenantId, onlyPublished, window).execute();
  return rows.map(withStatus);
}

export async function findEvent(
  db: Db,
  tenantId: string,
  id: string,
  onlyPublished: boolean,
): Promise<Event | undefined> {
  let query = db.selectFrom('events').select(columns).where('tenant_id', '=', tenantId).where('id', '=', id);
  if (onlyPublished) query = query.where('published_at', 'is not', null);
  const row = await query.executeTakeFirst();
  return row && withStatus(row);
}

/**
 * Whether the event exists, holding it (FOR KEY SHARE) until the transaction ends: a
 * delete waits for the transaction, and one that committed first is seen as gone.
 * Edits of the event's fields go on. Run it in a transaction.
 */
export async function holdEvent(db: Db, tenantId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('events')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .forKeyShare()
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertEvent(
  db: Db,
  row: Omit<Insertable<EventsTable>, 'created_at' | 'published_at'>,
): Promise<Event> {
  return withStatus(await db.insertInto('events').values(row).returning(columns).executeTakeFirstOrThrow());
}

/**
 * Changes an event; with `asRead`, only while its times are still those (a concurrent
 * change of times makes it update nothing). Undefined when nothing was updated.
 */
export async function updateEvent(
  db: Db,
  tenantId: string,
  id: string,
  changes: Pick<Updateable<EventsTable>, 'name' | 'description' | 'location_id' | 'starts_at' | 'ends_at'>,
  asRead?: { starts_at: string; ends_at: string },
): Promise<Event | undefined> {
  let query = db.updateTable('events').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id);
  if (asRead) {
    query = query
      .where('starts_at', '=', sql<string>`${asRead.starts_at}::timestamptz`)
      .where('ends_at', '=', sql<string>`${asRead.ends_at}::timestamptz`);
  }
  const row = await query.returning(columns).executeTakeFirst();
  return row && withStatus(row);
}

/** Publishes a draft; undefined when the event is missing or already published. */
export async function publishDraftEvent(
  db: Db,
  tenantId: string,
  id: string,
  at: Date,
): Promise<Event | undefined> {
  const row = await db
    .updateTable('events')
    .set({ published_at: at.toISOString() })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('published_at', 'is', null)
    .returning(columns)
    .executeTakeFirst();
  return row && withStatus(row);
}

export async function deleteEvent(db: Db, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('events')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Whether any shift of the event holds an assignment (the event may then not be deleted). */
export async function eventHasAssignments(db: Db, tenantId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('shift_assignments as a')
    .innerJoin('shifts as s', (join) =>
      join.onRef('s.tenant_id', '=', 'a.tenant_id').onRef('s.id', '=', 'a.shift_id'),
    )
    .select('a.id')
    .where('a.tenant_id', '=', tenantId)
    .where('s.event_id', '=', id)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
