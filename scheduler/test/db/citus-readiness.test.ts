import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/types.ts';
import { useTestDatabase } from '../support/database.ts';

/**
 * The schema stays ready to be distributed by tenant (Citus; docs/operations.md, "Scaling
 * the scheduler beyond one machine"), read from the catalogue of the migrated database on
 * PGlite and, with TEST_DB=postgres, on PostgreSQL:
 *
 * - every table with a `tenant_id` leads its primary key, its unique constraints and
 *   indexes, its exclusion constraints and its foreign keys with it (a foreign key to a
 *   reference table excepted), so a tenant's rows, and every rule between them, live on
 *   one worker; the tables without one are the declared reference tables, each with why;
 * - the row-level security policies compare `tenant_id` (the `tenants` table: its `id`)
 *   with `app_current_tenant()`, which reads `app.tenant_id` alone;
 * - the functions that run as the owner (SECURITY DEFINER, past the tenant wall) are the
 *   declared ones, and those that read across tenants are named.
 *
 * A migration that breaks a rule fails here until it is fixed or declared below with its
 * reason; the last test shows it with a throwaway table.
 */
const handle = useTestDatabase();

/** Tables without `tenant_id`: reference tables (copied to every worker) or kept on the coordinator. */
const referenceTables: Record<string, string> = {
  tenants: 'one row per tenant, keyed by its id: a reference table, or distributed on id itself',
  form_submit_hits:
    'the form submit limit (FORM_SUBMIT_LIMIT_STORE=database), keyed by client address and slug: no tenant’s rows; kept on the coordinator',
  kysely_migration: 'the migrations applied (Kysely’s record): the coordinator’s',
  kysely_migration_lock: 'the lock one migrating process holds (Kysely’s): the coordinator’s',
};

/** Unique keys that are global by design, not per tenant: what distribution must change first. */
const globalUniqueKeys: Record<string, string> = {
  customer_forms_slug_key:
    'a form’s slug is unique across tenants: /f/{slug} carries no tenant (form_tenant() finds it); needs a slug -> tenant reference table',
  calendar_tokens_token_hash_key:
    'a calendar feed token is unique across tenants: /cal/{token}.ics carries no tenant (calendar_token_owner() finds it); needs a hash -> tenant reference table',
};

/** Every function that runs as the owner, past the tenant wall; `acrossTenants` when it reads more than one tenant's rows. */
const ownerFunctions: Record<string, { acrossTenants: boolean; why: string }> = {
  audit_row: { acrossTenants: false, why: 'writes the audit row of the audited row’s own tenant' },
  calendar_token_owner: { acrossTenants: true, why: 'the tenant and user of a calendar feed token' },
  claim_jobs: { acrossTenants: true, why: 'claims due jobs of every tenant, fairly' },
  due_shift_reminders: { acrossTenants: true, why: 'the shift reminders due, of every tenant' },
  form_tenant: { acrossTenants: true, why: 'the tenant of a public form’s slug' },
  prune_jobs: { acrossTenants: true, why: 'removes finished jobs of every tenant' },
  prune_webhook_records: { acrossTenants: true, why: 'removes old deliveries and batches of every tenant' },
};

interface Key {
  table: string;
  name: string;
  kind: 'primary key' | 'unique' | 'foreign key' | 'exclusion' | 'unique index';
  columns: string[];
  references: string | null;
  referencedColumns: string[];
}

const list = (joined: string | null) => (joined ? joined.split(',') : []);

/** What the catalogue says breaks the rules, one line each; [] when the schema is ready. */
async function problems(db: Kysely<Database>): Promise<string[]> {
  const { rows: tables } = await sql<{ table: string; tenant: boolean }>`
    SELECT c.relname AS table,
           EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS tenant
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`.execute(db);
  const { rows: constraints } = await sql<{
    table: string;
    name: string;
    type: string;
    columns: string | null;
    references: string | null;
    referenced: string | null;
  }>`
    SELECT t.relname AS table, c.conname AS name, c.contype AS type,
           (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS columns,
           f.relname AS references,
           (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY k(attnum, ord)
              JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS referenced
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      LEFT JOIN pg_class f ON f.oid = c.confrelid
     WHERE n.nspname = 'public' AND c.contype IN ('p', 'u', 'f', 'x') ORDER BY 1, 2`.execute(db);
  // Unique indexes of their own (a constraint's index is its constraint's).
  const { rows: indexes } = await sql<{ table: string; name: string; columns: string }>`
    SELECT t.relname AS table, ic.relname AS name,
           (SELECT string_agg(coalesce(a.attname, '(expression)'), ',' ORDER BY k.ord)
              FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
              LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum) AS columns
      FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_class ic ON ic.oid = i.indexrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = 'public' AND i.indisunique
       AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid)
     ORDER BY 1, 2`.execute(db);
  const kinds = { p: 'primary key', u: 'unique', f: 'foreign key', x: 'exclusion' } as const;
  const keys: Key[] = [
    ...constraints.map((c) => ({
      table: c.table,
      name: c.name,
      kind: kinds[c.type as keyof typeof kinds],
      columns: list(c.columns),
      references: c.references,
      referencedColumns: list(c.referenced),
    })),
    ...indexes.map((i) => ({
      table: i.table,
      name: i.name,
      kind: 'unique index' as const,
      columns: list(i.columns),
      references: null,
      referencedColumns: [],
    })),
  ];

  const found: string[] = [];
  const tenantTables = new Set(tables.filter((t) => t.tenant).map((t) => t.table));
  for (const table of tables.filter((t) => !t.tenant)) {
    if (!(table.table in referenceTables)) {
      found.push(`${table.table}: no tenant_id, and not a declared reference table`);
    }
  }
  for (const name of Object.keys(referenceTables)) {
    if (!tables.some((t) => t.table === name && !t.tenant))
      found.push(`${name}: declared a reference table, but is none`);
  }
  for (const key of keys.filter((k) => tenantTables.has(k.table))) {
    if (key.kind === 'foreign key' && key.references !== null && !tenantTables.has(key.references)) continue;
    const leads = key.columns[0] === 'tenant_id';
    const referencedLeads = key.kind !== 'foreign key' || key.referencedColumns[0] === 'tenant_id';
    const declared = key.name in globalUniqueKeys;
    if ((!leads || !referencedLeads) && !declared) {
      found.push(
        `${key.table}.${key.name}: ${key.kind} (${key.columns.join(', ')}) does not lead with tenant_id`,
      );
    }
    if (leads && referencedLeads && declared)
      found.push(`${key.name}: declared global, but leads with tenant_id`);
  }
  for (const name of Object.keys(globalUniqueKeys)) {
    if (!keys.some((k) => k.name === name)) found.push(`${name}: declared global, but no such key`);
  }
  return found;
}

