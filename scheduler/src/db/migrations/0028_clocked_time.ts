import { type Kysely, sql } from 'kysely';

/**
 * Time clocked by staff from the phone, proposed until an admin confirms it:
 *
 * - `time_entries.status`: `proposed` (clocked by the employee, not in the books) or
 *   `confirmed` (in the books). Every entry written before is confirmed, as is every entry
 *   an admin records; `confirmed_at` and `confirmed_by` say when and by whom (an entry
 *   confirmed here gets its creation time and recorder); a proposed one has neither.
 * - A clocked-in entry is open: `ended_at`, `worked_minutes` and `overtime_minutes` are
 *   null until the clock-out (`time_entries_open_unworked`), and only a proposed entry may
 *   be open (`time_entries_open_proposed`).
 * - Only a confirmed entry reaches the overtime ledger: the ledger trigger credits an
 *   entry when it is inserted confirmed or moves from proposed to confirmed (an `entry`
 *   row, once: `overtime_ledger_one_credit`), books corrections of confirmed entries only,
 *   and refuses a confirmed entry going back to proposed (`time_entries_confirmed_final`).
 *   A proposed entry moves no balance, whatever is written to it.
 * - The rule that a first recording waits for its shift's end (0023) judges confirmed
 *   inserts only: a clock-in is recorded while the shift runs.
 */
const statements = [
  `ALTER TABLE time_entries
     ADD COLUMN status text NOT NULL DEFAULT 'confirmed',
     ADD COLUMN confirmed_at timestamptz,
     ADD COLUMN confirmed_by uuid`,
  'UPDATE time_entries SET confirmed_at = created_at, confirmed_by = recorded_by',
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_status
     CHECK (status IN ('proposed', 'confirmed'))`,
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_proposed_unconfirmed
     CHECK (status = 'confirmed' OR (confirmed_at IS NULL AND confirmed_by IS NULL))`,
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_confirmed_by_fkey
     FOREIGN KEY (tenant_id, confirmed_by) REFERENCES users (tenant_id, id) ON DELETE RESTRICT`,
  `ALTER TABLE time_entries
     ALTER COLUMN ended_at DROP NOT NULL,
     ALTER COLUMN worked_minutes DROP NOT NULL,
     ALTER COLUMN overtime_minutes DROP NOT NULL`,
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_open_unworked
     CHECK ((ended_at IS NULL) = (worked_minutes IS NULL) AND (ended_at IS NULL) = (overtime_minutes IS NULL))`,
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_open_proposed
     CHECK (ended_at IS NOT NULL OR status = 'proposed')`,

  `CREATE OR REPLACE FUNCTION overtime_ledger_from_entry() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.status <> 'confirmed' THEN
       IF TG_OP = 'UPDATE' AND OLD.status = 'confirmed' THEN
         RAISE EXCEPTION 'a confirmed time entry stays confirmed'
           USING ERRCODE = 'check_violation', CONSTRAINT = 'time_entries_confirmed_final',
                 TABLE = 'time_entries';
       END IF;
       RETURN NULL;
     END IF;
     IF TG_OP = 'INSERT' OR OLD.status <> 'confirmed' THEN
       INSERT INTO overtime_ledger (tenant_id, user_id, kind, delta_minutes, time_entry_id)
       VALUES (NEW.tenant_id, NEW.user_id, 'entry', NEW.overtime_minutes, NEW.id);
     ELSIF NEW.overtime_minutes <> OLD.overtime_minutes THEN
       INSERT INTO overtime_ledger (tenant_id, user_id, kind, delta_minutes, time_entry_id)
       VALUES (NEW.tenant_id, NEW.user_id, 'correction', NEW.overtime_minutes - OLD.overtime_minutes, NEW.id);
     END IF;
     RETURN NULL;
   END $$`,

  `CREATE OR REPLACE FUNCTION time_entries_refuse_before_end() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.status = 'confirmed'
        AND EXISTS (
          SELECT 1 FROM shift_assignments a
           WHERE a.tenant_id = NEW.tenant_id AND a.id = NEW.shift_assignment_id AND a.ends_at > now())
        AND NOT EXISTS (
          SELECT 1 FROM tenant_settings s
           WHERE s.tenant_id = NEW.tenant_id AND s.time_entries_before_end)
        AND NOT EXISTS (
          SELECT 1 FROM time_entries e
           WHERE e.tenant_id = NEW.tenant_id AND e.shift_assignment_id = NEW.shift_assignment_id) THEN
       RAISE EXCEPTION 'the shift has not ended'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'time_entries_shift_ended',
               TABLE = 'time_entries';
     END IF;
     RETURN NEW;
   END $$`,

  "CREATE INDEX time_entries_proposed ON time_entries (tenant_id, started_at, id) WHERE status = 'proposed'",
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
