import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { AppError } from '../errors.ts';
import { shiftStatus } from '../shifts/repository.ts';
import type { MyAssignment, ShiftAssignment } from './schemas.ts';

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

/**
 * Takes a seat in one statement: the row is inserted only when the slot belongs to the
 * shift, the shift may be taken (`onlyOpen`) and the user holds the slot's role. The
 * database refuses the rest as the row goes in: a full slot (the fill trigger's capacity
 * check, which queues concurrent claims on the slot's row lock), a second seat on the
 * shift (unique key) and an overlapping assignment (exclusion constraint). Undefined when
 * the conditions left nothing to insert; the caller then asks why.
 */
export async function takeSeat(db: Db, seat: SeatRequest): Promise<ShiftAssignment | undefined> {
  const now = seat.now.toISOString();
  try {
    return await db
      .insertInto('shift_assignments')
      .columns([
        'tenant_id',
        'id',
        'shift_id',
        'slot_id',
        'user_id',
        'source',
        'assigned_by',
        'starts_at',
        'ends_at',
      ])
      .expression((eb) => {
        let query = eb
          .selectFrom('shift_slots as sl')
          .innerJoin('shifts as sh', (join) =>
            join.onRef('sh.tenant_id', '=', 'sl.tenant_id').onRef('sh.id', '=', 'sl.shift_id'),
          )
          .select([
            'sl.tenant_id',
            sql.lit(seat.id).as('id'),
            'sh.id',
            'sl.id',
            sql<string>`${seat.userId}::uuid`.as('user_id'),
            sql<string>`${seat.source}`.as('source'),
            sql<string>`${seat.assignedBy}::uuid`.as('assigned_by'),
            'sh.starts_at',
            'sh.ends_at',
          ])
          .where('sl.tenant_id', '=', seat.tenantId)
          .where('sl.id', '=', seat.slotId)
          .where('sl.shift_id', '=', seat.shiftId)
          .where(({ exists, selectFrom }) =>
            exists(
              selectFrom('user_qualifications as q')
                .select('q.role_id')
                .whereRef('q.tenant_id', '=', 'sl.tenant_id')
                .whereRef('q.role_id', '=', 'sl.role_id')
                .where('q.user_id', '=', seat.userId),
            ),
          );
        if (seat.onlyOpen) {
          query = query
            .where('sh.published_at', 'is not', null)
            .where('sh.ends_at', '>', now)
            .where(({ exists, selectFrom }) =>
              exists(
                selectFrom('events as e')
                  .select('e.id')
                  .whereRef('e.tenant_id', '=', 'sh.tenant_id')
                  .whereRef('e.id', '=', 'sh.event_id')
                  .where('e.published_at', 'is not', null),
              ),
            );
        }
        return query;
      })
      .returning(columns)
      .executeTakeFirst();
  } catch (error) {
    throw seatRefusal(error) ?? error;
  }
}

/** The domain answer to a constraint the database raised while a seat was taken. */
function seatRefusal(error: unknown): AppError | undefined {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  if (isUniqueViolation(error, 'shift_assignments_tenant_id_shift_id_user_id_key')) {
    return new AppError('ALREADY_ASSIGNED', 'the user already holds a seat in this shift');
  }
  if (code === '23P01' && constraint === 'shift_assignments_no_overlap') {
    return new AppError('OVERLAPPING_ASSIGNMENT', 'the user is assigned to an overlapping shift');
  }
  if (code === '23514' && constraint === 'shift_slots_within_capacity') {
    return new AppError('SLOT_FULL', 'the slot is full');
  }
  return undefined;
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

export async function deleteAssignment(db: Db, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('shift_assignments')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The user's assignments with shift and event: upcoming first (soonest first), then past (latest first). */
export async function listUserAssignments(
  db: Db,
  tenantId: string,
  userId: string,
  now: Date,
  onlyVisible: boolean,
): Promise<MyAssignment[]> {
  const at = sql`${now.toISOString()}::timestamptz`;
  let query = db
    .selectFrom('shift_assignments as a')
    .innerJoin('shifts as s', (join) =>
      join.onRef('s.tenant_id', '=', 'a.tenant_id').onRef('s.id', '=', 'a.shift_id'),
    )
    .innerJoin('events as e', (join) =>
      join.onRef('e.tenant_id', '=', 's.tenant_id').onRef('e.id', '=', 's.event_id'),
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
      shiftStatus(now, 's').as('status'),
      'e.id as event_id',
      'e.name as event_name',
    ])
    .where('a.tenant_id', '=', tenantId)
    .where('a.user_id', '=', userId);
  // Staff see a shift once it and its event are published.
  if (onlyVisible)
    query = query.where('s.published_at', 'is not', null).where('e.published_at', 'is not', null);
  const rows = await query
    .orderBy(sql`CASE WHEN s.ends_at > ${at} THEN 0 ELSE 1 END`)
    .orderBy(sql`CASE WHEN s.ends_at > ${at} THEN s.starts_at END`, 'asc')
    .orderBy('s.starts_at', 'desc')
    .orderBy('a.id')
    .execute();
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
    event: { id: row.event_id, name: row.event_name },
  }));
}
