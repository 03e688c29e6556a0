import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { runSql } from './database.ts';

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

/** The rows `layDownEventTenant` wrote: ids as the database stores them. */
export interface EventTenant {
  tenant: string;
  /** Two employees. */
  alice: string;
  bob: string;
  /** A role, Cook. */
  role: string;
  /** An event, E, over the first week of 2030. */
  event: string;
}

/**
 * A new tenant with two employees, a role and an event, written with raw SQL as `owner`
 * (no API, no services): the scene the database's own rules are tested on (db/rules,
 * time-off/rules).
 */
export async function layDownEventTenant(owner: Db): Promise<EventTenant> {
  const w = {
    tenant: randomUUID(),
    alice: randomUUID(),
    bob: randomUUID(),
    role: randomUUID(),
    event: randomUUID(),
  };
  await runSql(
    owner,
    "INSERT INTO tenants (id, vapid_public_key, vapid_private_key) VALUES (?, 'p', 'k')",
    w.tenant,
  );
  for (const user of [w.alice, w.bob]) {
    await runSql(owner, "INSERT INTO users (tenant_id, id, role) VALUES (?, ?, 'employee')", w.tenant, user);
  }
  await runSql(owner, "INSERT INTO roles (tenant_id, id, name) VALUES (?, ?, 'Cook')", w.tenant, w.role);
  await runSql(
    owner,
    `INSERT INTO events (tenant_id, id, name, starts_at, ends_at)
     VALUES (?, ?, 'E', '2030-01-01T00:00:00Z', '2030-01-08T00:00:00Z')`,
    w.tenant,
    w.event,
  );
  return w;
}
