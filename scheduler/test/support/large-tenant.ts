import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/** What fillLargeTenant laid down, for the queries asked of it. */
export interface LargeTenant {
  tenantId: string;
  /** An employee holding `assignments` seats, one every ten hours. */
  userId: string;
  shifts: number;
  events: number;
  assignments: number;
}

/** The first shift's start; shift i starts two hours after shift i - 1 and lasts four. */
export const largeTenantStart = '2010-01-01T00:00:00Z';

/**
 * A tenant with years of planning, laid down with set-based SQL as the owner (seconds,
 * not minutes): `shifts` shifts of 4 hours, one starting every 2 hours from
 * largeTenantStart (100,000 reach into 2032), every tenth a draft; `events` published
 * events sharing them out in order, each spanning its shifts; one slot of one seat on
 * every fifth shift, each held by one employee (their seats never overlap). Statistics
 * are gathered at the end, as autovacuum would, so the planner sees the real table.
 * Used by test/db/time-window.test.ts and bench/shift-window-plan.
 */
export async function fillLargeTenant(
  owner: Db,
  options: { shifts?: number; events?: number } = {},
): Promise<LargeTenant> {
  const shifts = options.shifts ?? 100_000;
  const events = options.events ?? 5_000;
  const perEvent = Math.ceil(shifts / events);
  const tenantId = randomUUID();
  const userId = randomUUID();
  const roleId = randomUUID();
  const start = sql`${largeTenantStart}::timestamptz`;
  await sql`INSERT INTO tenants (id, vapid_public_key, vapid_private_key) VALUES (${tenantId}, 'p', 'k')`.execute(
    owner,
  );
  await sql`INSERT INTO users (tenant_id, id, role) VALUES (${tenantId}, ${userId}, 'employee')`.execute(
    owner,
  );
  await sql`INSERT INTO roles (tenant_id, id, name) VALUES (${tenantId}, ${roleId}, 'Steward')`.execute(
    owner,
  );
  await sql`
    INSERT INTO events (tenant_id, id, name, starts_at, ends_at, published_at)
    SELECT ${tenantId}, gen_random_uuid(), 'Event ' || i,
           ${start} + i * ${perEvent} * interval '2 hours',
           ${start} + (i + 1) * ${perEvent} * interval '2 hours' + interval '2 hours',
           now()
      FROM generate_series(0, ${events - 1}::int) AS i`.execute(owner);
  await sql`
    WITH ordered AS (
      SELECT array_agg(id ORDER BY starts_at) AS ids FROM events WHERE tenant_id = ${tenantId}
    )
    INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at, published_at)
    SELECT ${tenantId}, gen_random_uuid(), ordered.ids[1 + i / ${perEvent}::int], 'Shift ' || i,
           ${start} + i * interval '2 hours', ${start} + i * interval '2 hours' + interval '4 hours',
           CASE WHEN i % 10 = 0 THEN NULL ELSE now() END
      FROM ordered, generate_series(0, ${shifts - 1}::int) AS i`.execute(owner);
  await sql`
    INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity)
    SELECT tenant_id, gen_random_uuid(), id, ${roleId}, 1
      FROM shifts
     WHERE tenant_id = ${tenantId}
       AND (extract(epoch FROM starts_at - ${start})::bigint / 7200) % 5 = 0`.execute(owner);
  const seated = await sql`
    INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
    SELECT s.tenant_id, gen_random_uuid(), s.id, sl.id, ${userId}, 'assign', s.starts_at, s.ends_at
      FROM shift_slots sl JOIN shifts s ON s.tenant_id = sl.tenant_id AND s.id = sl.shift_id
     WHERE sl.tenant_id = ${tenantId}`.execute(owner);
  await sql`ANALYZE events, shifts, shift_slots, shift_assignments`.execute(owner);
  return { tenantId, userId, shifts, events, assignments: Number(seated.numAffectedRows ?? 0n) };
}
