import { v7 as uuidv7 } from 'uuid';
import { notFound, validationFailed } from './errors.ts';

/**
 * Ids are UUIDs, on the wire and in queries alike as 32 lowercase hex digits (PostgreSQL
 * accepts that form for uuid input, and the type parser returns it). Path ids also accept
 * the hyphenated form.
 */
const hex32 = /^[0-9a-f]{32}$/;
const hyphenated = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A client-supplied id in canonical form, or null when it is not a UUID. */
export function parseId(raw: string): string | null {
  const value = raw.toLowerCase();
  if (hex32.test(value)) return value;
  if (hyphenated.test(value)) return value.replaceAll('-', '');
  return null;
}

/** A path id; a malformed id is indistinguishable from a missing record. */
export function pathId(raw: string, what: string): string {
  const id = parseId(raw);
  if (id === null) throw notFound(what);
  return id;
}

/** A query-string id (http/schemas.ts `IdQuery`) in canonical form; anything else is 422 naming `field`. */
export function queryId(field: string, raw: string): string {
  const id = parseId(raw);
  if (id === null) throw validationFailed(field, 'must be a UUID');
  return id;
}

/** A new id: UUIDv7, so rows inserted together sit together in the primary-key index. */
export function newId(): string {
  return uuidv7().replaceAll('-', '');
}
