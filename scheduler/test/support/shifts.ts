import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/**
 * A shift slot that needs `roleId`, laid down directly: shifts arrive with a later
 * feature, but roles must already respect the slots that refer to them.
 */
export async function layDownSlot(db: Db, tenantId: string, roleId: string): Promise<void> {
  const eventId = randomUUID();
  const shiftId = randomUUID();
  const window = { starts_at: '2030-01-01T10:00:00Z', ends_at: '2030-01-01T18:00:00Z' };
  await db
    .insertInto('events')
    .values({
      tenant_id: tenantId,
      id: eventId,
      name: 'E',
      description: null,
      location_id: null,
      ...window,
      published_at: null,
      submission_id: null,
    })
    .execute();
  await db
    .insertInto('shifts')
    .values({
      tenant_id: tenantId,
      id: shiftId,
      event_id: eventId,
      name: 'S',
      location_id: null,
      ...window,
      published_at: null,
    })
    .execute();
  await db
    .insertInto('shift_slots')
    .values({ tenant_id: tenantId, id: randomUUID(), shift_id: shiftId, role_id: roleId, capacity: 2 })
    .execute();
}

/**
 * `count` draft shifts of `eventId`, one every half hour from 2030-07-02, each with
 * `slotsPerShift` slots of `roleId`, laid down with set-based SQL as the owner: an event
 * larger than the API builds in a few calls, in a second or two.
 */
export async function layDownShifts(
  owner: Db,
  where: { tenantId: string; eventId: string; roleId: string },
  count: number,
  slotsPerShift: number,
): Promise<void> {
  const { tenantId, eventId, roleId } = where;
  await sql`
    INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at)
    SELECT ${tenantId}, gen_random_uuid(), ${eventId}, 'Shift ' || i,
           '2030-07-02T00:00:00Z'::timestamptz + i * interval '30 minutes',
           '2030-07-02T00:00:00Z'::timestamptz + i * interval '30 minutes' + interval '1 hour'
      FROM generate_series(1, ${count}::int) AS i`.execute(owner);
  await sql`
    INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity)
    SELECT s.tenant_id, gen_random_uuid(), s.id, ${roleId}, 2
      FROM shifts s, generate_series(1, ${slotsPerShift}::int)
     WHERE s.tenant_id = ${tenantId} AND s.event_id = ${eventId}`.execute(owner);
}
