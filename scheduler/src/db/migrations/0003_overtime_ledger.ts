import { type Kysely, sql } from 'kysely';

/**
 * The overtime ledger: every change to a balance is an append-only row, and the database
 * writes those rows itself, so no code path can move a balance without leaving its trace
 * or leave a trace without moving the balance:
 *
 * - a new time entry appends an `entry` row of its overtime; a change of its overtime
 *   appends a `correction` row of the difference (never a second credit); a payout
 *   appends a `payout` row of minus its minutes;
 * - each ledger row adds its delta to the user's `overtime_balances` row in the same
 *   statement (the upsert locks that row, which serialises concurrent changes of one
 *   balance), and nothing else may write a balance, so a balance is always its ledger's sum;
 * - a payout that would take the balance below zero is refused
 *   (`overtime_payout_within_balance`);
 * - ledger rows are never updated, deleted or truncated; entries and payouts they name
 *   cannot be deleted (`RESTRICT`), payouts not changed at all, and an entry never moves
 *   to another assignment or user;
 * - an entry's overtime is its worked minutes minus its scheduled minutes, and its worked
 *   minutes its whole elapsed minutes minus its break (checks on the row).
 *
 * Rows written before this migration get their ledger rows and balances recomputed from
 * them. Each statement runs on its own (see 0002 for why).
 */
