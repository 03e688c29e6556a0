import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { optionalText, requiredText } from '../input/text.ts';
import { deleteLocation, insertLocation, listLocations, locationExists } from './repository.ts';
import type { CreateLocationRequest, Location } from './schemas.ts';

export async function getLocations(deps: Deps, caller: Identity): Promise<Location[]> {
  return listLocations(deps.db, caller.tenantId);
}

export async function createLocation(
  deps: Deps,
  caller: Identity,
  body: CreateLocationRequest,
): Promise<Location> {
  const name = requiredText('name', body.name);
  const street = optionalText(body.street);
  const city = optionalText(body.city);
  const postalCode = optionalText(body.postal_code);
  const country = optionalText(body.country);
  // Geocode before the insert: no transaction is held open while a remote service answers.
  const coordinates =
    street && city ? await deps.geocoder.geocode({ street, city, postalCode, country }) : null;
  return unitOfWork(deps, caller, 'location.created', async (tx) => {
    const location = await insertLocation(tx.db, {
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
    await tx.record({ type: 'location.created', locationId: location.id });
    return location;
  });
}

export async function removeLocation(deps: Deps, caller: Identity, id: string): Promise<void> {
  // Events and shifts at this location keep existing, with no location.
  const deleted = await unitOfWork(deps, caller, 'location.deleted', async (tx) => {
    const deleted = await deleteLocation(tx.db, caller.tenantId, id);
    if (deleted) await tx.record({ type: 'location.deleted', locationId: id });
    return deleted;
  });
  if (!deleted) throw notFound('location');
}

/** Refuses (422) a location_id in a body that names no location of the caller's tenant. */
export async function checkLocationReference(
  deps: Deps,
  caller: Identity,
  locationId: string | null | undefined,
): Promise<void> {
  if (locationId && !(await locationExists(deps.db, caller.tenantId, locationId))) {
    throw validationFailed('location_id', 'no such location in this tenant');
  }
}
