import { type Kysely, sql } from 'kysely';

/**
 * The audit log: who changed what, written by the database itself, so that no write path
 * can forget it and a change that rolls back leaves no row (the row is part of the
 * change's own transaction).
 *
 * - `audit_log` holds one row per changed row of an audited table: the actor
 *   (`app.actor_id`, the user of the request, told to every connection with its tenant by
 *   src/db/drivers.ts; null for background work and provisioning), the action, the target
 *   and `changes` `{before, after}`: every column on insert and delete, only the columns
 *   that changed on update. `seq` (an identity) gives the stable newest-first order.
 * - `audit_row()` is the one trigger function. Its first argument names the target type,
 *   optionally with the column holding the target's id after a colon (default `id`):
 *   `'user_qualification:user_id'`; further arguments name bookkeeping columns it
 *   ignores (an update changing only those writes nothing). The action is
 *   `<type>.created|updated|deleted`, unless the transaction named a better one in
 *   `app.audit_action` for that type (src/audit/action.ts): `assignment.claimed` renames
 *   only the assignment's row, never a row another table's trigger changed with it.
 *   Columns named `secret`, `password` or ending in `_secret`, `_private_key` or `_hash`
 *   are recorded as "[redacted]", never their value. Values are kept in the API's wire
 *   forms (uuids as 32 hex digits, instants as RFC 3339 UTC to the millisecond).
 * - Audited (everything an admin writes, and claims and withdrawals): tenant_settings,
 *   users, roles, user_qualifications, locations, customer_forms, form_submissions
 *   (including their conversion into events), events, event_documents, shifts,
 *   shift_slots (not `filled_count`, which the assignment's own row already records),
 *   shift_assignments, time_entries and payouts; `updated_at` is ignored everywhere.
 *   Left out: rows the database derives (overtime_ledger, overtime_balances), queues and
 *   bookkeeping (jobs, notifications, shift_reminders, form_submit_hits),
 *   push_subscriptions and calendar_tokens (each user's own devices and feed address, no
 *   one else's decision), and tenants (created by provisioning; holds the VAPID private
 *   key). Sign-ins do not add noise: provisioning writes a user only when the token's
 *   role, name or email differ from the row.
 * - Attaching another table is one statement:
 *   `CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON <table> FOR EACH ROW
 *    EXECUTE FUNCTION audit_row('<type>', 'updated_at')`.
 * - Append-only for the application: `scheduler_app` may read and insert (behind the
 *   tenant wall of migration 0006), never update or delete. The trigger runs as the
 *   invoker: the audited row already passed the tenant wall, so its audit row (same
 *   tenant) does too, and no function running as the owner is needed.
 * - No foreign key to `tenants`: the log outlives what it records, and a cascade from a
 *   deleted tenant would otherwise refuse its own audit rows.
 */
const audited: [table: string, target: string, ...ignored: string[]][] = [
  ['tenant_settings', 'tenant_settings:tenant_id', 'updated_at'],
  ['users', 'user', 'updated_at'],
  ['roles', 'role'],
  ['user_qualifications', 'user_qualification:user_id'],
  ['locations', 'location'],
  ['customer_forms', 'form', 'updated_at'],
  ['form_submissions', 'form_submission'],
  ['events', 'event'],
  ['event_documents', 'document'],
  ['shifts', 'shift'],
  ['shift_slots', 'slot', 'filled_count'],
  ['shift_assignments', 'assignment'],
  ['time_entries', 'time_entry', 'updated_at'],
  ['payouts', 'payout'],
];

const quoted = (value: string) => `'${value}'`;

const statements = [
  `CREATE TABLE audit_log (
     tenant_id      uuid NOT NULL,
     seq            bigint GENERATED ALWAYS AS IDENTITY,
     id             uuid NOT NULL,
     actor_user_id  uuid,
     action         text NOT NULL,
     target_type    text NOT NULL,
     target_id      uuid NOT NULL,
     at             timestamptz NOT NULL DEFAULT now(),
     changes        jsonb NOT NULL,
     PRIMARY KEY (tenant_id, seq),
     UNIQUE (tenant_id, id)
   )`,
  // The listing is newest first by seq; each filter has an index leading to that order.
  'CREATE INDEX audit_log_actor ON audit_log (tenant_id, actor_user_id, seq)',
  'CREATE INDEX audit_log_target ON audit_log (tenant_id, target_id, seq)',
  'CREATE INDEX audit_log_at ON audit_log (tenant_id, at)',

  `CREATE FUNCTION audit_value(name text, value jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
     SELECT CASE
       WHEN value = 'null'::jsonb THEN value
       WHEN name ~ '^(secret|password|.*_secret|.*_private_key|.*_hash)$' THEN to_jsonb('[redacted]'::text)
       WHEN jsonb_typeof(value) <> 'string' THEN value
       WHEN value #>> '{}' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
         THEN to_jsonb(replace(value #>> '{}', '-', ''))
       WHEN value #>> '{}' ~ '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?\\+00:00$'
         THEN to_jsonb(to_char((value #>> '{}')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
       ELSE value
     END $$`,

  // TimeZone UTC: to_jsonb writes instants in the session's zone, audit_value reads UTC.
  `CREATE FUNCTION audit_row() RETURNS trigger LANGUAGE plpgsql SET TimeZone = 'UTC' AS $$
   DECLARE
     target_type text := split_part(TG_ARGV[0], ':', 1);
     id_column text := coalesce(nullif(split_part(TG_ARGV[0], ':', 2), ''), 'id');
     ignored text[] := coalesce(TG_ARGV[1:TG_NARGS - 1], '{}');
     old_row jsonb;
     new_row jsonb;
     the_row jsonb;
     before jsonb := '{}';
     after jsonb := '{}';
     name text;
     named text := nullif(current_setting('app.audit_action', true), '');
   BEGIN
     IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
     IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
     the_row := coalesce(new_row, old_row);
     FOR name IN SELECT jsonb_object_keys(the_row) LOOP
       CONTINUE WHEN name = 'tenant_id' OR name = ANY (ignored);
       CONTINUE WHEN TG_OP = 'UPDATE' AND (old_row -> name) IS NOT DISTINCT FROM (new_row -> name);
       IF old_row IS NOT NULL THEN before := before || jsonb_build_object(name, audit_value(name, old_row -> name)); END IF;
       IF new_row IS NOT NULL THEN after := after || jsonb_build_object(name, audit_value(name, new_row -> name)); END IF;
     END LOOP;
     -- Only ignored columns changed (or nothing did): nothing to record.
     IF TG_OP = 'UPDATE' AND after = '{}'::jsonb THEN RETURN NULL; END IF;
     IF named IS NULL OR NOT starts_with(named, target_type || '.') THEN
       named := target_type || CASE TG_OP WHEN 'INSERT' THEN '.created' WHEN 'UPDATE' THEN '.updated' ELSE '.deleted' END;
     END IF;
     INSERT INTO audit_log (tenant_id, id, actor_user_id, action, target_type, target_id, changes)
     VALUES ((the_row ->> 'tenant_id')::uuid, gen_random_uuid(),
             nullif(current_setting('app.actor_id', true), '')::uuid, named, target_type,
             (the_row ->> id_column)::uuid, jsonb_build_object('before', before, 'after', after));
     RETURN NULL;
   END $$`,

  ...audited.map(
    ([table, target, ...ignored]) =>
      `CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW
         EXECUTE FUNCTION audit_row(${[target, ...ignored].map(quoted).join(', ')})`,
  ),

  'ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY tenant_wall ON audit_log
     USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
  'GRANT SELECT, INSERT ON audit_log TO scheduler_app',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
