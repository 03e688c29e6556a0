import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { type Caller, uniqueName } from './context.ts';
import { created, newEvent, newRole, newShift, qualify } from './scheduling.ts';

/**
 * Switches time tracking on (or off) for the admin's tenant; the time zone goes with it.
 * Time may be recorded before a shift ends (`time_entries_before_end`) unless told
 * otherwise: the shifts these tests record lie in 2030, and what they check is the
 * recording itself. The rule that waits for the end has tests of its own
 * (time-tracking/routes, db/rules), with `beforeEnd` false.
 */
export async function setTimeTracking(
  admin: Caller,
  enabled: boolean,
  timezone = 'UTC',
  beforeEnd = true,
): Promise<void> {
  const response = await admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: enabled,
    timezone,
    time_entries_before_end: beforeEnd,
  });
  expect(response.statusCode, response.body).toBe(200);
}

/**
 * Time tracking on, recorded before the end, and an entry recorded by the admin on
 * `assignmentId` over newShift's default hours (10:00 to 14:00 UTC on 2 July 2030): a seat
 * with recorded time, which offers and moves must leave alone.
 */
export async function recordTimeOn(admin: Caller, assignmentId: string): Promise<void> {
  await admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: true,
    time_entries_before_end: true,
  });
  await created(admin, '/api/v1/time-tracking/entries', {
    shift_assignment_id: assignmentId,
    started_at: '2030-07-02T10:00:00Z',
    ended_at: '2030-07-02T14:00:00Z',
  });
}

/**
 * An admin assignment of `worker` to a new shift (10:00 to 14:00 UTC on 2 July 2030
 * unless told otherwise) of an event spanning 2030 and the shift: what a time entry is
 * recorded for.
 */
export async function assignedShift(
  admin: Caller,
  worker: Caller,
  times: { starts_at?: string; ends_at?: string } = {},
): Promise<string> {
  const role = await newRole(admin, uniqueName('Cook'));
  await qualify(admin, worker, role);
  const earliest = (a: string, b?: string) => (b && Date.parse(b) < Date.parse(a) ? b : a);
  const latest = (a: string, b?: string) => (b && Date.parse(b) > Date.parse(a) ? b : a);
  const event = await newEvent(admin, {
    starts_at: earliest('2030-01-01T00:00:00Z', times.starts_at),
    ends_at: latest('2030-12-31T00:00:00Z', times.ends_at),
  });
  const shift = await newShift(admin, event, { roleId: role, capacities: [1], ...times });
  return (
    await created(admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
      user_id: worker.userId,
    })
  ).id;
}

/**
 * Every balance of the database next to the sum of its ledger rows, and every user with
 * ledger rows but no balance: the rows where the two disagree. Empty when the books hold.
 */
export async function ledgerMismatches(db: Db): Promise<unknown[]> {
  const result = await sql`
    SELECT coalesce(b.tenant_id, l.tenant_id) AS tenant_id, coalesce(b.user_id, l.user_id) AS user_id,
           b.balance_minutes, l.total
      FROM overtime_balances b
      FULL JOIN (SELECT tenant_id, user_id, sum(delta_minutes)::bigint AS total
                   FROM overtime_ledger GROUP BY tenant_id, user_id) l
        ON l.tenant_id = b.tenant_id AND l.user_id = b.user_id
     WHERE b.balance_minutes IS DISTINCT FROM l.total`.execute(db);
  return result.rows;
}
