import { type Insertable, sql, type Updateable } from 'kysely';
import { isAnyOf } from '../db/arrays.ts';
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

/** Publishes the drafts among these events; answers those it published, by id. */
export async function publishDraftEvents(
  db: Db,
  tenantId: string,
  ids: readonly string[],
  at: Date,
): Promise<Event[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('events')
    .set({ published_at: at.toISOString() })
    .where('tenant_id', '=', tenantId)
    .where(isAnyOf('id', ids))
    .where('published_at', 'is', null)
    .returning(columns)
    .execute();
  return rows.map(withStatus).sort((a, b) => (a.id < b.id ? -1 : 1));
}

/**
 * Rows one step of an event's deletion removes at most: shifts and their slots, or
 * documents (the audit log gets one row more for each). On the embedded database a step
 * holds the one session, and so every other request, for about a quarter of a second at
 * this size (0.5 ms a row with its audit row, measured on a busy 2-core machine; the
 * 30,000 rows of 10,000 shifts of 2 slots took 12 s there as one statement).
 */
export const deleteStepRows = 500;

/**
 * The next shifts of an event to delete, earliest first: as many as, with their slots,
 * make at most `rows` rows (at least one shift, which holds 50 slots at most).
 */
export async function nextShiftsToDelete(
  db: Db,
  tenantId: string,
  eventId: string,
  rows: number,
): Promise<string[]> {
  const found = await db
    .selectFrom('shifts as s')
    .select([
      's.id',
      sql<number>`(SELECT count(*) FROM shift_slots sl WHERE sl.tenant_id = s.tenant_id AND sl.shift_id = s.id)::int`.as(
        'slots',
      ),
    ])
    .where('s.tenant_id', '=', tenantId)
    .where('s.event_id', '=', eventId)
    .orderBy('s.starts_at')
    .limit(rows)
    .execute();
  const ids: string[] = [];
  let total = 0;
  for (const shift of found) {
    const cost = 1 + shift.slots;
    if (ids.length > 0 && total + cost > rows) break;
    ids.push(shift.id);
    total += cost;
  }
  return ids;
}

/**
 * Deletes these shifts of the event with their slots, in one statement. A shift holding
 * an assignment makes the database refuse the whole statement (foreign key violation).
 */
export async function deleteShifts(db: Db, tenantId: string, eventId: string, ids: string[]): Promise<void> {
  await db
    .deleteFrom('shifts')
    .where('tenant_id', '=', tenantId)
    .where('event_id', '=', eventId)
    .where('id', 'in', ids)
    .execute();
}

/** Deletes up to `rows` documents of the event; how many went. */
export async function deleteSomeDocuments(
  db: Db,
  tenantId: string,
  eventId: string,
  rows: number,
): Promise<number> {
  const result = await db
    .deleteFrom('event_documents')
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('event_documents')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('event_id', '=', eventId)
        .limit(rows),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes the event row, with whatever shifts and documents it still has. */
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
