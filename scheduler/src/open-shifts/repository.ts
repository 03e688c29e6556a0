import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { overlapsWindow, type TimeWindow } from '../db/time-window.ts';
import { type PlaceColumns, placeOfShift } from '../locations/repository.ts';
import { shiftStatus } from '../shifts/repository.ts';
import type { ShiftStatus } from '../shifts/schemas.ts';
import type { OpenShift } from './schemas.ts';

export interface OpenShiftFilter {
  tenantId: string;
  userId: string;
  now: Date;
  /** Shifts overlapping it; the service has moved its start to `now` at the earliest. */
  window: TimeWindow;
  /** Shifts at most. */
  limit: number;
}

interface OpenSlotRow extends PlaceColumns {
  shift_id: string;
  shift_name: string;
  starts_at: string;
  ends_at: string;
  status: ShiftStatus;
  event_id: string;
  event_name: string;
  event_description: string | null;
  slot_id: string;
  role_id: string;
  role_name: string;
  capacity: number;
  filled_count: number;
}

/**
 * The slots `userId` could claim at `now`, by the rules of a claim (assignments/repository.ts
 * takeSeat, and the database's own: the fill trigger's capacity, the unique seat per shift,
 * the exclusion constraint on overlaps, the active-user and time-off triggers): a published
 * shift of a published event that has not ended; a slot with a free seat whose role the user
 * holds; no seat of the user in the shift or overlapping it; no approved time off of the user
 * overlapping it; an active user. Of the shifts with such a slot, the first `limit` by start
 * (then id), each with all of its claimable slots in their order (creation, then id): one
 * statement, one consistent read, at most `limit` × 50 rows (maxSlotsPerShift).
 */
export async function listOpenShifts(db: Db, filter: OpenShiftFilter): Promise<OpenShift[]> {
  const user = sql`${filter.userId}::uuid`;
  const at = sql`${filter.now.toISOString()}::timestamptz`;
  const { rows } = await sql<OpenSlotRow>`
    WITH claimable AS (
      SELECT sh.id AS shift_id, sh.starts_at, sl.id AS slot_id
        FROM shifts sh
        JOIN events e ON e.tenant_id = sh.tenant_id AND e.id = sh.event_id
        JOIN shift_slots sl ON sl.tenant_id = sh.tenant_id AND sl.shift_id = sh.id
       WHERE sh.tenant_id = ${filter.tenantId}::uuid
         AND sh.published_at IS NOT NULL AND e.published_at IS NOT NULL
         AND sh.ends_at > ${at}
         AND ${overlapsWindow('sh', filter.window, { table: 'shifts', tenantId: filter.tenantId })}
         AND sl.filled_count < sl.capacity
         AND EXISTS (SELECT 1 FROM user_qualifications q
                      WHERE q.tenant_id = sl.tenant_id AND q.role_id = sl.role_id AND q.user_id = ${user})
         -- A seat in the shift overlaps it too; both named, as the claim names both refusals.
         AND NOT EXISTS (SELECT 1 FROM shift_assignments a
                          WHERE a.tenant_id = sh.tenant_id AND a.user_id = ${user}
                            AND (a.shift_id = sh.id OR (a.starts_at < sh.ends_at AND a.ends_at > sh.starts_at)))
         -- As migration 0016's trigger asks it: approved time off lasts at most 366 days.
         AND NOT EXISTS (SELECT 1 FROM time_off t
                          WHERE t.tenant_id = sh.tenant_id AND t.user_id = ${user} AND t.status = 'approved'
                            AND t.starts_at < sh.ends_at AND t.ends_at > sh.starts_at
                            AND t.starts_at > sh.starts_at - interval '8784 hours')
         AND EXISTS (SELECT 1 FROM users u
                      WHERE u.tenant_id = sh.tenant_id AND u.id = ${user} AND u.active)
    ), picked AS (
      SELECT shift_id, starts_at FROM claimable
       GROUP BY shift_id, starts_at
       ORDER BY starts_at, shift_id
       LIMIT ${filter.limit}
    )
    SELECT sh.id AS shift_id, sh.name AS shift_name, sh.starts_at, sh.ends_at,
           ${shiftStatus(filter.now, 'sh')} AS status,
           e.id AS event_id, e.name AS event_name, e.description AS event_description,
           l.id AS location_id, l.name AS location_name, l.street AS location_street,
           l.postal_code AS location_postal_code, l.city AS location_city,
           l.country AS location_country, l.lat AS location_lat, l.lng AS location_lng,
           sl.id AS slot_id, r.id AS role_id, r.name AS role_name, sl.capacity, sl.filled_count
      FROM picked p
      JOIN claimable c ON c.shift_id = p.shift_id
      JOIN shifts sh ON sh.tenant_id = ${filter.tenantId}::uuid AND sh.id = c.shift_id
      JOIN events e ON e.tenant_id = sh.tenant_id AND e.id = sh.event_id
      JOIN shift_slots sl ON sl.tenant_id = sh.tenant_id AND sl.id = c.slot_id
      JOIN roles r ON r.tenant_id = sl.tenant_id AND r.id = sl.role_id
      LEFT JOIN locations l ON l.tenant_id = sh.tenant_id AND l.id = COALESCE(sh.location_id, e.location_id)
     ORDER BY sh.starts_at, sh.id, sl.created_at, sl.id`.execute(db);
  return groupByShift(rows);
}

/** The rows, one per slot in shift order, as one item per shift. */
function groupByShift(rows: readonly OpenSlotRow[]): OpenShift[] {
  const shifts: OpenShift[] = [];
  let current: OpenShift | undefined;
  for (const row of rows) {
    if (current?.shift.id !== row.shift_id) {
      current = {
        shift: {
          id: row.shift_id,
          name: row.shift_name,
          starts_at: row.starts_at,
          ends_at: row.ends_at,
          status: row.status,
        },
        event: { id: row.event_id, name: row.event_name, description: row.event_description },
        location: placeOfShift(row),
        slots: [],
      };
      shifts.push(current);
    }
    current.slots.push({
      id: row.slot_id,
      role: { id: row.role_id, name: row.role_name },
      capacity: row.capacity,
      filled_count: row.filled_count,
    });
  }
  return shifts;
}
