import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type RawBuilder, sql } from 'kysely';
import { type Db, openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';

/**
 * `npm run -s schema:reference -w scheduler`: writes docs/scheduler/schema.md, the
 * database as it stands after every migration, read from the catalogue (pg_catalog) of a
 * fresh embedded database taken through them, never from the migrations' text. With
 * `--check` it writes nothing and exits 1 when the committed file differs (the test
 * test/cli/schema-reference.test.ts does the same on both engines).
 *
 * The output is deterministic: every list is ordered by name (bytewise, as PostgreSQL
 * orders trigger names), and nothing that differs between installations or engines is
 * written (OIDs, times, versions, the owner's name, role memberships).
 */

export const regenerateCommand = 'npm run -s schema:reference -w scheduler';

/** The committed reference. */
export const referenceFile = path.resolve(import.meta.dirname, '../../../docs/scheduler/schema.md');

/** A timing and level of triggers: PostgreSQL fires those sharing an event in name order. */
export type TriggerGroup =
  | 'BEFORE ROW'
  | 'AFTER ROW'
  | 'INSTEAD OF ROW'
  | 'BEFORE STATEMENT'
  | 'AFTER STATEMENT';

/** What the order of a group of triggers that share an event decides. */
export interface SharedEvents {
  /** One line: what the order decides here, or why it decides nothing. */
  note: string;
  /** Where the order decides something: why each trigger fires where it does, in firing order. */
  steps?: Record<string, string>;
}

/**
 * Every group of triggers that share a timing, a level and an event, by table: the
 * reference shows these lines beside the triggers. test/db/trigger-order.test.ts holds
 * the order itself and checks that this map names exactly the triggers of those groups.
 * A trigger joining a group takes a step number (migration 0025) and a line here.
 */
export const triggerOrder: Record<string, Partial<Record<TriggerGroup, SharedEvents>>> = {
  payouts: {
    'AFTER ROW': {
      note: 'Their order decides nothing: each sees the row as stored, the ledger and balance rows are not audited, and a payout the ledger refuses (beyond the balance) takes its audit row with it either way',
    },
  },
  shift_assignments: {
    'BEFORE ROW': {
      note: 'Each may refuse the row, and the first that does names the refusal the client gets',
      steps: {
        shift_assignments_10_time_off:
          'First: it takes the user’s row `FOR SHARE` itself before it reads approved time off, and someone away and deactivated is refused as away (`shift_assignments_time_off`)',
        shift_assignments_20_user_active:
          'Second: a deactivated user is refused as such (`shift_assignments_user_active`) before the qualification is looked at',
        shift_assignments_30_user_qualified:
          'Last (moves only): lacking the slot’s role (`shift_assignments_user_qualified`) is the answer for an active user who is not away',
      },
    },
    'AFTER ROW': {
      note: 'Their order decides nothing: each sees the row as stored, and none writes what another reads or records (the count changes only `filled_count`, which the slot’s audit ignores)',
    },
  },
  time_entries: {
    'AFTER ROW': {
      note: 'Their order decides nothing: each sees the row as stored, and the ledger and balance rows are not audited',
    },
  },
  time_off: {
    'BEFORE ROW': {
      note: 'Both may refuse the row, each locking the user’s row `FOR NO KEY UPDATE` before it reads; the first that refuses names the refusal',
      steps: {
        time_off_10_open_per_user:
          'First: time off over the cap of open ones is refused as such (`time_off_open_per_user`), whatever it overlaps',
        time_off_20_overlaps_assignments:
          'Second: approved time off overlapping the user’s assignments (`time_off_overlaps_assignments`) is refused only under the cap',
      },
    },
  },
};

/** Kysely's own bookkeeping, not the application's schema. */
const bookkeeping = ['kysely_migration', 'kysely_migration_lock'];

interface TableRow {
  name: string;
  rls: boolean;
  forced: boolean;
}
interface ColumnRow {
  table: string;
  name: string;
  type: string;
  not_null: boolean;
  default_value: string | null;
  identity: string;
  generated: string;
  collation: string | null;
}
interface ConstraintRow {
  table: string;
  name: string;
  kind: string;
  definition: string;
}
interface IndexRow {
  table: string;
  name: string;
  definition: string;
  backs: string | null;
}
interface TriggerRow {
  table: string;
  name: string;
  type: number;
  enabled: string;
  columns: string | null;
  definition: string;
  function_name: string;
  constraint_trigger: boolean;
  deferrable: boolean;
  deferred: boolean;
}
interface PolicyRow {
  table: string;
  name: string;
  permissive: string;
  roles: string;
  command: string;
  using_expr: string | null;
  check_expr: string | null;
}
interface FunctionRow {
  name: string;
  arguments: string;
  definition: string;
}
interface GrantRow {
  kind: string;
  name: string;
  grantee: string;
  privilege: string;
  grantable: boolean;
}
interface RoleRow {
  name: string;
  superuser: boolean;
  inherit: boolean;
  create_role: boolean;
  create_db: boolean;
  login: boolean;
  replication: boolean;
  bypass_rls: boolean;
}
interface OtherRow {
  kind: string;
  name: string;
  definition: string | null;
}

/** What the catalogue says, as plain rows in a stable order. */
export interface Catalogue {
  migrations: string[];
  extensions: { name: string; schema: string }[];
  tables: TableRow[];
  columns: ColumnRow[];
  constraints: ConstraintRow[];
  indexes: IndexRow[];
  triggers: TriggerRow[];
  policies: PolicyRow[];
  functions: FunctionRow[];
  grants: GrantRow[];
  roles: RoleRow[];
  others: OtherRow[];
}

const bookkeepingList = bookkeeping.map((name) => `'${name}'`).join(', ');

/** The schema's tables (not Kysely's bookkeeping) as a condition on `c`, a pg_class row. */
const appTable = sql.raw(
  `c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND c.relname NOT IN (${bookkeepingList})`,
);

/** Objects an extension created (btree_gist's functions and types live in public too). */
const notFromExtension = (catalog: string, oid: string) =>
  sql.raw(`NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = '${catalog}'::regclass
             AND d.objid = ${oid} AND d.deptype = 'e')`);

/** Reads the schema `public` from the catalogue of the database `db` (the owner's view). */
export async function readCatalogue(db: Db): Promise<Catalogue> {
  const rows = async <T>(query: RawBuilder<T>) => (await query.execute(db)).rows;
  const migrations = await rows<{ name: string }>(
    sql`SELECT name FROM kysely_migration ORDER BY name COLLATE "C"`,
  );
  const extensions = await rows<{ name: string; schema: string }>(sql`
    SELECT e.extname AS name, e.extnamespace::regnamespace::text AS schema FROM pg_extension e
     WHERE e.extname <> 'plpgsql' ORDER BY e.extname COLLATE "C"`);
  const tables = await rows<TableRow>(sql`
    SELECT c.relname AS name, c.relrowsecurity AS rls, c.relforcerowsecurity AS forced
      FROM pg_class c WHERE ${appTable} ORDER BY c.relname COLLATE "C"`);
  const columns = await rows<ColumnRow>(sql`
    SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
           a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default_value,
           a.attidentity::text AS identity, a.attgenerated::text AS generated,
           CASE WHEN a.attcollation <> t.typcollation THEN co.collname::text END AS collation
      FROM pg_class c
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      JOIN pg_type t ON t.oid = a.atttypid
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      LEFT JOIN pg_collation co ON co.oid = a.attcollation
     WHERE ${appTable}
     ORDER BY c.relname COLLATE "C", a.attnum`);
  // Not-null constraints (rows of their own on PostgreSQL 18, the embedded engine) are the
  // columns' Nullable; the other kinds are the same on every version.
  const constraints = await rows<ConstraintRow>(sql`
    SELECT c.relname AS table, k.conname AS name, k.contype::text AS kind,
           pg_get_constraintdef(k.oid) AS definition
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     WHERE ${appTable} AND k.contype IN ('p', 'u', 'x', 'c', 'f')
     ORDER BY c.relname COLLATE "C", position(k.contype::text IN 'puxcf'), k.conname COLLATE "C"`);
  const indexes = await rows<IndexRow>(sql`
    SELECT c.relname AS table, i.relname AS name, pg_get_indexdef(x.indexrelid) AS definition,
           (SELECT k.conname FROM pg_constraint k
             WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid AND k.contype IN ('p', 'u', 'x')) AS backs
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
     WHERE ${appTable}
     ORDER BY c.relname COLLATE "C", i.relname COLLATE "C"`);
  // The foreign keys' own triggers are internal (and named by OID): left out.
  const triggers = await rows<TriggerRow>(sql`
    SELECT c.relname AS table, t.tgname AS name, t.tgtype::integer AS type, t.tgenabled::text AS enabled,
           (SELECT string_agg(a.attname, ', ' ORDER BY k.n)
              FROM unnest(t.tgattr::int2[]) WITH ORDINALITY AS k(attnum, n)
              JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = k.attnum) AS columns,
           pg_get_triggerdef(t.oid) AS definition, p.proname AS function_name,
           t.tgconstraint <> 0 AS constraint_trigger, t.tgdeferrable AS deferrable, t.tginitdeferred AS deferred
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
     WHERE ${appTable} AND NOT t.tgisinternal
     ORDER BY c.relname COLLATE "C", t.tgname COLLATE "C"`);
  const policies = await rows<PolicyRow>(sql`
    SELECT p.tablename AS table, p.policyname AS name, p.permissive, array_to_string(p.roles, ', ') AS roles,
           p.cmd AS command, p.qual AS using_expr, p.with_check AS check_expr
      FROM pg_policies p WHERE p.schemaname = 'public'
     ORDER BY p.tablename COLLATE "C", p.policyname COLLATE "C"`);
  const functions = await rows<FunctionRow>(sql`
    SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS arguments,
           pg_get_functiondef(p.oid) AS definition
      FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p') AND ${notFromExtension('pg_proc', 'p.oid')}
     ORDER BY p.proname COLLATE "C", pg_get_function_identity_arguments(p.oid) COLLATE "C"`);
  // Who may do what, beside the owner (who may do everything, and whose name is the
  // installation's): an object without an ACL of its own has the default one.
  const objects = sql`
    SELECT 'schema' AS kind, n.nspname::text AS name, n.nspowner AS owner,
           coalesce(n.nspacl, acldefault('n', n.nspowner)) AS acl
      FROM pg_namespace n WHERE n.nspname = 'public'
    UNION ALL
    SELECT CASE c.relkind WHEN 'S' THEN 'sequence' WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' ELSE 'view' END,
           c.relname::text, c.relowner,
           coalesce(c.relacl, acldefault((CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END)::"char", c.relowner))
      FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'S', 'v', 'm')
       AND c.relname NOT IN (${sql.raw(bookkeepingList)})
    UNION ALL
    SELECT 'function', p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', p.proowner,
           coalesce(p.proacl, acldefault('f', p.proowner))
      FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND ${notFromExtension('pg_proc', 'p.oid')}`;
  const grants = await rows<GrantRow>(sql`
    WITH objects AS (${objects})
    SELECT * FROM (
      SELECT o.kind, o.name, CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(g.grantee)::text END AS grantee,
             g.privilege_type AS privilege, g.is_grantable AS grantable
        FROM objects o CROSS JOIN LATERAL aclexplode(o.acl) g
       WHERE g.grantee <> o.owner) AS granted
     ORDER BY position(kind IN 'schema table sequence view function'), name COLLATE "C",
              grantee COLLATE "C", privilege COLLATE "C"`);
  // The roles the schema names: granted something, or named by a policy.
  const roles = await rows<RoleRow>(sql`
    WITH objects AS (${objects})
    SELECT r.rolname AS name, r.rolsuper AS superuser, r.rolinherit AS inherit, r.rolcreaterole AS create_role,
           r.rolcreatedb AS create_db, r.rolcanlogin AS login, r.rolreplication AS replication,
           r.rolbypassrls AS bypass_rls
      FROM pg_roles r
     WHERE EXISTS (SELECT FROM objects o CROSS JOIN LATERAL aclexplode(o.acl) g
                    WHERE g.grantee = r.oid AND g.grantee <> o.owner)
        OR EXISTS (SELECT FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
                    WHERE ${appTable} AND r.oid = ANY (p.polroles))
     ORDER BY r.rolname COLLATE "C"`);
  // Whatever else a migration may create in public, so that nothing goes unmentioned.
  const others = await rows<OtherRow>(sql`
    SELECT * FROM (
    SELECT CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table'
                WHEN 'S' THEN 'sequence' ELSE 'relation of kind ' || c.relkind::text END AS kind,
           c.relname::text AS name,
           CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END AS definition
      FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind NOT IN ('r', 'p', 'i', 'I', 'c', 't')
       AND ${notFromExtension('pg_class', 'c.oid')}
       -- A sequence of an identity or serial column is the column's default.
       AND NOT (c.relkind = 'S' AND EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                                              AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
    UNION ALL
    SELECT CASE t.typtype WHEN 'e' THEN 'enum' WHEN 'd' THEN 'domain' WHEN 'c' THEN 'composite type'
                WHEN 'r' THEN 'range type' ELSE 'type' END,
           t.typname::text,
           CASE t.typtype
             WHEN 'e' THEN (SELECT string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder)
                              FROM pg_enum e WHERE e.enumtypid = t.oid)
             WHEN 'd' THEN format_type(t.typbasetype, t.typtypmod) || coalesce(' ' ||
               (SELECT string_agg(pg_get_constraintdef(k.oid), ' ' ORDER BY k.conname COLLATE "C")
                  FROM pg_constraint k WHERE k.contypid = t.oid), '')
           END
      FROM pg_type t
     WHERE t.typnamespace = 'public'::regnamespace AND t.typcategory <> 'A'
       AND (t.typrelid = 0 OR EXISTS (SELECT FROM pg_class r WHERE r.oid = t.typrelid AND r.relkind = 'c'))
       AND ${notFromExtension('pg_type', 't.oid')}
    ) AS other ORDER BY name COLLATE "C", kind COLLATE "C"`);
  return {
    migrations: migrations.map((m) => m.name),
    extensions,
    tables,
    columns,
    constraints,
    indexes,
    triggers,
    policies,
    functions,
    grants,
    roles,
    others,
  };
}

/** The timing, level and events of a trigger, from pg_trigger.tgtype. */
export function triggerKind(type: number): { group: TriggerGroup; events: string[] } {
  const row = (type & 1) !== 0;
  const timing = (type & 64) !== 0 ? 'INSTEAD OF' : (type & 2) !== 0 ? 'BEFORE' : 'AFTER';
  const events = [
    [4, 'INSERT'],
    [16, 'UPDATE'],
    [8, 'DELETE'],
    [32, 'TRUNCATE'],
  ].flatMap(([bit, name]) => ((type & (bit as number)) !== 0 ? [name as string] : []));
  return { group: `${timing} ${row ? 'ROW' : 'STATEMENT'}` as TriggerGroup, events };
}

/**
 * The triggers of one table in the order PostgreSQL fires them, by group; `shared` tells
 * whether two of a group fire on one event (only then does their order decide anything).
 */
export function firingOrder(
  triggers: { name: string; type: number }[],
): { group: TriggerGroup; names: string[]; shared: boolean }[] {
  const groups = new Map<TriggerGroup, { names: string[]; events: string[][] }>();
  for (const trigger of [...triggers].sort((a, b) => compareBytes(a.name, b.name))) {
    const { group, events } = triggerKind(trigger.type);
    const entry = groups.get(group) ?? { names: [], events: [] };
    entry.names.push(trigger.name);
    entry.events.push(events);
    groups.set(group, entry);
  }
  const order: TriggerGroup[] = [
    'BEFORE STATEMENT',
    'BEFORE ROW',
    'INSTEAD OF ROW',
    'AFTER ROW',
    'AFTER STATEMENT',
  ];
  return order.flatMap((group) => {
    const entry = groups.get(group);
    if (!entry) return [];
    const all = entry.events.flat();
    return [{ group, names: entry.names, shared: new Set(all).size < all.length }];
  });
}

/** Byte order of UTF-8 strings, as PostgreSQL compares names. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** A code span for a table cell: pipes escaped, line breaks folded. */
function cell(text: string): string {
  const folded = text.replace(/\s*\n\s*/g, ' ').replaceAll('|', '\\|');
  const ticks = folded.match(/`+/g)?.reduce((longest, run) => Math.max(longest, run.length), 0) ?? 0;
  const fence = '`'.repeat(ticks + 1);
  return ticks === 0 ? `${fence}${folded}${fence}` : `${fence} ${folded} ${fence}`;
}

/** A fenced SQL block, its fence longer than any run of backticks inside. */
function sqlBlock(text: string): string {
  const ticks = text.match(/`+/g)?.reduce((longest, run) => Math.max(longest, run.length), 0) ?? 0;
  const fence = '`'.repeat(Math.max(3, ticks + 1));
  return `${fence}sql\n${text.replace(/\n+$/, '')}\n${fence}`;
}

function table(head: string[], body: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`.replace(/ {2,}\|/g, ' |');
  return [line(head), `|${head.map(() => '---').join('|')}|`, ...body.map(line)].join('\n');
}

const constraintKinds: Record<string, string> = {
  p: 'primary key',
  u: 'unique',
  x: 'exclusion',
  c: 'check',
  f: 'foreign key',
};

const groupTitles: Record<TriggerGroup, string> = {
  'BEFORE STATEMENT': 'BEFORE, for each statement',
  'BEFORE ROW': 'BEFORE, for each row',
  'INSTEAD OF ROW': 'INSTEAD OF, for each row',
  'AFTER ROW': 'AFTER, for each row',
  'AFTER STATEMENT': 'AFTER, for each statement',
};

function columnDefault(column: ColumnRow): string {
  if (column.identity === 'a') return cell('GENERATED ALWAYS AS IDENTITY');
  if (column.identity === 'd') return cell('GENERATED BY DEFAULT AS IDENTITY');
  if (column.generated === 's') return cell(`GENERATED ALWAYS AS ${column.default_value} STORED`);
  if (column.generated === 'v') return cell(`GENERATED ALWAYS AS ${column.default_value} VIRTUAL`);
  return column.default_value === null ? '' : cell(column.default_value);
}

function triggerEvents(trigger: TriggerRow): string {
  const { events } = triggerKind(trigger.type);
  const named = events.map((event) =>
    event === 'UPDATE' && trigger.columns ? `UPDATE OF ${trigger.columns}` : event,
  );
  const notes = [
    ...(trigger.constraint_trigger
      ? [
          `constraint trigger${trigger.deferrable ? `, deferrable${trigger.deferred ? ' initially deferred' : ''}` : ''}`,
        ]
      : []),
    ...(trigger.enabled === 'D' ? ['disabled'] : []),
    ...(trigger.enabled === 'R' ? ['fires on replicas only'] : []),
    ...(trigger.enabled === 'A' ? ['fires always, replicas included'] : []),
  ];
  return `${named.join(', ')}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

/** The WHEN condition and the call, as pg_get_triggerdef writes them. */
function triggerParts(definition: string): { when: string; call: string } {
  const call = /\sEXECUTE (?:FUNCTION|PROCEDURE) (.*)$/s.exec(definition)?.[1] ?? definition;
  const when = /\sWHEN \((.*)\) EXECUTE (?:FUNCTION|PROCEDURE) /s.exec(definition)?.[1] ?? '';
  return { when, call };
}

function renderTriggers(name: string, triggers: TriggerRow[]): string[] {
  if (triggers.length === 0) return [];
  const byName = new Map(triggers.map((t) => [t.name, t]));
  const out = ['Triggers, in the order they fire (within a timing and level, by name):'];
  for (const { group, names, shared } of firingOrder(triggers)) {
    const explained = triggerOrder[name]?.[group];
    const lead = shared
      ? `${groupTitles[group]}: these share events and fire in this order. ${
          explained?.note ??
          'What their order decides is not written down yet (`triggerOrder` in scheduler/src/cli/schema-reference.ts)'
        }.`
      : `${groupTitles[group]}${names.length > 1 ? ': no two share an event, so their order decides nothing' : ''}.`;
    const withWhy = shared && explained?.steps !== undefined;
    const head = ['#', 'Trigger', 'On', 'When', 'Calls', ...(withWhy ? ['Why here'] : [])];
    const body = names.map((triggerName, index) => {
      const trigger = byName.get(triggerName) as TriggerRow;
      const { when, call } = triggerParts(trigger.definition);
      return [
        String(index + 1),
        cell(trigger.name),
        triggerEvents(trigger),
        when === '' ? '' : cell(when),
        cell(call),
        ...(withWhy ? [explained?.steps?.[triggerName] ?? ''] : []),
      ];
    });
    out.push(lead, table(head, body));
  }
  return out;
}

function renderTable(catalogue: Catalogue, info: TableRow): string {
  const of = <T extends { table: string }>(list: T[]) => list.filter((row) => row.table === info.name);
  const parts: string[] = [`### ${cell(info.name)}`];
  parts.push(
    table(
      ['Column', 'Type', 'Nullable', 'Default'],
      of(catalogue.columns).map((column) => [
        cell(column.name),
        cell(column.collation ? `${column.type} COLLATE "${column.collation}"` : column.type),
        column.not_null ? 'no' : 'yes',
        columnDefault(column),
      ]),
    ),
  );
  const constraints = of(catalogue.constraints);
  if (constraints.length) {
    parts.push(
      'Constraints:',
      table(
        ['Constraint', 'Kind', 'Definition'],
        constraints.map((k) => [cell(k.name), constraintKinds[k.kind] ?? k.kind, cell(k.definition)]),
      ),
    );
  }
  const indexes = of(catalogue.indexes);
  if (indexes.length) {
    parts.push(
      'Indexes (those of a primary key, unique or exclusion constraint name it):',
      table(
        ['Index', 'Definition', 'Of constraint'],
        indexes.map((i) => [cell(i.name), cell(i.definition), i.backs ? cell(i.backs) : '']),
      ),
    );
  }
  parts.push(...renderTriggers(info.name, of(catalogue.triggers)));
  const policies = of(catalogue.policies);
  const security = info.rls
    ? `Row-level security: enabled, ${info.forced ? 'forced (it holds for the owner too)' : 'not forced (the owner bypasses it)'}.`
    : 'Row-level security: off.';
  parts.push(policies.length ? `${security} Policies:` : security);
  if (policies.length) {
    parts.push(
      table(
        ['Policy', 'For', 'To', 'Kind', 'USING', 'WITH CHECK'],
        policies.map((p) => [
          cell(p.name),
          p.command,
          p.roles,
          p.permissive.toLowerCase(),
          p.using_expr === null ? '' : cell(p.using_expr),
          p.check_expr === null ? '' : cell(p.check_expr),
        ]),
      ),
    );
  }
  return parts.join('\n\n');
}

/** Who calls a function: the triggers that execute it. */
function callers(catalogue: Catalogue, fn: FunctionRow): string {
  if (fn.arguments !== '') return '';
  const by = catalogue.triggers
    .filter((t) => t.function_name === fn.name)
    .map((t) => `${cell(t.name)} on ${cell(t.table)}`);
  if (by.length === 0) return '';
  return `Called by the trigger${by.length > 1 ? 's' : ''} ${by.join(', ')}.`;
}

const privilegeOrder = [
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'TRUNCATE',
  'REFERENCES',
  'TRIGGER',
  'MAINTAIN',
  'USAGE',
  'CREATE',
  'EXECUTE',
];

function renderAccess(catalogue: Catalogue): string[] {
  const out: string[] = ['## Roles and grants'];
  out.push(
    'The owner of the schema’s objects (the login that ran the migrations, whose name belongs to the installation) may do everything and is not listed. Role memberships are not listed either: which logins hold a role is the installation’s choice.',
  );
  if (catalogue.roles.length) {
    const flag = (on: boolean, yes: string, no: string) => (on ? yes : no);
    out.push(
      'Roles the schema names:',
      table(
        ['Role', 'Attributes'],
        catalogue.roles.map((r) => [
          cell(r.name),
          [
            flag(r.login, 'LOGIN', 'NOLOGIN'),
            flag(r.superuser, 'SUPERUSER', 'NOSUPERUSER'),
            flag(r.inherit, 'INHERIT', 'NOINHERIT'),
            flag(r.create_db, 'CREATEDB', 'NOCREATEDB'),
            flag(r.create_role, 'CREATEROLE', 'NOCREATEROLE'),
            flag(r.replication, 'REPLICATION', 'NOREPLICATION'),
            flag(r.bypass_rls, 'BYPASSRLS', 'NOBYPASSRLS'),
          ].join(' '),
        ]),
      ),
    );
  }
  const merged = new Map<string, { kind: string; name: string; grantee: string; privileges: string[] }>();
  for (const g of catalogue.grants) {
    const key = `${g.kind}\u0000${g.name}\u0000${g.grantee}`;
    const entry = merged.get(key) ?? { kind: g.kind, name: g.name, grantee: g.grantee, privileges: [] };
    entry.privileges.push(`${g.privilege}${g.grantable ? ' (with grant option)' : ''}`);
    merged.set(key, entry);
  }
  const rank = (privilege: string) => {
    const at = privilegeOrder.indexOf(privilege.split(' ')[0] as string);
    return at === -1 ? privilegeOrder.length : at;
  };
  out.push(
    'Grants (a function nobody revoked keeps PostgreSQL’s default: PUBLIC may execute it):',
    table(
      ['Object', 'Kind', 'Grantee', 'Privileges'],
      [...merged.values()].map((g) => [
        cell(g.name),
        g.kind,
        g.grantee === 'PUBLIC' ? 'PUBLIC' : cell(g.grantee),
        g.privileges.sort((a, b) => rank(a) - rank(b) || compareBytes(a, b)).join(', '),
      ]),
    ),
  );
  return out;
}

/** The reference as Markdown, from what `readCatalogue` read. */
export function renderReference(catalogue: Catalogue): string {
  const last = catalogue.migrations.at(-1) ?? 'none';
  const out: string[] = [
    '# The database as it stands',
    `<!-- Generated by \`${regenerateCommand}\` (scheduler/src/cli/schema-reference.ts); do not edit. -->`,
    [
      `The scheduler’s schema after every migration (${catalogue.migrations.length}, the last`,
      `${cell(last)}), read from the catalogue of a fresh embedded database taken through`,
      'them (`scheduler/src/db/migrations/`). Do not edit this file: change the schema with a new',
      `migration, then run \`${regenerateCommand}\` and commit what it writes.`,
      '`scheduler/test/cli/schema-reference.test.ts` fails while this file is stale, and with',
      '`TEST_DB=postgres` also compares it with what PostgreSQL’s catalogue says after the same',
      'migrations.',
    ].join('\n'),
    [
      'Everything is in the schema `public`. Left out: Kysely’s bookkeeping of the migrations',
      `(${bookkeeping.map((name) => cell(name)).join(', ')}), the internal triggers that check`,
      'foreign keys, and what extensions bring (extension versions follow the server).',
    ].join('\n'),
  ];
  if (catalogue.extensions.length) {
    out.push(
      `Extensions: ${catalogue.extensions.map((e) => `${cell(e.name)} (in ${cell(e.schema)})`).join(', ')}.`,
    );
  }
  out.push(
    '## Tables',
    catalogue.tables.map((t) => `- [${cell(t.name)}](#${t.name})`).join('\n'),
    ...catalogue.tables.map((info) => renderTable(catalogue, info)),
    '## Functions',
    'Every function of the schema with its definition as the database holds it (`pg_get_functiondef`).',
  );
  for (const fn of catalogue.functions) {
    const called = callers(catalogue, fn);
    out.push(
      `### ${cell(`${fn.name}(${fn.arguments})`)}`,
      ...(called ? [called] : []),
      sqlBlock(fn.definition),
    );
  }
  if (catalogue.others.length) {
    out.push('## Other objects');
    for (const other of catalogue.others) {
      const kind = `${/^[aeiou]/.test(other.kind) ? 'An' : 'A'} ${other.kind}`;
      const view = other.kind.endsWith('view');
      out.push(
        `### ${cell(other.name)}`,
        other.definition === null || view ? `${kind}.` : `${kind}: ${cell(other.definition)}.`,
        ...(view && other.definition !== null ? [sqlBlock(other.definition)] : []),
      );
    }
  }
  out.push(...renderAccess(catalogue));
  return `${out.join('\n\n')}\n`;
}

/** The reference for the database `db` (the owner's view of a migrated database). */
export async function schemaReference(db: Db): Promise<string> {
  return renderReference(await readCatalogue(db));
}

/** The reference the command writes: from a fresh in-memory embedded database, migrated. */
export async function migratedReference(): Promise<string> {
  const database = await openDatabase({});
  try {
    await migrateToLatest(database.owner);
    return await schemaReference(database.owner);
  } finally {
    await database.close();
  }
}

const usage = `Usage: ${regenerateCommand} [-- --check]

Writes docs/scheduler/schema.md from the catalogue of a fresh embedded database taken
through every migration. --check writes nothing and exits 1 when the file is stale.`;

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Where the committed text first differs from the generated one, for the message. */
function firstDifference(committed: string, generated: string): string {
  const a = committed.replace(/\n$/, '').split('\n');
  const b = generated.replace(/\n$/, '').split('\n');
  const line = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => i).find((i) => a[i] !== b[i]);
  if (line === undefined) return 'it differs in its final line break';
  const shown = (text: string | undefined) => (text === undefined ? '(end of file)' : JSON.stringify(text));
  return `line ${line + 1}: the file has ${shown(a[line])}, the schema gives ${shown(b[line])}`;
}

export interface RunOptions {
  file?: string;
  /** The reference as it should be (default: from a fresh migrated embedded database). */
  generate?: () => Promise<string>;
  log?: (line: string) => void;
  error?: (line: string) => void;
}

/** The command: 0 written or up to date, 1 stale (--check), 2 bad usage. */
export async function run(args: string[], options: RunOptions = {}): Promise<number> {
  const file = options.file ?? referenceFile;
  const log = options.log ?? ((line: string) => console.log(line));
  const error = options.error ?? ((line: string) => console.error(line));
  let check: boolean;
  try {
    const { values } = parseArgs({
      args,
      options: { check: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    });
    if (values.help) {
      log(usage);
      return 0;
    }
    check = values.check === true;
  } catch (failure) {
    error(`${(failure as Error).message}\n\n${usage}`);
    return 2;
  }
  const generated = await (options.generate ?? migratedReference)();
  const shown = path.relative(process.cwd(), file) || file;
  if (!check) {
    if (readOrNull(file) === generated) {
      log(`${shown} is up to date`);
    } else {
      writeFileSync(file, generated);
      log(`wrote ${shown}`);
    }
    return 0;
  }
  const committed = readOrNull(file);
  if (committed === generated) {
    log(`${shown} is up to date`);
    return 0;
  }
  error(
    committed === null
      ? `${shown} is missing: run \`${regenerateCommand}\` and commit it`
      : `${shown} is stale (${firstDifference(committed, generated)}): run \`${regenerateCommand}\` and commit it`,
  );
  return 1;
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) {
  run(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (failure: unknown) => {
      console.error(`schema:reference: ${failure instanceof Error ? failure.message : String(failure)}`);
      process.exit(1);
    },
  );
}
