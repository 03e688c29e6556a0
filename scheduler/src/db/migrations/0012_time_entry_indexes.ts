import { type Kysely, sql } from 'kysely';

/**
 * Reading timesheets back: a tenant's entries by start (the list's order and its `after`
 * cursor), one user's the same way, and by end, for the lower bound of a window: an entry
 * overlaps [from, to) when it starts before `to` and ends after `from`, so a recent window
 * (the usual payroll period) reads from the end index without walking the tenant's history.
 */
const statements = [
  'CREATE INDEX time_entries_starts ON time_entries (tenant_id, started_at, id)',
  'CREATE INDEX time_entries_user_starts ON time_entries (tenant_id, user_id, started_at, id)',
  'CREATE INDEX time_entries_ends ON time_entries (tenant_id, ended_at)',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
