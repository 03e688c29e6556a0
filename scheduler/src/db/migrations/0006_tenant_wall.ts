import { type Kysely, sql } from 'kysely';

/**
 * A second wall between tenants, behind the application's own `tenant_id` filters:
 * row-level security on every table that holds a tenant's rows.
 *
 * - The application runs as `scheduler_app` (created here when missing): no login, not the
 *   owner of any table, no BYPASSRLS. It may read and write rows, nothing else (no DDL,
 *   no TRUNCATE, nothing of the migration tables). The owner who runs the migrations keeps
 *   bypassing the policies (they are not FORCEd), as migrations and operators need.
 * - Each connection the application borrows is told its request's tenant in
 *   `app.tenant_id` (src/db/drivers.ts); `app_current_tenant()` reads it, and every policy
 *   shows, updates, deletes and accepts only rows of that tenant. No tenant (an empty or
 *   missing setting) matches nothing. The policies read it through a scalar subquery,
 *   which PostgreSQL evaluates once per statement rather than once per row.
 * - Two lookups must cross tenants by design, and do so through narrow functions run as
 *   the owner that answer only an id: the tenant of a public form's slug (the form surface
 *   answers 403, not 404, for another tenant's form) and the owner of a calendar feed
 *   token (the feed has no bearer token).
 *
 * A membership in `scheduler_app` is granted to the migrating login when it is neither a
 * superuser nor a member yet, so that a DATABASE_URL naming the owner can switch to it.
 */
const tenantTables = [
  'tenant_settings',
  'users',
  'roles',
  'user_qualifications',
  'locations',
  'customer_forms',
  'form_submissions',
  'events',
  'event_documents',
  'shifts',
  'shift_slots',
  'shift_assignments',
  'time_entries',
  'overtime_balances',
  'payouts',
  'overtime_ledger',
  'notifications',
  'push_subscriptions',
  'calendar_tokens',
];

const statements = [
  `DO $$
   BEGIN
     IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'scheduler_app') THEN
       CREATE ROLE scheduler_app NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
     END IF;
   EXCEPTION WHEN duplicate_object THEN
     NULL; -- created by a concurrent migration of another database of this cluster
   END $$`,
  `DO $$
   BEGIN
     IF NOT pg_has_role(current_user, 'scheduler_app', 'MEMBER') THEN
       EXECUTE format('GRANT scheduler_app TO %I', current_user);
     END IF;
   END $$`,

  `CREATE FUNCTION app_current_tenant() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE
     AS $$ SELECT nullif(current_setting('app.tenant_id', true), '')::uuid $$`,

  'GRANT USAGE ON SCHEMA public TO scheduler_app',
  'ALTER TABLE tenants ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY tenant_wall ON tenants
     USING (id = (SELECT app_current_tenant())) WITH CHECK (id = (SELECT app_current_tenant()))`,
  'GRANT SELECT, INSERT, UPDATE, DELETE ON tenants TO scheduler_app',
  ...tenantTables.flatMap((table) => [
    `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
    `CREATE POLICY tenant_wall ON ${table}
       USING (tenant_id = (SELECT app_current_tenant())) WITH CHECK (tenant_id = (SELECT app_current_tenant()))`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO scheduler_app`,
  ]),
  'GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO scheduler_app',

  `CREATE FUNCTION form_tenant(form_slug text) RETURNS uuid
     LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
     AS $$ SELECT tenant_id FROM public.customer_forms WHERE slug = form_slug $$`,
  'REVOKE ALL ON FUNCTION form_tenant(text) FROM PUBLIC',
  'GRANT EXECUTE ON FUNCTION form_tenant(text) TO scheduler_app',
  `CREATE FUNCTION calendar_token_owner(hash text) RETURNS TABLE (tenant_id uuid, user_id uuid)
     LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
     AS $$ SELECT c.tenant_id, c.user_id FROM public.calendar_tokens c WHERE c.token_hash = hash $$`,
  'REVOKE ALL ON FUNCTION calendar_token_owner(text) FROM PUBLIC',
  'GRANT EXECUTE ON FUNCTION calendar_token_owner(text) TO scheduler_app',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
