import { randomUUID } from 'node:crypto';
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
