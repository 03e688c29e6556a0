import { type Kysely, sql } from 'kysely';

/**
 * The `from`/`to` filters of the shift, event and assignment lists ask which records'
 * windows overlap `[from, to)`: `starts_at < to AND ends_at > from`. A btree on
 * `starts_at` alone answers the first half and reads everything earlier to check the
 * second. Knowing the tenant's longest record bounds it: an overlapping record also
 * starts after `from` minus that length, so the scan of `(tenant_id, starts_at)` (the
 * indexes of 0001: shifts_starts, events_starts, shifts_event, shift_assignments_user_time)
 * covers `(from - longest, to)` only. These indexes give the longest length of a tenant's
 * shifts and events in one index probe.
 *
 * Not a GiST index on `tstzrange(starts_at, ends_at)`: the application reads under
 * row-level security (0006), and PostgreSQL uses a condition of a query as an index
 * condition under a policy only when its operators are leakproof. `&&` on ranges is not
 * (only a superuser can mark one so), the btree comparisons of timestamps are; so the
 * planner filtered every row of the tenant through the range condition instead.
 */
const statements = [
  'CREATE INDEX shifts_length ON shifts (tenant_id, (ends_at - starts_at))',
  'CREATE INDEX events_length ON events (tenant_id, (ends_at - starts_at))',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
