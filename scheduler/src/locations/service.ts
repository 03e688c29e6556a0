import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../db/database.ts';
import { notFound, validationFailed } from '../errors.ts';
import { wireId, wireTime } from '../ids.ts';
import type { Geocoder } from './geocoding/geocoder.ts';
import { deleteLocation, insertLocation, listLocations } from './repository.ts';
import type { CreateLocationRequest, Location } from './schemas.ts';

type Row = Awaited<ReturnType<typeof listLocations>>[number];

function toWire(row: Row): Location {
  return {
    id: wireId(row.id),
    tenant_id: wireId(row.tenant_id),
    name: row.name,
    street: row.street,
    city: row.city,
    postal_code: row.postal_code,
    country: row.country,
    lat: row.lat,
    lng: row.lng,
    created_at: wireTime(row.created_at),
  };
}

const clean = (value: string | null | undefined): string | null => value?.trim() || null;

export async function getLocations(db: Db, tenantId: string): Promise<Location[]> {
  return (await listLocations(db, tenantId)).map(toWire);
}

export async function createLocation(
  db: Db,
  geocoder: Geocoder,
  tenantId: string,
  body: CreateLocationRequest,
): Promise<Location> {
  const name = body.name.trim();
  if (name === '') throw validationFailed('name', 'must not be blank');
  const street = clean(body.street);
  const city = clean(body.city);
  const postalCode = clean(body.postal_code);
  const country = clean(body.country);
  // Geocode before the insert: no transaction is held open while a remote service answers.
  const coordinates = street && city ? await geocoder.geocode({ street, city, postalCode, country }) : null;
  const row = await insertLocation(db, {
    tenant_id: tenantId,
    id: uuidv7(),
    name,
    street,
    city,
    postal_code: postalCode,
    country,
    lat: coordinates?.lat ?? null,
    lng: coordinates?.lng ?? null,
  });
  return toWire(row);
}

export async function removeLocation(db: Db, tenantId: string, id: string): Promise<void> {
  // Events and shifts at this location keep existing, with no location.
  if (!(await deleteLocation(db, tenantId, id))) throw notFound('location');
}
