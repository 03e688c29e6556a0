import { sql } from 'kysely';

/**
 * The database hands values back already in wire form, so no layer above has to convert
 * them (and no request pays for Date objects it only turns back into strings):
 * - uuid        -> 32 lowercase hex digits (PostgreSQL also accepts that form as input,
 *                  so the same string goes back into queries unchanged);
 * - timestamptz -> RFC 3339 UTC with millisecond precision and `Z`;
 * - int8        -> number (counts and minute balances stay far below 2^53).
 */
export const OID = { int8: 20, uuid: 2950, timestamptz: 1184 } as const;

/**
 * A uuid column as its wire form, in SQL: for values the driver does not convert (inside
 * JSON built by the query, or a uuid aggregated as text).
 */
export const uuidColumnToWire = (column: string) => sql<string>`replace(${sql.ref(column)}::text, '-', '')`;

/**
 * A timestamptz column as its wire form, in SQL (RFC 3339 UTC, milliseconds, `Z`): for
 * values inside JSON built by the query, which the driver hands back as text of its own.
 */
export const timestamptzColumnToWire = (column: string) =>
  sql<string>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export function uuidToWire(text: string): string {
  return text.length === 36
    ? text.slice(0, 8) + text.slice(9, 13) + text.slice(14, 18) + text.slice(19, 23) + text.slice(24)
    : text.replaceAll('-', '');
}

// PostgreSQL's ISO output in UTC: "2026-11-21 23:32:42.908123+00" (fraction optional).
const utcText = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00$/;

export function timestamptzToWire(text: string): string {
  const match = utcText.exec(text);
  if (match) return `${match[1]}T${match[2]}.${`${match[3] ?? ''}000`.slice(0, 3)}Z`;
  // Another session time zone ("+05:30", "-08"): let Date do the arithmetic.
  const iso = text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? text : date.toISOString();
}

export function int8ToNumber(text: string): number {
  return Number(text);
}

export const wireParsers: Record<number, (text: string) => unknown> = {
  [OID.uuid]: uuidToWire,
  [OID.timestamptz]: timestamptzToWire,
  [OID.int8]: int8ToNumber,
};
