import { type RawBuilder, sql } from 'kysely';

/** The earliest instant the API takes (time/instant.ts): no record starts before it. */
const FIRST_INSTANT = '0001-01-01T00:00:00Z';

/** A list's `from`/`to` filter: records whose window overlaps `[from, to)`; either end may be open. */
export interface TimeWindow {
  from?: string | undefined;
  to?: string | undefined;
}

/** Whether the filter names either end (no filter: every record). */
export const limitsWindow = (window: TimeWindow): boolean =>
  window.from !== undefined || window.to !== undefined;

/**
 * The plain comparisons of an overlap with `[from, to)`: the record's `start` column
 * before `to`, its `end` column after `from`; an absent end of the filter adds none.
 */
function overlapConditions(start: string, end: string, window: TimeWindow): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [];
  if (window.to !== undefined) conditions.push(sql`${sql.ref(start)} < ${window.to}::timestamptz`);
  if (window.from !== undefined) conditions.push(sql`${sql.ref(end)} > ${window.from}::timestamptz`);
  return conditions;
}

const allOf = (conditions: RawBuilder<unknown>[]) =>
  conditions.length === 0 ? sql<boolean>`TRUE` : sql<boolean>`(${sql.join(conditions, sql` AND `)})`;

/**
 * Whether the `[start, end)` columns (qualified names, e.g. `e.started_at`) overlap the
 * filter's `[from, to)`, an absent end being unbounded. The bare overlap, for records
 * whose table keeps no longest length to bound the range below (time entries).
 */
export const spanOverlaps = (start: string, end: string, window: TimeWindow) =>
  allOf(overlapConditions(start, end, window));

/**
 * Whether the `[starts_at, ends_at)` window of `alias` (a table name or alias) overlaps
 * the filter's `[from, to)`: it starts before `to` and ends after `from`, an absent end
 * being unbounded. Written with plain comparisons, and bounded below by the longest
 * record of the tenant in `lengthsOf` (whose windows the rows hold: assignments hold their
 * shift's): a record ending after `from` started after `from` minus that length. So the
 * planner reads the overlap as a range of a `(tenant_id, …, starts_at)` btree, under
 * row-level security too (comparisons of timestamps are leakproof; `&&` on ranges is not,
 * see migration 0011), and the bound is exact whatever lengths the rows have: one record
 * thousands of years long makes the tenant's lists read more rows, never fail.
 */
export function overlapsWindow(
  alias: string,
  window: TimeWindow,
  lengthsOf: { table: 'shifts' | 'events'; tenantId: string },
) {
  const conditions = overlapConditions(`${alias}.starts_at`, `${alias}.ends_at`, window);
  if (window.from !== undefined) {
    const from = sql`${window.from}::timestamptz`;
    // The expression of the shifts_length and events_length indexes, so max() is one probe.
    const longest = sql`(SELECT max(l.ends_at - l.starts_at) FROM ${sql.table(lengthsOf.table)} l
                          WHERE l.tenant_id = ${lengthsOf.tenantId}::uuid)`;
    // `from` minus a length of thousands of years leaves the timestamps PostgreSQL holds
    // (4713 BC on: an error, not an empty answer). Records start in the years 1 to 9999,
    // so a bound that would fall before year 1 bounds nothing: it becomes -infinity, and
    // the subtraction is never made.
    const lowest = sql`CASE WHEN ${longest} >= ${from} - ${FIRST_INSTANT}::timestamptz
                            THEN '-infinity'::timestamptz ELSE ${from} - ${longest} END`;
    conditions.push(sql`${sql.ref(`${alias}.starts_at`)} > ${lowest}`);
  }
  return allOf(conditions);
}
