import type { Db } from '../db/database.ts';
import { notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Geocoder } from './geocoding/geocoder.ts';
import { deleteLocation, insertLocation, listLocations } from './repository.ts';
import type { CreateLocationRequest, Location } from './schemas.ts';

const clean = (value: string | null | undefined): string | null => value?.trim() || null;

export async function getLocations(db: Db, tenantId: string): Promise<Location[]> {
  return listLocations(db, tenantId);
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
  return insertLocation(db, {
    tenant_id: tenantId,
    id: newId(),
    name,
    street,
    city,
    postal_code: postalCode,
    country,
    lat: coordinates?.lat ?? null,
    lng: coordinates?.lng ?? null,
  });
}

export async function removeLocation(db: Db, tenantId: string, id: string): Promise<void> {
  // Events and shifts at this location keep existing, with no location.
  if (!(await deleteLocation(db, tenantId, id))) throw notFound('location');
}
