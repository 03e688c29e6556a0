import { type Kysely, sql } from 'kysely';

/**
 * People an admin manages:
 *
 * - `active` (true by default): a deactivated user keeps every record (assignments, time
 *   entries, balances) but holds no new seat. The trigger below refuses an assignment for
 *   an inactive user whatever writes it; it reads the user's row `FOR SHARE`, which
 *   conflicts with the row lock a deactivation's update takes, so a claim racing a
 *   deactivation either commits first (and the deactivation, which frees upcoming seats
 *   in its own transaction, then sees and frees it) or waits and is refused.
 * - `profile_set_by_admin` (false by default): the name and email were written by an
 *   admin (pre-provisioned, or changed since). Sign-ins then fill only what is empty,
 *   where otherwise the latest token's name and email win.
 */
const statements = [
  'ALTER TABLE users ADD COLUMN active boolean NOT NULL DEFAULT true',
  'ALTER TABLE users ADD COLUMN profile_set_by_admin boolean NOT NULL DEFAULT false',
  `CREATE FUNCTION shift_assignments_require_active_user() RETURNS trigger LANGUAGE plpgsql AS $$
   DECLARE
     user_active boolean;
   BEGIN
     SELECT u.active INTO user_active FROM users u
      WHERE u.tenant_id = NEW.tenant_id AND u.id = NEW.user_id FOR SHARE;
     -- No such user: the foreign key refuses the row with its own error.
     IF user_active IS FALSE THEN
       RAISE EXCEPTION 'the user is deactivated'
         USING ERRCODE = 'check_violation', CONSTRAINT = 'shift_assignments_user_active',
               TABLE = 'shift_assignments';
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER shift_assignments_user_active BEFORE INSERT OR UPDATE OF tenant_id, user_id
     ON shift_assignments FOR EACH ROW EXECUTE FUNCTION shift_assignments_require_active_user()`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
