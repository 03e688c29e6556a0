import { type Kysely, sql } from 'kysely';

/**
 * The scheduling rules, enforced by the database itself so that no code path, cascade or
 * hand-written statement can break them:
 *
 * - an assignment's slot belongs to the assignment's shift, and its time range is the
 *   shift's (composite keys; a shift's times cannot change under its assignments);
 * - one user never holds two assignments whose time ranges overlap (exclusion
 *   constraint over `tstzrange`, with `btree_gist` for the equality parts);
 * - `filled_count` is kept by a trigger on every insert, delete and move of an
 *   assignment, cascades included, and nothing else may write it; the capacity check on
 *   the slot row then refuses an overfill, and the row lock the trigger's update takes
 *   serialises concurrent claims on one slot;
 * - a shift or slot with assignments cannot be deleted (no cascade removes assignments);
 * - a time entry belongs to the assignment together with its user, and time entries and
 *   payouts are never removed by a cascade (`RESTRICT`), so recorded minutes are never
 *   lost while a balance keeps them;
 * - event and shift `status` columns go: draft or published is `published_at`, filled
 *   follows from the slots and completed from the clock, so status is derived at read
 *   time and cannot disagree with the records.
 *
 * Each statement runs on its own (PGlite's extended protocol takes one at a time), and
 * function bodies hold `;`, so this migration lists its statements instead of a script.
 */
const statements = [
  'CREATE EXTENSION IF NOT EXISTS btree_gist',

  // Status is derived from now on; keep what the column said in published_at first.
  `UPDATE events SET published_at = COALESCE(published_at, created_at) WHERE status = 'published'`,
  "UPDATE events SET published_at = NULL WHERE status = 'draft'",
  'ALTER TABLE events DROP COLUMN status',
  `UPDATE shifts SET published_at = COALESCE(published_at, created_at) WHERE status <> 'draft'`,
  "UPDATE shifts SET published_at = NULL WHERE status = 'draft'",
  'ALTER TABLE shifts DROP COLUMN status',
  'CREATE INDEX events_published ON events (tenant_id, starts_at) WHERE published_at IS NOT NULL',

  // Targets for the composite references below.
  'ALTER TABLE shifts ADD CONSTRAINT shifts_times_key UNIQUE (tenant_id, id, starts_at, ends_at)',
  'ALTER TABLE shift_slots ADD CONSTRAINT shift_slots_shift_key UNIQUE (tenant_id, shift_id, id)',
  'ALTER TABLE shift_assignments ADD CONSTRAINT shift_assignments_user_key UNIQUE (tenant_id, id, user_id)',

  // An assignment: its slot within its shift, its times the shift's, no cascade from either.
  'ALTER TABLE shift_assignments DROP CONSTRAINT shift_assignments_tenant_id_shift_id_fkey',
  'ALTER TABLE shift_assignments DROP CONSTRAINT shift_assignments_tenant_id_slot_id_fkey',
  `ALTER TABLE shift_assignments ADD CONSTRAINT shift_assignments_slot_fkey
     FOREIGN KEY (tenant_id, shift_id, slot_id) REFERENCES shift_slots (tenant_id, shift_id, id)`,
  `ALTER TABLE shift_assignments ADD CONSTRAINT shift_assignments_shift_times_fkey
     FOREIGN KEY (tenant_id, shift_id, starts_at, ends_at) REFERENCES shifts (tenant_id, id, starts_at, ends_at)`,
  `ALTER TABLE shift_assignments ADD CONSTRAINT shift_assignments_no_overlap
     EXCLUDE USING gist (tenant_id WITH =, user_id WITH =, tstzrange(starts_at, ends_at) WITH &&)`,
  'CREATE INDEX shift_assignments_shift ON shift_assignments (tenant_id, shift_id)',
  'CREATE INDEX shift_assignments_slot ON shift_assignments (tenant_id, slot_id)',

  // filled_count: recount what exists, then let only the trigger move it.
  `UPDATE shift_slots s SET filled_count = (
     SELECT count(*) FROM shift_assignments a WHERE a.tenant_id = s.tenant_id AND a.slot_id = s.id)`,
  'ALTER TABLE shift_slots DROP CONSTRAINT shift_slots_check',
  `ALTER TABLE shift_slots ADD CONSTRAINT shift_slots_within_capacity
     CHECK (filled_count BETWEEN 0 AND capacity)`,
  `CREATE FUNCTION shift_slots_count_assignments() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP IN ('DELETE', 'UPDATE') THEN
       UPDATE shift_slots SET filled_count = filled_count - 1
        WHERE tenant_id = OLD.tenant_id AND id = OLD.slot_id;
     END IF;
     IF TG_OP IN ('INSERT', 'UPDATE') THEN
       UPDATE shift_slots SET filled_count = filled_count + 1
        WHERE tenant_id = NEW.tenant_id AND id = NEW.slot_id;
     END IF;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER shift_assignments_count AFTER INSERT OR DELETE OR UPDATE OF tenant_id, slot_id
     ON shift_assignments FOR EACH ROW EXECUTE FUNCTION shift_slots_count_assignments()`,
  // Depth 1 is a statement on shift_slots itself; the counting trigger's update runs at 2.
  `CREATE FUNCTION shift_slots_guard_filled_count() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF pg_trigger_depth() = 1 AND NEW.filled_count IS DISTINCT FROM
        (CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.filled_count END) THEN
       RAISE EXCEPTION 'filled_count is kept by the database from the assignments'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'shift_slots_filled_count_derived',
               TABLE = 'shift_slots';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER shift_slots_filled_count_derived BEFORE INSERT OR UPDATE OF filled_count
     ON shift_slots FOR EACH ROW EXECUTE FUNCTION shift_slots_guard_filled_count()`,

  // Recorded minutes: a time entry names its assignment and that assignment's user.
  'ALTER TABLE time_entries DROP CONSTRAINT time_entries_tenant_id_shift_assignment_id_fkey',
  'ALTER TABLE time_entries DROP CONSTRAINT time_entries_tenant_id_user_id_fkey',
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_assignment_fkey
     FOREIGN KEY (tenant_id, shift_assignment_id, user_id)
     REFERENCES shift_assignments (tenant_id, id, user_id) ON DELETE RESTRICT`,
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_user_fkey
     FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE RESTRICT`,
  'ALTER TABLE payouts DROP CONSTRAINT payouts_tenant_id_user_id_fkey',
  `ALTER TABLE payouts ADD CONSTRAINT payouts_user_fkey
     FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE RESTRICT`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
