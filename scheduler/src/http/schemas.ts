import { type Static, type TSchema, Type } from 'typebox';
import { type ErrorCode, errorCatalogue } from '../errors.ts';

/** Wire id: a UUID as 32 lowercase hex digits. */
export const Id = Type.String({ pattern: '^[0-9a-f]{32}$', description: 'UUID as 32 lowercase hex digits' });
/** RFC 3339 timestamp in UTC with `Z`. */
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' });
/**
 * `T | null`. For a primitive this is `type: [T, "null"]` rather than `anyOf`: same
 * meaning in JSON Schema and OpenAPI 3.1, and the response serializer handles it
 * without trying each branch of an `anyOf` per value.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && type !== 'object' && type !== 'array') {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  }
  return Type.Union([schema, Type.Null()]);
}

/** Path ids are parsed by the handler (a malformed id is 404, not 422). */
export const IdParams = Type.Object({
  id: Type.String({ description: 'UUID, 32 hex digits or hyphenated' }),
});

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ enum: Object.keys(errorCatalogue) }),
      message: Type.String(),
    }),
  },
  { description: 'Every error response has this shape' },
);

const describe = (status: number) =>
  (Object.entries(errorCatalogue) as [ErrorCode, { status: number; summary: string }][])
    .filter(([, entry]) => entry.status === status)
    .map(([code, entry]) => `${code}: ${entry.summary}`)
    .join(' ');

const errorRef = (status: number) => ({ ...ErrorBody, description: describe(status) });

/** Error responses documented on every authenticated route. */
export function errorResponses(...statuses: number[]) {
  const all = [401, 403, ...statuses, 500];
  return Object.fromEntries(all.map((status) => [status, errorRef(status)]));
}

export const bearerSecurity = [{ bearerAuth: [] }];
