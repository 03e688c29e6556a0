import { type Kysely, sql } from 'kysely';

/**
 * The longest shift and the longest time entry, in the database as well as in the
 * services (time/window.ts MAX_SHIFT_MINUTES, time-tracking/overtime.ts
 * MAX_ENTRY_MINUTES: 7 days, 10,080 minutes). Longer is a typing error, and the overtime
 * arithmetic and the time filters' index bounds (0011) assume no row is longer.
 *
 * A shift is bounded exactly (`ends_at - starts_at` at most 7 days, as the service
 * compares the stored instants). An entry is bounded as its minutes are counted (0003:
 * whole elapsed minutes, a started minute not counted), so an entry the service takes at
 * 10,080 minutes and some seconds is one the database takes too.
 *
 * `NOT VALID`: rows written before the rule stay (a long shift of an old database keeps
 * being listed, and the service refuses time against it with 422); every row inserted
 * or updated from now on is checked. Kept here as written: a later change of the limits
 * is a new migration.
 */
export const lengthChecks = {
  shifts: {
    shifts_at_most_7_days: "ends_at - starts_at <= interval '7 days'",
  },
  time_entries: {
    time_entries_at_most_10080_minutes: 'floor(extract(epoch FROM ended_at - started_at) / 60) <= 10080',
  },
} as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [table, checks] of Object.entries(lengthChecks)) {
    for (const [name, condition] of Object.entries(checks)) {
      await sql.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${name} CHECK (${condition}) NOT VALID`).execute(db);
    }
  }
}
