import { sql } from 'kysely';
import { isAnyOf } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import { limitsWindow, overlapsWindow, type TimeWindow } from '../db/time-window.ts';
import { placeOfShift } from '../locations/repository.ts';
import { shiftStatus } from '../shifts/repository.ts';
import { seatRefusal } from './refusals.ts';
import type { MyAssignment, ShiftAssignment, ShiftColleague } from './schemas.ts';

const columns = [
  'id',
  'tenant_id',
  'shift_id',
  'slot_id',
  'user_id',
  'source',
  'assigned_by',
  'created_at',
] as const;

export interface SeatRequest {
  tenantId: string;
  id: string;
  shiftId: string;
  slotId: string;
  userId: string;
  source: 'claim' | 'assign';
  assignedBy: string;
  now: Date;
  /** Claims: only a published shift of a published event that has not ended. */
  onlyOpen: boolean;
}

/** What a try for a seat came to: the seat, a slot without a free seat, or something else to look into. */
export type SeatOutcome =
  | { seat: ShiftAssignment }
  | { refused: 'full' }
  | { refused: 'seated' }
  | { refused: 'unknown slot' }
  | { refused: 'other' };

interface SeatRow extends ShiftAssignment {
  qualified: boolean;
  open: boolean;
  free: boolean;
  seated: boolean;
}

/**
 * Takes a seat in one statement that also says why it took none: the row is inserted
 * only when the slot belongs to the shift, the shift may be taken (`onlyOpen`), the user
 * holds the slot's role and the slot had a free seat when the statement began. The
 * database refuses the rest as the row goes in: a slot that filled meanwhile (the fill
 * trigger's capacity check, which queues concurrent claims on the slot's row lock), a
 * second seat on the shift (unique key) and an overlapping assignment (exclusion
 * constraint). A full slot, the most common refusal in a rush for seats, and a second
 * seat on the shift cost no error at all; any other refusal is left to the caller to look
 * into.
 */
export async function takeSeat(db: Db, seat: SeatRequest): Promise<SeatOutcome> {
  const open = seat.onlyOpen
    ? sql<boolean>`(sh.published_at IS NOT NULL AND sh.ends_at > ${seat.now.toISOString()}::timestamptz
        AND EXISTS (SELECT 1 FROM events e
                     WHERE e.tenant_id = sh.tenant_id AND e.id = sh.event_id AND e.published_at IS NOT NULL))`
    : sql<boolean>`true`;
  let rows: SeatRow[];
  try {
    ({ rows } = await sql<SeatRow>`
      WITH target AS (
        SELECT sl.tenant_id, sl.id AS slot_id, sh.id AS shift_id, sh.starts_at, sh.ends_at,
               sl.filled_count < sl.capacity AS free,
               EXISTS (SELECT 1 FROM shift_assignments a
                        WHERE a.tenant_id = sh.tenant_id AND a.shift_id = sh.id
                          AND a.user_id = ${seat.userId}::uuid) AS seated,
               EXISTS (SELECT 1 FROM user_qualifications q
                        WHERE q.tenant_id = sl.tenant_id AND q.role_id = sl.role_id
                          AND q.user_id = ${seat.userId}::uuid) AS qualified,
               ${open} AS open
          FROM shift_slots sl
          JOIN shifts sh ON sh.tenant_id = sl.tenant_id AND sh.id = sl.shift_id
         WHERE sl.tenant_id = ${seat.tenantId}::uuid AND sl.id = ${seat.slotId}::uuid
           AND sl.shift_id = ${seat.shiftId}::uuid
      ), taken AS (
        INSERT INTO shift_assignments
               (tenant_id, id, shift_id, slot_id, user_id, source, assigned_by, starts_at, ends_at)
        SELECT tenant_id, ${seat.id}::uuid, shift_id, slot_id, ${seat.userId}::uuid, ${seat.source}::text,
               ${seat.assignedBy}::uuid, starts_at, ends_at
          FROM target WHERE qualified AND open AND free AND NOT seated
        RETURNING id, tenant_id, shift_id, slot_id, user_id, source, assigned_by, created_at
      )
      SELECT taken.*, target.qualified, target.open, target.free, target.seated
        FROM target LEFT JOIN taken ON true`.execute(db));
  } catch (error) {
    throw seatRefusal(error) ?? error;
  }
  const row = rows[0];
  if (!row) return { refused: 'unknown slot' };
  const { qualified, open: mayTake, free, seated, ...taken } = row;
  if (taken.id) return { seat: taken };
  if (qualified && mayTake && seated) return { refused: 'seated' };
  if (qualified && mayTake && !free) return { refused: 'full' };
  return { refused: 'other' };
}

