import type { Db } from '../db/database.ts';
import type { LocationsTable } from '../db/types.ts';

const columns = [
  'id',
  'tenant_id',
  'name',
  'street',
  'city',
  'postal_code',
  'country',
  'lat',
  'lng',
  'created_at',
] as const;

export function listLocations(db: Db, tenantId: string) {
  return db
    .selectFrom('locations')
    .select(columns)
    .where('tenant_id', '=', tenantId)
    .orderBy('name')
    .execute();
}

export function insertLocation(db: Db, row: Omit<LocationsTable, 'created_at'>) {
  return db.insertInto('locations').values(row).returning(columns).executeTakeFirstOrThrow();
}

export async function deleteLocation(db: Db, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('locations')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Whether the tenant has this location (events and shifts check their references with it). */
export async function locationExists(db: Db, tenantId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('locations')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}
