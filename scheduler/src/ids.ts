import { notFound } from './errors.ts';

/**
 * Ids are UUIDs. On the wire they are 32 lowercase hex digits; the database keeps the
 * native `uuid` type. Path ids also accept the hyphenated form.
 */
const hex32 = /^[0-9a-f]{32}$/;
const hyphenated = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A client-supplied id in canonical database form, or null when it is not a UUID. */
export function parseId(raw: string): string | null {
  const value = raw.toLowerCase();
  if (hyphenated.test(value)) return value;
  if (hex32.test(value)) {
    return `${value.slice(0, 8)}-${value.slice(8, 12)}-${value.slice(12, 16)}-${value.slice(16, 20)}-${value.slice(20)}`;
  }
  return null;
}

/** A database uuid as the wire shows it. */
export function wireId(uuid: string): string {
  return uuid.replaceAll('-', '').toLowerCase();
}

export function wireIdOrNull(uuid: string | null): string | null {
  return uuid === null ? null : wireId(uuid);
}

export function wireTime(value: Date): string {
  return value.toISOString();
}

export function wireTimeOrNull(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

/** A path id in database form; a malformed id is indistinguishable from a missing record. */
export function pathId(raw: string, what: string): string {
  const id = parseId(raw);
  if (id === null) throw notFound(what);
  return id;
}
