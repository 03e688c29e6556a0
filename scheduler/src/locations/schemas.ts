import { type Static, Type } from 'typebox';
import { examples, Nullable, OneLine, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';

const serverFilled =
  'Filled by the server when street and city are present (city level offline); null when geocoding fails';

export const Location = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    name: Type.String({ description: 'What people call the place' }),
    street: Nullable(Type.String({ description: 'Street and number' })),
    city: Nullable(Type.String({ description: 'City, in any language (München, Munich)' })),
    postal_code: Nullable(Type.String()),
    country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2 code recommended' })),
    lat: Nullable(Type.Number({ description: serverFilled, readOnly: true })),
    lng: Nullable(Type.Number({ description: serverFilled, readOnly: true })),
    created_at: ReadOnlyTimestamp,
  },
  { title: 'Location' },
);
export type Location = Static<typeof Location>;

export const exampleLocation: Location = {
  id: examples.locationId,
  tenant_id: examples.tenantId,
  name: 'Main hall',
  street: 'Pariser Platz 1',
  city: 'Berlin',
  postal_code: '10117',
  country: 'DE',
  lat: 52.52437,
  lng: 13.41053,
  created_at: examples.createdAt,
};

const optionalText = (maxLength: number, description?: string) =>
  Type.Optional(Nullable(OneLine({ maxLength, ...(description ? { description } : {}) })));

export const CreateLocationRequest = Type.Object(
  {
    name: OneLine({ minLength: 1, maxLength: 200, description: 'What people call the place; trimmed' }),
    street: optionalText(300, 'Street and number; with city, the server fills lat and lng'),
    city: optionalText(200, 'City, in any language (München, Munich)'),
    postal_code: optionalText(32, 'Postal code; helps an external geocoder'),
    country: optionalText(100, 'ISO 3166-1 alpha-2 code recommended; it disambiguates geocoding'),
  },
  {
    title: 'CreateLocationRequest',
    additionalProperties: false,
    examples: [
      { name: 'Main hall', street: 'Pariser Platz 1', city: 'Berlin', postal_code: '10117', country: 'DE' },
    ],
  },
);
export type CreateLocationRequest = Static<typeof CreateLocationRequest>;

/** Where a shift happens: the shift's location, else its event's; what a person needs to get there. */
export const PlaceOfShift = Type.Object(
  {
    id: ReadOnlyId,
    name: Type.String({ description: 'What people call the place' }),
    street: Nullable(Type.String({ description: 'Street and number' })),
    postal_code: Nullable(Type.String()),
    city: Nullable(Type.String()),
    country: Nullable(Type.String()),
    lat: Nullable(Type.Number()),
    lng: Nullable(Type.Number()),
  },
  {
    title: 'PlaceOfShift',
    description:
      'Where a shift takes place: its own location, else its event’s; the address parts and coordinates the location holds (GET /me/assignments, GET /me/open-shifts)',
  },
);
export type PlaceOfShift = Static<typeof PlaceOfShift>;

export const examplePlace: PlaceOfShift = {
  id: exampleLocation.id,
  name: exampleLocation.name,
  street: exampleLocation.street,
  postal_code: exampleLocation.postal_code,
  city: exampleLocation.city,
  country: exampleLocation.country,
  lat: exampleLocation.lat,
  lng: exampleLocation.lng,
};
