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
 *   `app.audit_action` for that type (src/changes/unit-of-work.ts): `assignment.claimed` renames
 *   only the assignment's row, never a row another table's trigger changed with it.
 *   Columns named `secret`, `password`, `token` or ending in `_secret`, `_private_key`,
 *   `_hash` or `_token` are recorded as "[redacted]", never their value. `changes` holds
 *   the stored columns by their names; by each column's type, uuids are written as 32 hex
 *   digits and instants as RFC 3339 UTC to the millisecond, as the API writes them, and
 *   everything else (free text above all) as stored.
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
 * - Append-only for the application: `scheduler_app` may only read (behind the tenant
 *   wall of migration 0006); it can neither update nor delete a row, nor write one no
 *   change made. The trigger function runs as the owner and takes the tenant from the
 *   audited row, which has passed the tenant wall already.
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
  // The listing is newest first by (at, seq); each filter has an index in that order, so a
  // page reads its rows off the index without sorting the window.
  'CREATE INDEX audit_log_actor ON audit_log (tenant_id, actor_user_id, at, seq)',
  'CREATE INDEX audit_log_target ON audit_log (tenant_id, target_id, at, seq)',
  'CREATE INDEX audit_log_at ON audit_log (tenant_id, at, seq)',

  // The fields of a row (as JSON) that differ from `other` (all of them when it is null),
  // each in the API's form, decided by the column's type, never by what a value looks
  // like: uuid columns as 32 hex digits, timestamptz ones as RFC 3339 UTC to the
  // millisecond (the JSON carries the offset, so the session's zone does not matter),
  // free text as it is. plpgsql, so its query is planned once per session.
  `CREATE FUNCTION audit_fields(rel oid, r jsonb, other jsonb, ignored text[]) RETURNS jsonb
     LANGUAGE plpgsql STABLE AS $$
   BEGIN
     RETURN (
       SELECT coalesce(jsonb_object_agg(a.attname, CASE
                WHEN v = 'null'::jsonb THEN v
                WHEN a.attname ~ '^(secret|password|token|.*_secret|.*_private_key|.*_hash|.*_token)$'
                  THEN to_jsonb('[redacted]'::text)
                WHEN a.atttypid = 'uuid'::regtype THEN to_jsonb(replace(v #>> '{}', '-', ''))
                WHEN a.atttypid = 'timestamptz'::regtype AND isfinite((v #>> '{}')::timestamptz)
                  THEN to_jsonb(to_char((v #>> '{}')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                ELSE v
              END), '{}'::jsonb)
         FROM pg_attribute a
         CROSS JOIN LATERAL (SELECT r -> a.attname::text AS v) field
        WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
          AND a.attname <> 'tenant_id' AND NOT (a.attname::text = ANY (ignored))
          AND (other IS NULL OR v IS DISTINCT FROM other -> a.attname::text));
   END $$`,

  // Runs as the owner: the application may not write audit rows itself (it has no INSERT
  // on audit_log), only make the changes they record.
  `CREATE FUNCTION audit_row() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
     SET search_path = pg_catalog, public AS $$
   DECLARE
     target_type text := split_part(TG_ARGV[0], ':', 1);
     id_column text := coalesce(nullif(split_part(TG_ARGV[0], ':', 2), ''), 'id');
     ignored text[] := coalesce(TG_ARGV[1:TG_NARGS - 1], '{}');
     old_row jsonb;
     new_row jsonb;
     the_row jsonb;
     before jsonb := '{}';
     after jsonb := '{}';
     named text := nullif(current_setting('app.audit_action', true), '');
   BEGIN
     IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
     IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
     the_row := coalesce(new_row, old_row);
     IF new_row IS NOT NULL THEN after := audit_fields(TG_RELID, new_row, old_row, ignored); END IF;
     -- Only ignored columns changed (or nothing did): nothing to record.
     IF TG_OP = 'UPDATE' AND after = '{}'::jsonb THEN RETURN NULL; END IF;
     IF old_row IS NOT NULL THEN before := audit_fields(TG_RELID, old_row, new_row, ignored); END IF;
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
  'GRANT SELECT ON audit_log TO scheduler_app',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
