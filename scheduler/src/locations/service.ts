import type { Identity } from '../auth/identity.ts';
import type { Deps } from '../deps.ts';
import { notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { deleteLocation, insertLocation, listLocations } from './repository.ts';
import type { CreateLocationRequest, Location } from './schemas.ts';

const clean = (value: string | null | undefined): string | null => value?.trim() || null;

export async function getLocations(deps: Deps, caller: Identity): Promise<Location[]> {
  return listLocations(deps.db, caller.tenantId);
}

export async function createLocation(
  deps: Deps,
  caller: Identity,
  body: CreateLocationRequest,
): Promise<Location> {
  const name = body.name.trim();
  if (name === '') throw validationFailed('name', 'must not be blank');
  const street = clean(body.street);
  const city = clean(body.city);
  const postalCode = clean(body.postal_code);
  const country = clean(body.country);
  // Geocode before the insert: no transaction is held open while a remote service answers.
  const coordinates =
    street && city ? await deps.geocoder.geocode({ street, city, postalCode, country }) : null;
  return insertLocation(deps.db, {
    tenant_id: caller.tenantId,
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

export async function removeLocation(deps: Deps, caller: Identity, id: string): Promise<void> {
  // Events and shifts at this location keep existing, with no location.
  if (!(await deleteLocation(deps.db, caller.tenantId, id))) throw notFound('location');
}
