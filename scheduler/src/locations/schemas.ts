import { type Static, Type } from 'typebox';
import { Id, Nullable, Timestamp } from '../http/schemas.ts';

export const Location = Type.Object({
  id: Id,
  tenant_id: Id,
  name: Type.String(),
  street: Nullable(Type.String()),
  city: Nullable(Type.String()),
  postal_code: Nullable(Type.String()),
  country: Nullable(Type.String()),
  lat: Nullable(Type.Number({ description: 'Filled by the server when street and city are present' })),
  lng: Nullable(Type.Number({ description: 'Filled by the server when street and city are present' })),
  created_at: Timestamp,
});
export type Location = Static<typeof Location>;

const optionalText = (maxLength: number, description?: string) =>
  Type.Optional(Nullable(Type.String({ maxLength, ...(description ? { description } : {}) })));

export const CreateLocationRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    street: optionalText(300),
    city: optionalText(200),
    postal_code: optionalText(32),
    country: optionalText(100, 'ISO 3166-1 alpha-2 code recommended; it disambiguates geocoding'),
  },
  { additionalProperties: false },
);
export type CreateLocationRequest = Static<typeof CreateLocationRequest>;
