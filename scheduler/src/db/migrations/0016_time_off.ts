import { type Kysely, sql } from 'kysely';

/**
 * Time off: a span an admin or employee asks to be away, `requested` until an admin
 * approves or rejects it (or `approved` as it is entered when the tenant's
 * `time_off_needs_approval` is off). Approved time off and the user's assignments never
 * overlap, whatever writes them:
 *
 * - an assignment (inserted, or moved to another user or other times) overlapping an
 *   approved time off of its user is refused (`shift_assignments_time_off`);
 * - a time off becoming approved, or an approved one moved to other times or another
 *   user, while it overlaps an assignment of the user is refused
 *   (`time_off_overlaps_assignments`). Nothing is removed to make room.
 *
 * Under concurrency each side reads the other's table, so each must see what the other
 * committed: both lock the user's row first, in modes that conflict. The assignment side
 * takes `FOR SHARE`, as migration 0010's trigger does (its trigger fires after this one,
 * by name, so this one must take the lock itself); seats of one user taken at the same
 * time do not wait for each other (the exclusion constraint orders those). The time-off
 * side takes `FOR NO KEY UPDATE`, which conflicts with `FOR SHARE`: an approval waits for
 * a claim holding the share lock to end, and a claim waits for an approval holding the
 * update lock. Each trigger reads the other table only after its lock, in a statement of
 * its own; at READ COMMITTED that statement sees what the other committed while it
 * waited, so a claim racing an approval never both commit. `FOR NO KEY UPDATE` rather
 * than `FOR UPDATE`: the foreign keys' `FOR KEY SHARE` on the user row (every insert
 * naming the user) need not wait for an approval.
 *
 * `starts_at`/`ends_at` last at most 366 days (a year's leave, a leap year included):
 * longer is a typing error, and the bound lets the overlap reads below start from an
 * index range. The reason is free text, at most 500 characters. `decided_at` is set
 * exactly when the status is not `requested`; `decided_by` is the admin who decided, or
 * null when the tenant's setting approved it.
 */
const statements = [
  `CREATE TABLE time_off (
     tenant_id   uuid NOT NULL,
     id          uuid NOT NULL,
     user_id     uuid NOT NULL,
     starts_at   timestamptz NOT NULL,
     ends_at     timestamptz NOT NULL,
     reason      text,
     status      text NOT NULL DEFAULT 'requested',
     decided_by  uuid,
     decided_at  timestamptz,
     created_at  timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (tenant_id, id),
     FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
     CONSTRAINT time_off_status CHECK (status IN ('requested', 'approved', 'rejected')),
     CONSTRAINT time_off_ends_after_start CHECK (ends_at > starts_at),
     CONSTRAINT time_off_at_most_366_days CHECK (ends_at - starts_at <= interval '366 days'),
     CONSTRAINT time_off_reason_length CHECK (char_length(reason) <= 500),
     CONSTRAINT time_off_decided CHECK ((status = 'requested') = (decided_at IS NULL))
   )`,
  // The list's order and cursor (start, id), for the tenant and for one user; the end, for
  // the lower bound of a window; the approved spans of a user, for the triggers below.
  'CREATE INDEX time_off_starts ON time_off (tenant_id, starts_at, id)',
  'CREATE INDEX time_off_user_starts ON time_off (tenant_id, user_id, starts_at, id)',
  'CREATE INDEX time_off_ends ON time_off (tenant_id, ends_at)',
  `CREATE INDEX time_off_approved ON time_off (tenant_id, user_id, starts_at)
     WHERE status = 'approved'`,

  `CREATE FUNCTION shift_assignments_refuse_time_off() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     PERFORM 1 FROM users u WHERE u.tenant_id = NEW.tenant_id AND u.id = NEW.user_id FOR SHARE;
     IF EXISTS (
       SELECT 1 FROM time_off t
        WHERE t.tenant_id = NEW.tenant_id AND t.user_id = NEW.user_id AND t.status = 'approved'
          AND t.starts_at < NEW.ends_at AND t.ends_at > NEW.starts_at
          -- In hours: days would follow the session's time zone across a DST change.
          AND t.starts_at > NEW.starts_at - interval '8784 hours'
     ) THEN
       RAISE EXCEPTION 'the user has approved time off then'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'shift_assignments_time_off',
               TABLE = 'shift_assignments';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER shift_assignments_time_off
     BEFORE INSERT OR UPDATE OF tenant_id, user_id, starts_at, ends_at
     ON shift_assignments FOR EACH ROW EXECUTE FUNCTION shift_assignments_refuse_time_off()`,

  `CREATE FUNCTION time_off_refuse_assignments() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.status <> 'approved' OR (TG_OP = 'UPDATE' AND OLD.status = 'approved'
         AND (OLD.tenant_id, OLD.user_id, OLD.starts_at, OLD.ends_at)
             IS NOT DISTINCT FROM (NEW.tenant_id, NEW.user_id, NEW.starts_at, NEW.ends_at)) THEN
       RETURN NEW;
     END IF;
     PERFORM 1 FROM users u
      WHERE u.tenant_id = NEW.tenant_id AND u.id = NEW.user_id FOR NO KEY UPDATE;
     IF EXISTS (
       SELECT 1 FROM shift_assignments a
        WHERE a.tenant_id = NEW.tenant_id AND a.user_id = NEW.user_id
          AND a.starts_at < NEW.ends_at AND a.ends_at > NEW.starts_at
     ) THEN
       RAISE EXCEPTION 'the time off overlaps assignments of the user'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'time_off_overlaps_assignments',
               TABLE = 'time_off';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER time_off_overlaps_assignments BEFORE INSERT OR UPDATE
     ON time_off FOR EACH ROW EXECUTE FUNCTION time_off_refuse_assignments()`,

  // The wall of migration 0006, as on every tenant table.
  'ALTER TABLE time_off ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY tenant_wall ON time_off
     USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
  'GRANT SELECT, INSERT, UPDATE, DELETE ON time_off TO scheduler_app',
  // Requests, decisions and removals in the audit log (migration 0015).
  `CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON time_off FOR EACH ROW
     EXECUTE FUNCTION audit_row('time_off')`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