describe('the schema, ready to be distributed by tenant', () => {
  it('leads every key of a tenant’s table with tenant_id, but for the declared global keys and reference tables', async () => {
    expect(await problems(handle.owner)).toEqual([]);
  });

  it('keeps the tenant wall to tenant_id against app.tenant_id, nothing else', async () => {
    const { rows: policies } = await sql<{
      table: string;
      policy: string;
      using: string | null;
      check: string | null;
    }>`
      SELECT c.relname AS table, p.polname AS policy,
             pg_get_expr(p.polqual, p.polrelid) AS using, pg_get_expr(p.polwithcheck, p.polrelid) AS check
        FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid ORDER BY 1, 2`.execute(handle.owner);
    expect(policies.length).toBeGreaterThanOrEqual(20);
    for (const policy of policies) {
      const column = policy.table === 'tenants' ? 'id' : 'tenant_id';
      const wall = `(${column} = ( SELECT app_current_tenant() AS app_current_tenant))`;
      expect(policy, policy.table).toEqual({
        table: policy.table,
        policy: 'tenant_wall',
        using: wall,
        check: wall,
      });
    }
    const { rows: reader } = await sql<{ body: string }>`
      SELECT prosrc AS body FROM pg_proc WHERE proname = 'app_current_tenant'`.execute(handle.owner);
    expect(reader.map((r) => r.body.trim())).toEqual([
      "SELECT nullif(current_setting('app.tenant_id', true), '')::uuid",
    ]);
  });

  it('runs as the owner only the declared functions, naming those that cross tenants', async () => {
    const { rows } = await sql<{ name: string }>`
      SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'public' AND p.prosecdef ORDER BY 1`.execute(handle.owner);
    expect(rows.map((r) => r.name)).toEqual(Object.keys(ownerFunctions).sort());
    expect(
      Object.entries(ownerFunctions)
        .filter(([, f]) => f.acrossTenants)
        .map(([name]) => name),
    ).toEqual([
      'calendar_token_owner',
      'claim_jobs',
      'due_shift_reminders',
      'form_tenant',
      'prune_jobs',
      'prune_webhook_records',
    ]);
  });

  it('fails for a migration that breaks a rule: a table keyed without tenant_id, a key across tenants', async () => {
    const seen = await handle.owner
      .transaction()
      .execute(async (trx) => {
        for (const statement of [
          `CREATE TABLE citus_probe (
             tenant_id uuid NOT NULL REFERENCES tenants (id),
             id uuid PRIMARY KEY,
             code text NOT NULL UNIQUE,
             role_id uuid NOT NULL,
             FOREIGN KEY (role_id, tenant_id) REFERENCES roles (id, tenant_id)
           )`,
          'CREATE UNIQUE INDEX citus_probe_lower_code ON citus_probe (lower(code))',
          'CREATE TABLE citus_global (id uuid PRIMARY KEY)',
          'CREATE FUNCTION citus_peek() RETURNS bigint LANGUAGE sql SECURITY DEFINER AS $$ SELECT count(*) FROM roles $$',
        ]) {
          await sql.raw(statement).execute(trx);
        }
        const found = await problems(trx);
        const { rows } = await sql<{ name: string }>`
          SELECT proname AS name FROM pg_proc WHERE prosecdef AND proname = 'citus_peek'`.execute(trx);
        throw Object.assign(new Error('rolled back'), { found, definers: rows.map((r) => r.name) });
      })
      .catch((error: { found?: string[]; definers?: string[] }) => error);
    expect(seen.found).toEqual([
      'citus_global: no tenant_id, and not a declared reference table',
      'citus_probe.citus_probe_code_key: unique (code) does not lead with tenant_id',
      'citus_probe.citus_probe_pkey: primary key (id) does not lead with tenant_id',
      'citus_probe.citus_probe_role_id_tenant_id_fkey: foreign key (role_id, tenant_id) does not lead with tenant_id',
      'citus_probe.citus_probe_lower_code: unique index ((expression)) does not lead with tenant_id',
    ]);
    // A new owner's function is not among the declared ones: the test above names it.
    expect(seen.definers).toEqual(['citus_peek']);
    const { rows } = await sql`SELECT FROM pg_class WHERE relname IN ('citus_probe', 'citus_global')`.execute(
      handle.owner,
    );
    expect(rows).toEqual([]);
  });
});