const statements = [
  // Targets for the ledger's (record, user) references.
  'ALTER TABLE time_entries ADD CONSTRAINT time_entries_user_key UNIQUE (tenant_id, id, user_id)',
  'ALTER TABLE payouts ADD CONSTRAINT payouts_user_key UNIQUE (tenant_id, id, user_id)',

  `CREATE TABLE overtime_ledger (
     tenant_id      uuid NOT NULL,
     id             uuid NOT NULL DEFAULT gen_random_uuid(),
     seq            bigint GENERATED ALWAYS AS IDENTITY,
     user_id        uuid NOT NULL,
     kind           text NOT NULL CHECK (kind IN ('entry', 'correction', 'payout')),
     delta_minutes  bigint NOT NULL,
     time_entry_id  uuid,
     payout_id      uuid,
     created_at     timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (tenant_id, id),
     CONSTRAINT overtime_ledger_source CHECK (
       (kind IN ('entry', 'correction') AND time_entry_id IS NOT NULL AND payout_id IS NULL)
       OR (kind = 'payout' AND payout_id IS NOT NULL AND time_entry_id IS NULL AND delta_minutes < 0)),
     CONSTRAINT overtime_ledger_user_fkey FOREIGN KEY (tenant_id, user_id)
       REFERENCES users (tenant_id, id) ON DELETE RESTRICT,
     CONSTRAINT overtime_ledger_entry_fkey FOREIGN KEY (tenant_id, time_entry_id, user_id)
       REFERENCES time_entries (tenant_id, id, user_id) ON DELETE RESTRICT,
     CONSTRAINT overtime_ledger_payout_fkey FOREIGN KEY (tenant_id, payout_id, user_id)
       REFERENCES payouts (tenant_id, id, user_id) ON DELETE RESTRICT
   )`,
  `CREATE UNIQUE INDEX overtime_ledger_one_credit ON overtime_ledger (tenant_id, time_entry_id)
     WHERE kind = 'entry'`,
  `CREATE UNIQUE INDEX overtime_ledger_one_payout ON overtime_ledger (tenant_id, payout_id)
     WHERE kind = 'payout'`,
  'CREATE INDEX overtime_ledger_user ON overtime_ledger (tenant_id, user_id, seq)',

  // What was recorded before the ledger existed, in the order it happened.
  `INSERT INTO overtime_ledger (tenant_id, user_id, kind, delta_minutes, time_entry_id, payout_id, created_at)
   SELECT tenant_id, user_id, kind, delta, time_entry_id, payout_id, created_at FROM (
     SELECT tenant_id, user_id, 'entry' AS kind, overtime_minutes::bigint AS delta, id AS time_entry_id,
            NULL::uuid AS payout_id, created_at FROM time_entries
     UNION ALL
     SELECT tenant_id, user_id, 'payout', -minutes::bigint, NULL, id, created_at FROM payouts
   ) AS history ORDER BY created_at`,
  'DELETE FROM overtime_balances',
  `INSERT INTO overtime_balances (tenant_id, user_id, balance_minutes, updated_at)
   SELECT tenant_id, user_id, sum(delta_minutes), max(created_at) FROM overtime_ledger
    GROUP BY tenant_id, user_id`,

  // An entry's arithmetic, on the row: whole elapsed minutes, minus the break.
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_worked_minutes CHECK (
     worked_minutes = floor(extract(epoch FROM ended_at - started_at) / 60)::integer - break_minutes)`,
  'ALTER TABLE time_entries ADD CONSTRAINT time_entries_break_within_span CHECK (worked_minutes >= 0)',
  `ALTER TABLE time_entries ADD CONSTRAINT time_entries_overtime_minutes CHECK (
     overtime_minutes = worked_minutes - scheduled_minutes)`,
  'ALTER TABLE time_entries ADD CONSTRAINT time_entries_scheduled_minutes CHECK (scheduled_minutes >= 0)',

  // Entries and payouts write the ledger.
  `CREATE FUNCTION overtime_ledger_from_entry() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'INSERT' THEN
       INSERT INTO overtime_ledger (tenant_id, user_id, kind, delta_minutes, time_entry_id)
       VALUES (NEW.tenant_id, NEW.user_id, 'entry', NEW.overtime_minutes, NEW.id);
     ELSIF NEW.overtime_minutes <> OLD.overtime_minutes THEN
       INSERT INTO overtime_ledger (tenant_id, user_id, kind, delta_minutes, time_entry_id)
       VALUES (NEW.tenant_id, NEW.user_id, 'correction', NEW.overtime_minutes - OLD.overtime_minutes, NEW.id);
     END IF;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER time_entries_ledger AFTER INSERT OR UPDATE ON time_entries
     FOR EACH ROW EXECUTE FUNCTION overtime_ledger_from_entry()`,
  `CREATE FUNCTION time_entries_keep_owner() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF (NEW.tenant_id, NEW.user_id, NEW.shift_assignment_id)
        IS DISTINCT FROM (OLD.tenant_id, OLD.user_id, OLD.shift_assignment_id) THEN
       RAISE EXCEPTION 'a time entry stays with its assignment and user'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'time_entries_owner_fixed', TABLE = 'time_entries';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER time_entries_owner_fixed BEFORE UPDATE ON time_entries
     FOR EACH ROW EXECUTE FUNCTION time_entries_keep_owner()`,
  `CREATE FUNCTION overtime_ledger_from_payout() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO overtime_ledger (tenant_id, user_id, kind, delta_minutes, payout_id)
     VALUES (NEW.tenant_id, NEW.user_id, 'payout', -NEW.minutes, NEW.id);
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER payouts_ledger AFTER INSERT ON payouts
     FOR EACH ROW EXECUTE FUNCTION overtime_ledger_from_payout()`,
  `CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     RAISE EXCEPTION '% rows are append-only', TG_TABLE_NAME
       USING ERRCODE = 'check_violation', CONSTRAINT = TG_TABLE_NAME || '_append_only', TABLE = TG_TABLE_NAME;
   END $$`,
  `CREATE TRIGGER payouts_append_only BEFORE UPDATE ON payouts
     FOR EACH ROW EXECUTE FUNCTION refuse_change()`,

  // The ledger: written only by the triggers above, never changed.
  `CREATE FUNCTION overtime_ledger_guard_insert() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF pg_trigger_depth() = 1 THEN
       RAISE EXCEPTION 'ledger rows are written by time entries and payouts'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'overtime_ledger_derived', TABLE = 'overtime_ledger';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER overtime_ledger_derived BEFORE INSERT ON overtime_ledger
     FOR EACH ROW EXECUTE FUNCTION overtime_ledger_guard_insert()`,
  `CREATE TRIGGER overtime_ledger_append_only BEFORE UPDATE OR DELETE ON overtime_ledger
     FOR EACH ROW EXECUTE FUNCTION refuse_change()`,
  `CREATE TRIGGER overtime_ledger_no_truncate BEFORE TRUNCATE ON overtime_ledger
     FOR EACH STATEMENT EXECUTE FUNCTION refuse_change()`,

  // A balance is the sum of its ledger: each ledger row moves it, and only that.
  `CREATE FUNCTION overtime_balances_apply() RETURNS trigger LANGUAGE plpgsql AS $$
   DECLARE
     balance bigint;
   BEGIN
     INSERT INTO overtime_balances AS b (tenant_id, user_id, balance_minutes, updated_at)
     VALUES (NEW.tenant_id, NEW.user_id, NEW.delta_minutes, NEW.created_at)
     ON CONFLICT (tenant_id, user_id) DO UPDATE
       SET balance_minutes = b.balance_minutes + EXCLUDED.balance_minutes, updated_at = EXCLUDED.updated_at
     RETURNING b.balance_minutes INTO balance;
     IF NEW.kind = 'payout' AND balance < 0 THEN
       RAISE EXCEPTION 'a payout cannot exceed the overtime balance'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'overtime_payout_within_balance',
               TABLE = 'overtime_balances';
     END IF;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER overtime_ledger_moves_balance AFTER INSERT ON overtime_ledger
     FOR EACH ROW EXECUTE FUNCTION overtime_balances_apply()`,
  `CREATE FUNCTION overtime_balances_guard() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF pg_trigger_depth() = 1 THEN
       RAISE EXCEPTION 'a balance is the sum of its ledger rows and moves only with them'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'overtime_balances_derived', TABLE = 'overtime_balances';
     END IF;
     RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
   END $$`,
  `CREATE TRIGGER overtime_balances_derived BEFORE INSERT OR UPDATE OR DELETE ON overtime_balances
     FOR EACH ROW EXECUTE FUNCTION overtime_balances_guard()`,
  `CREATE TRIGGER overtime_balances_no_truncate BEFORE TRUNCATE ON overtime_balances
     FOR EACH STATEMENT EXECUTE FUNCTION refuse_change()`,
  'ALTER TABLE overtime_balances DROP CONSTRAINT overtime_balances_tenant_id_user_id_fkey',
  `ALTER TABLE overtime_balances ADD CONSTRAINT overtime_balances_user_fkey
     FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE RESTRICT`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
