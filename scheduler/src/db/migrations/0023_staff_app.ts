import { type Kysely, sql } from 'kysely';

/**
 * What the staff app needs of the schema:
 *
 * - `tenant_settings.time_entries_before_end` (off by default): time is recorded for a
 *   shift once it has ended. A first entry of an assignment whose shift ends after the
 *   transaction's `now()` is refused (`time_entries_shift_ended`) unless the tenant's
 *   setting is on; a tenant without settings is refused too. Only the first recording is
 *   judged: a re-post of an assignment that has an entry (an admin's correction, through
 *   `INSERT ... ON CONFLICT` and then an update) passes, whatever the setting says now,
 *   since a BEFORE INSERT trigger fires before the conflict is found.
 * - `users.locale`: the language a person chose for the app, a BCP 47 tag or null (the
 *   app's own choice). The service stores the canonical form of a tag the runtime knows
 *   (`users/service.ts`); the database holds the shape: 2 to 35 characters, subtags of
 *   letters and digits joined by hyphens, the first of 2 to 8 letters.
 * - `push_subscriptions.label` and `user_agent`: what tells a person's browsers apart in
 *   the app's list: a name given at registration (one line, 1 to 100 characters) and the
 *   browser's User-Agent as it registered (at most 512 characters, no control
 *   characters); either may be null.
 */
const statements = [
  'ALTER TABLE tenant_settings ADD COLUMN time_entries_before_end boolean NOT NULL DEFAULT false',

  `CREATE FUNCTION time_entries_refuse_before_end() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF EXISTS (
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
  `CREATE TRIGGER time_entries_shift_ended BEFORE INSERT
     ON time_entries FOR EACH ROW EXECUTE FUNCTION time_entries_refuse_before_end()`,

  'ALTER TABLE users ADD COLUMN locale text',
  `ALTER TABLE users ADD CONSTRAINT users_locale_shape
     CHECK (char_length(locale) BETWEEN 2 AND 35 AND locale ~ '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$')`,

  'ALTER TABLE push_subscriptions ADD COLUMN label text, ADD COLUMN user_agent text',
  `ALTER TABLE push_subscriptions ADD CONSTRAINT push_subscriptions_label_shape
     CHECK (char_length(label) BETWEEN 1 AND 100 AND label !~ '[[:cntrl:]]')`,
  `ALTER TABLE push_subscriptions ADD CONSTRAINT push_subscriptions_user_agent_shape
     CHECK (char_length(user_agent) BETWEEN 1 AND 512 AND user_agent !~ '[[:cntrl:]]')`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
