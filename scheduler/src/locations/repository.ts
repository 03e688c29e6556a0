import type { Db } from '../db/database.ts';
import type { LocationsTable } from '../db/types.ts';
import type { PlaceOfShift } from './schemas.ts';

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

/** A shift's place as a query selects it: the location's columns, prefixed `location_`. */
export interface PlaceColumns {
  location_id: string | null;
  location_name: string | null;
  location_street: string | null;
  location_postal_code: string | null;
  location_city: string | null;
  location_country: string | null;
  location_lat: number | null;
  location_lng: number | null;
}

/** The PlaceOfShift of a row (GET /me/assignments, GET /me/open-shifts); null without a location. */
export function placeOfShift(row: PlaceColumns): PlaceOfShift | null {
  if (row.location_id === null || row.location_name === null) return null;
  return {
    id: row.location_id,
    name: row.location_name,
    street: row.location_street,
    postal_code: row.location_postal_code,
    city: row.location_city,
    country: row.location_country,
    lat: row.location_lat,
    lng: row.location_lng,
  };
}
