import { type Kysely, sql } from 'kysely';

/**
 * Offers: an employee gives their seat to a colleague, who takes it (or an admin
 * approves the move when the tenant asks for that).
 *
 * - `offers` names the seat (assignment and its shift, one composite key within the
 *   tenant), the giver, an optional target and, once taken, the taker (`accepted_by`).
 *   Stored statuses are `open`, `accepted` (waiting for an admin), `approved`,
 *   `rejected` and `cancelled`. `expired` is never stored: an open or accepted offer
 *   whose `expires_at` (the shift's start, copied when the offer is made; a shift's times
 *   cannot move under its assignments) has passed reads as expired, and the statement
 *   that takes an offer refuses it then, so no sweeper has to run at the start of every
 *   shift and the status cannot lag behind the clock.
 * - At most one live (open or accepted) offer per assignment: a partial unique index, so
 *   two offers made at once cannot both go in. An offer left live when its shift started
 *   blocks nothing: no seat is offered once its shift has started.
 * - Moving the seat is an UPDATE of the assignment's `user_id` (the same row in the same
 *   slot, so the slot's count does not change). Every rule of a claim holds for it in
 *   the database: the overlap exclusion constraint and the one-seat-per-shift key
 *   (0002), the inactive-user trigger (0010) and, added here, a trigger refusing a move to
 *   a user who lacks the slot's role (`shift_assignments_user_qualified`). It reads the
 *   qualification `FOR SHARE`, so a revocation racing the move waits for it or wins.
 *   It runs after the inactive-user trigger (triggers fire by name), so a deactivated
 *   user is refused as such. Inserts are not covered (a claim checks the role in its own
 *   statement, and fixtures and benchmarks write seats directly), nor moves between slots,
 *   which no route makes. Recorded time pins a seat to its user:
 *   the time entries' key names `(assignment, user)` (0002) and refuses the move.
 */
const statements = [
  'ALTER TABLE shift_assignments ADD CONSTRAINT shift_assignments_shift_id_key UNIQUE (tenant_id, id, shift_id)',
  `CREATE TABLE offers (
     tenant_id      uuid NOT NULL,
     id             uuid NOT NULL,
     assignment_id  uuid NOT NULL,
     shift_id       uuid NOT NULL,
     from_user_id   uuid NOT NULL,
     to_user_id     uuid,
     status         text NOT NULL DEFAULT 'open'
                    CHECK (status IN ('open', 'accepted', 'approved', 'rejected', 'cancelled')),
     accepted_by    uuid,
     created_at     timestamptz NOT NULL DEFAULT now(),
     decided_at     timestamptz,
     decided_by     uuid,
     expires_at     timestamptz NOT NULL,
     PRIMARY KEY (tenant_id, id),
     FOREIGN KEY (tenant_id, assignment_id, shift_id)
       REFERENCES shift_assignments (tenant_id, id, shift_id) ON DELETE CASCADE,
     FOREIGN KEY (tenant_id, from_user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
     FOREIGN KEY (tenant_id, to_user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
     FOREIGN KEY (tenant_id, accepted_by) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
     CONSTRAINT offers_not_to_self CHECK (to_user_id <> from_user_id AND accepted_by <> from_user_id),
     CONSTRAINT offers_taker_known CHECK ((status IN ('accepted', 'approved')) = (accepted_by IS NOT NULL)
                                          OR status IN ('rejected', 'cancelled')),
     CONSTRAINT offers_decided CHECK ((status IN ('open', 'accepted')) = (decided_at IS NULL))
   )`,
  `CREATE UNIQUE INDEX offers_one_live ON offers (tenant_id, assignment_id)
     WHERE status IN ('open', 'accepted')`,
  'CREATE INDEX offers_shift ON offers (tenant_id, shift_id)',
  'ALTER TABLE offers ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY tenant_wall ON offers
     USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
  'GRANT SELECT, INSERT, UPDATE, DELETE ON offers TO scheduler_app',

  `CREATE FUNCTION shift_assignments_require_qualification() RETURNS trigger LANGUAGE plpgsql AS $$
   DECLARE
     held uuid;
   BEGIN
     SELECT q.role_id INTO held FROM user_qualifications q
       JOIN shift_slots sl ON sl.tenant_id = q.tenant_id AND sl.role_id = q.role_id
      WHERE sl.tenant_id = NEW.tenant_id AND sl.id = NEW.slot_id AND q.user_id = NEW.user_id
        FOR SHARE OF q;
     IF held IS NULL THEN
       RAISE EXCEPTION 'the user does not hold the role this slot needs'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'shift_assignments_user_qualified',
               TABLE = 'shift_assignments';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER shift_assignments_user_qualified BEFORE UPDATE OF tenant_id, user_id
     ON shift_assignments FOR EACH ROW EXECUTE FUNCTION shift_assignments_require_qualification()`,
  // A seat that changes hands is the new holder's to be reminded of (migration 0008 keeps
  // one reminder per assignment): whatever moves it, the old holder's reminder is forgotten.
  `CREATE FUNCTION shift_assignments_forget_reminder() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     DELETE FROM shift_reminders r WHERE r.tenant_id = NEW.tenant_id AND r.assignment_id = NEW.id;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER shift_assignments_new_holder_reminded AFTER UPDATE OF user_id ON shift_assignments
     FOR EACH ROW WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id)
     EXECUTE FUNCTION shift_assignments_forget_reminder()`,
  // Every step of an offer in the audit log (migration 0015).
  `CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON offers FOR EACH ROW
     EXECUTE FUNCTION audit_row('offer')`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
