import { type Kysely, sql } from 'kysely';

/**
 * Trigger order, made explicit where it decides something. PostgreSQL fires the triggers of
 * one table that share a timing (BEFORE or AFTER), a level (row or statement) and an event
 * in the order of their names, byte by byte. Until now that order followed from what each
 * trigger happened to be called; here the triggers whose order matters take a step number
 * after their table's name, in the order they already fired, so a reader sees it and a
 * new trigger has to choose its place:
 *
 * - `shift_assignments`, BEFORE each row (a seat taken, or moved to another user or other
 *   times). The three refuse a row, and the first to refuse names the refusal the client
 *   gets (the services map `shift_assignments_time_off` to 409 UNAVAILABLE,
 *   `shift_assignments_user_active` to 409 INVALID_STATE, `shift_assignments_user_qualified`
 *   to 409 NOT_QUALIFIED):
 *   - `shift_assignments_10_time_off` (0016) first: it takes the user's row `FOR SHARE`
 *     itself before it reads the user's approved time off (the approval side holds
 *     `FOR NO KEY UPDATE` on that row, so the two never both commit), and a user both away
 *     and deactivated is refused as away;
 *   - `shift_assignments_20_user_active` (0010) next: a deactivated user is refused as
 *     such, before the qualification is looked at;
 *   - `shift_assignments_30_user_qualified` (0017, moves only) last.
 * - `time_off`, BEFORE each row. Both refuse a row after locking the user's row
 *   `FOR NO KEY UPDATE`:
 *   - `time_off_10_open_per_user` (0020) first: a time off over the cap of 50 open ones is
 *     refused as such (409 INVALID_STATE), whatever it overlaps;
 *   - `time_off_20_overlaps_assignments` (0016) next: approved time off that overlaps the
 *     user's assignments (409 OVERLAPPING_ASSIGNMENT, naming them).
 *
 * Nothing else changes: each trigger keeps its place in the order, its events, its
 * function and the name it refuses with (the `CONSTRAINT` of its `RAISE`, which names the
 * rule and is what the services match; it is no longer the trigger's name).
 *
 * Not renamed: the AFTER row triggers that share events (`audit` with
 * `shift_assignments_count` and `shift_assignments_new_holder_reminded`, with
 * `payouts_ledger`, with `time_entries_ledger`). An AFTER row trigger cannot change the row,
 * every one of them sees the row as stored, and none of these writes a row another of them
 * reads or records (the count's update of `shift_slots` changes only `filled_count`, which
 * that table's audit ignores), so their order decides nothing; `audit` keeps the one name
 * migration 0015 gives it on every audited table.
 *
 * docs/scheduler/schema.md lists every table's triggers in the order they fire, with why
 * (scheduler/src/cli/schema-reference.ts); test/db/trigger-order.test.ts holds the order
 * of every group of triggers that share an event, so a trigger added to one fails it until
 * its place is chosen there.
 */
const renames: [table: string, from: string, to: string][] = [
  ['shift_assignments', 'shift_assignments_time_off', 'shift_assignments_10_time_off'],
  ['shift_assignments', 'shift_assignments_user_active', 'shift_assignments_20_user_active'],
  ['shift_assignments', 'shift_assignments_user_qualified', 'shift_assignments_30_user_qualified'],
  ['time_off', 'time_off_open_per_user', 'time_off_10_open_per_user'],
  ['time_off', 'time_off_overlaps_assignments', 'time_off_20_overlaps_assignments'],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [table, from, to] of renames) {
    await sql.raw(`ALTER TRIGGER ${from} ON ${table} RENAME TO ${to}`).execute(db);
  }
}
