import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { spanOverlaps, type TimeWindow } from '../db/time-window.ts';
import type { TimeOff, TimeOffStatus } from './schemas.ts';

/** The only module that reads or writes `time_off`. */
const columns = [
  'id',
  'tenant_id',
  'user_id',
  'starts_at',
  'ends_at',
  'reason',
  'status',
  'decided_by',
  'decided_at',
  'created_at',
  'decision_reason',
] as const;

export interface TimeOffValues {
  tenant_id: string;
  id: string;
  user_id: string;
  starts_at: string;
  ends_at: string;
  reason: string | null;
  status: 'requested' | 'approved';
}

/** Inserts a time off; an approved one is decided as it is entered (decided_by null). */
export function insertTimeOff(db: Db, values: TimeOffValues): Promise<TimeOff> {
  return db
    .insertInto('time_off')
    .values({ ...values, decided_at: values.status === 'approved' ? sql<string>`now()` : null })
    .returning(columns)
    .executeTakeFirstOrThrow();
}

/** The time off `id` of the tenant, only if it is `userId`'s when one is given. */
function timeOffWhere(db: Db, tenantId: string, id: string, userId: string | undefined) {
  const query = db.selectFrom('time_off').where('tenant_id', '=', tenantId).where('id', '=', id);
  return userId === undefined ? query : query.where('user_id', '=', userId);
}

export function findTimeOff(
  db: Db,
  tenantId: string,
  id: string,
  userId?: string,
): Promise<TimeOff | undefined> {
  return timeOffWhere(db, tenantId, id, userId).select(columns).executeTakeFirst();
}

/**
 * Approves or rejects a requested time off; undefined when it is not requested (any
 * more): the status condition makes concurrent decisions of one request take turns,
 * and only the first changes it.
 */
export function decideTimeOff(
  db: Db,
  decision: {
    tenantId: string;
    id: string;
    status: 'approved' | 'rejected';
    decidedBy: string;
    reason: string | null;
  },
): Promise<TimeOff | undefined> {
  return db
    .updateTable('time_off')
    .set({
      status: decision.status,
      decided_by: decision.decidedBy,
      decided_at: sql<string>`now()`,
      decision_reason: decision.reason,
    })
    .where('tenant_id', '=', decision.tenantId)
    .where('id', '=', decision.id)
    .where('status', '=', 'requested')
    .returning(columns)
    .executeTakeFirst();
}

/**
 * Removes a time off; `onlyRequested` removes it only while it is requested. Undefined
 * when nothing was removed.
 */
export function deleteTimeOff(
  db: Db,
  tenantId: string,
  id: string,
  onlyRequested: boolean,
): Promise<TimeOff | undefined> {
  let query = db.deleteFrom('time_off').where('tenant_id', '=', tenantId).where('id', '=', id);
  if (onlyRequested) query = query.where('status', '=', 'requested');
  return query.returning(columns).executeTakeFirst();
}

/**
 * The user's earliest requested or approved time off overlapping [startsAt, endsAt): what
 * a new request collides with (migration 0020's time_off_no_overlap).
 */
export function findOverlappingTimeOff(db: Db, span: OverlapSpan): Promise<TimeOff | undefined> {
  return db
    .selectFrom('time_off')
    .select(columns)
    .where('tenant_id', '=', span.tenantId)
    .where('user_id', '=', span.userId)
    .where('status', 'in', ['requested', 'approved'])
    .where('starts_at', '<', span.endsAt)
    .where('ends_at', '>', span.startsAt)
    .orderBy('starts_at')
    .orderBy('id')
    .executeTakeFirst();
}

/** Where a page continues: after this time off, in the list's order (start, then id). */
export interface TimeOffCursor {
  id: string;
  /** The start to the microsecond, as the database keeps it. */
  startsAt: string;
}

export function findTimeOffCursor(
  db: Db,
  tenantId: string,
  id: string,
  userId?: string,
): Promise<TimeOffCursor | undefined> {
  return timeOffWhere(db, tenantId, id, userId)
    .select([
      'id',
      sql<string>`to_char(starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('startsAt'),
    ])
    .executeTakeFirst();
}

export interface TimeOffFilter extends TimeWindow {
  tenantId: string;
  userId?: string | undefined;
  status?: TimeOffStatus | undefined;
  after?: TimeOffCursor | undefined;
  limit: number;
}

/** A page of time off overlapping the window, by start, then id. */
export function listTimeOff(db: Db, filter: TimeOffFilter): Promise<TimeOff[]> {
  let query = db
    .selectFrom('time_off as t')
    .select(columns.map((column) => `t.${column}` as const))
    .where('t.tenant_id', '=', filter.tenantId)
    .where(spanOverlaps('t.starts_at', 't.ends_at', filter));
  if (filter.userId !== undefined) query = query.where('t.user_id', '=', filter.userId);
  if (filter.status !== undefined) query = query.where('t.status', '=', filter.status);
  if (filter.after !== undefined) {
    query = query.where(
      sql<boolean>`(t.starts_at, t.id) > (${filter.after.startsAt}::timestamptz, ${filter.after.id}::uuid)`,
    );
  }
  return query.orderBy('t.starts_at').orderBy('t.id').limit(filter.limit).execute();
}

/** An assignment of the user in the way of a time off, with its shift. */
export interface OverlappingAssignment {
  id: string;
  shift_id: string;
  shift_name: string;
}

export interface OverlapSpan {
  tenantId: string;
  userId: string;
  startsAt: string;
  endsAt: string;
}

/** The user's assignments overlapping [startsAt, endsAt), as a query of `a` joined to its shift `s` and event `e`. */
function overlappingAssignments(db: Db, span: OverlapSpan) {
  return db
    .selectFrom('shift_assignments as a')
    .innerJoin('shifts as s', (join) =>
      join.onRef('s.tenant_id', '=', 'a.tenant_id').onRef('s.id', '=', 'a.shift_id'),
    )
    .innerJoin('events as e', (join) =>
      join.onRef('e.tenant_id', '=', 's.tenant_id').onRef('e.id', '=', 's.event_id'),
    )
    .where('a.tenant_id', '=', span.tenantId)
    .where('a.user_id', '=', span.userId)
    .where('a.starts_at', '<', span.endsAt)
    .where('a.ends_at', '>', span.startsAt);
}

/** Staff see a shift once it and its event are published (shifts/visibility.ts). */
const staffSee = sql<boolean>`(s.published_at IS NOT NULL AND e.published_at IS NOT NULL)`;

/**
 * The user's assignments overlapping [startsAt, endsAt), earliest first, at most `limit`;
 * with `onlyVisible`, only those in shifts staff may see.
 */
export function listOverlappingAssignments(
  db: Db,
  span: OverlapSpan,
  options: { limit: number; onlyVisible: boolean },
): Promise<OverlappingAssignment[]> {
  let query = overlappingAssignments(db, span).select(['a.id', 'a.shift_id', 's.name as shift_name']);
  if (options.onlyVisible) query = query.where(staffSee);
  return query.orderBy('a.starts_at').orderBy('a.id').limit(options.limit).execute();
}

/** How many of the user's assignments overlapping [startsAt, endsAt) are in shifts staff cannot see. */
export async function countHiddenOverlaps(db: Db, span: OverlapSpan): Promise<number> {
  const row = await overlappingAssignments(db, span)
    .select(sql<number>`count(*)::int`.as('hidden'))
    .where(sql<boolean>`NOT ${staffSee}`)
    .executeTakeFirstOrThrow();
  return row.hidden;
}