export async function holdsRole(db: Db, tenantId: string, userId: string, roleId: string): Promise<boolean> {
  const row = await db
    .selectFrom('user_qualifications')
    .select('role_id')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('role_id', '=', roleId)
    .executeTakeFirst();
  return row !== undefined;
}

export function listShiftAssignments(db: Db, tenantId: string, shiftId: string): Promise<ShiftAssignment[]> {
  return db
    .selectFrom('shift_assignments')
    .select(columns)
    .where('tenant_id', '=', tenantId)
    .where('shift_id', '=', shiftId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findAssignment(db: Db, tenantId: string, shiftId: string, id: string) {
  return db
    .selectFrom('shift_assignments')
    .select([...columns, 'starts_at'])
    .where('tenant_id', '=', tenantId)
    .where('shift_id', '=', shiftId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Removes a seat while `holderId` still holds it: a seat that changed hands meanwhile (a
 * swap) is someone else's now, and stays.
 */
export async function deleteAssignment(
  db: Db,
  tenantId: string,
  id: string,
  holderId: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('shift_assignments')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('user_id', '=', holderId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Holds the slots of `seats` (as their count's update would: FOR NO KEY UPDATE), in one
 * order, before anything else a removal locks: a claim takes the slot first and the
 * webhooks it announces to after, so a removal doing the same never waits on a claim that
 * waits on it.
 */
export async function holdSlotsOf(db: Db, tenantId: string, seats: SeatsOf): Promise<void> {
  let query = db
    .selectFrom('shift_slots as sl')
    .select('sl.id')
    .where('sl.tenant_id', '=', tenantId)
    .where(({ exists, selectFrom }) => {
      let seat = selectFrom('shift_assignments as a')
        .select('a.id')
        .whereRef('a.tenant_id', '=', 'sl.tenant_id')
        .whereRef('a.slot_id', '=', 'sl.id');
      seat =
        'ids' in seats
          ? seat.where(isAnyOf('a.id', seats.ids))
          : seat
              .where('a.user_id', '=', seats.upcomingOf)
              .where('a.starts_at', '>', seats.after.toISOString());
      return exists(seat);
    })
    .orderBy('sl.id');
  query = query.forNoKeyUpdate();
  await query.execute();
}

/** Seats by id, or a user's seats of shifts starting after a moment. */
export type SeatsOf = { ids: readonly string[] } | { upcomingOf: string; after: Date };

/**
 * Frees a deactivated user's upcoming seats: assignments of shifts that have not started
 * and hold no recorded time, as they were. Seats of started or past shifts stay, as
 * records. One statement: a time entry committed meanwhile keeps its seat.
 */
export function releaseUpcomingSeats(db: Db, tenantId: string, userId: string, after: Date) {
  return db
    .deleteFrom('shift_assignments as a')
    .where('a.tenant_id', '=', tenantId)
    .where('a.user_id', '=', userId)
    .where('a.starts_at', '>', after.toISOString())
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('time_entries as t')
            .select('t.id')
            .whereRef('t.tenant_id', '=', 'a.tenant_id')
            .whereRef('t.shift_assignment_id', '=', 'a.id'),
        ),
      ),
    )
    .returning(columns.map((column) => `a.${column}` as const))
    .execute();
}

export interface UserAssignmentFilter {
  tenantId: string;
  userId: string;
  now: Date;
  /** Staff see a shift once it and its event are published. */
  onlyVisible: boolean;
  window?: TimeWindow | undefined;
}

/**
 * The user's assignments with shift, event, role and location, as a query: upcoming first (soonest
 * first), then past (latest first); with a window, those overlapping it. An assignment
 * holds its shift's times (a foreign key keeps them equal), so the window is asked of the
 * assignment's own columns, bounded by the tenant's longest shift, a range of the
 * `(tenant_id, user_id, starts_at)` index.
 */
export function selectUserAssignments(db: Db, filter: UserAssignmentFilter) {
  const at = sql`${filter.now.toISOString()}::timestamptz`;
  let query = db
    .selectFrom('shift_assignments as a')
    .innerJoin('shifts as s', (join) =>
      join.onRef('s.tenant_id', '=', 'a.tenant_id').onRef('s.id', '=', 'a.shift_id'),
    )
    .innerJoin('events as e', (join) =>
      join.onRef('e.tenant_id', '=', 's.tenant_id').onRef('e.id', '=', 's.event_id'),
    )
    .innerJoin('shift_slots as sl', (join) =>
      join.onRef('sl.tenant_id', '=', 'a.tenant_id').onRef('sl.id', '=', 'a.slot_id'),
    )
    .innerJoin('roles as r', (join) =>
      join.onRef('r.tenant_id', '=', 'sl.tenant_id').onRef('r.id', '=', 'sl.role_id'),
    )
    // The shift's place, else its event's (as GET /me/open-shifts and the calendar feed).
    .leftJoin('locations as l', (join) =>
      join
        .onRef('l.tenant_id', '=', 's.tenant_id')
        .on((eb) => eb('l.id', '=', eb.fn.coalesce('s.location_id', 'e.location_id'))),
    )
    .select([
      'a.id',
      'a.tenant_id',
      'a.shift_id',
      'a.slot_id',
      'a.user_id',
      'a.source',
      'a.assigned_by',
      'a.created_at',
      's.name as shift_name',
      's.starts_at',
      's.ends_at',
      shiftStatus(filter.now, 's').as('status'),
      'e.id as event_id',
      'e.name as event_name',
      'e.starts_at as event_starts_at',
      'e.ends_at as event_ends_at',
      'r.id as role_id',
      'r.name as role_name',
      'l.id as location_id',
      'l.name as location_name',
      'l.street as location_street',
      'l.city as location_city',
      'l.postal_code as location_postal_code',
      'l.country as location_country',
      'l.lat as location_lat',
      'l.lng as location_lng',
    ])
    .where('a.tenant_id', '=', filter.tenantId)
    .where('a.user_id', '=', filter.userId);
  if (filter.onlyVisible)
    query = query.where('s.published_at', 'is not', null).where('e.published_at', 'is not', null);
  if (filter.window && limitsWindow(filter.window))
    query = query.where(overlapsWindow('a', filter.window, { table: 'shifts', tenantId: filter.tenantId }));
  return query
    .orderBy(sql`CASE WHEN s.ends_at > ${at} THEN 0 ELSE 1 END`)
    .orderBy(sql`CASE WHEN s.ends_at > ${at} THEN s.starts_at END`, 'asc')
    .orderBy('s.starts_at', 'desc')
    .orderBy('a.id');
}

/**
 * The user's assignments with shift, event, the slot's role and the shift's place, in
 * the order of selectUserAssignments: one statement, whatever the number of assignments.
 */
export async function listUserAssignments(db: Db, filter: UserAssignmentFilter): Promise<MyAssignment[]> {
  const rows = await selectUserAssignments(db, filter).execute();
  return rows.map((row) => ({
    id: row.id,
    tenant_id: row.tenant_id,
    shift_id: row.shift_id,
    slot_id: row.slot_id,
    user_id: row.user_id,
    source: row.source,
    assigned_by: row.assigned_by,
    created_at: row.created_at,
    shift: {
      id: row.shift_id,
      name: row.shift_name,
      starts_at: row.starts_at,
      ends_at: row.ends_at,
      status: row.status,
    },
    event: {
      id: row.event_id,
      name: row.event_name,
      starts_at: row.event_starts_at,
      ends_at: row.event_ends_at,
    },
    role: { id: row.role_id, name: row.role_name },
    location: placeOfShift(row),
  }));
}

/** The people holding a seat in the shift, each with the role of their slot; by name, then id. One statement. */
export async function listShiftPeople(db: Db, tenantId: string, shiftId: string): Promise<ShiftColleague[]> {
  const rows = await db
    .selectFrom('shift_assignments as a')
    .innerJoin('users as u', (join) =>
      join.onRef('u.tenant_id', '=', 'a.tenant_id').onRef('u.id', '=', 'a.user_id'),
    )
    .innerJoin('shift_slots as sl', (join) =>
      join.onRef('sl.tenant_id', '=', 'a.tenant_id').onRef('sl.id', '=', 'a.slot_id'),
    )
    .innerJoin('roles as r', (join) =>
      join.onRef('r.tenant_id', '=', 'sl.tenant_id').onRef('r.id', '=', 'sl.role_id'),
    )
    .select(['u.id', 'u.display_name as name', 'r.id as role_id', 'r.name as role_name'])
    .where('a.tenant_id', '=', tenantId)
    .where('a.shift_id', '=', shiftId)
    .orderBy('u.display_name')
    .orderBy('u.id')
    .execute();
  return rows.map((row) => ({ id: row.id, name: row.name, role: { id: row.role_id, name: row.role_name } }));
}
