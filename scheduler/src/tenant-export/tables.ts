import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * The tables of a tenant's archive, read from the catalogue rather than listed by hand: every
 * table of `public` with a `tenant_id` column, and `tenants` itself (its `id` is the tenant).
 * A table added by a later migration is in the archive from then on, unless it is named in
 * `EXCLUDED_TABLES` with the reason it is left out (test/tenant-export/tables.test.ts fails
 * for a tenant table that is neither).
 */

/** Tenant tables left out of the archive, each with why: work in flight and counters, not data. */
export const EXCLUDED_TABLES: Readonly<Record<string, string>> = {
  jobs: 'the job queue: work in flight of this deployment (pushes, webhook deliveries), not data; a moved tenant must not re-send',
  webhook_deliveries:
    'delivery attempts of webhook events (a queue pruned after 30 days); a moved tenant must not re-send them',
  webhook_batches: 'the bodies of webhook deliveries in flight (pruned with them)',
  webhook_batch_bodies: 'the bodies of webhook deliveries in flight (pruned with them)',
  webhook_fanouts: 'webhook deliveries in flight (pruned with them)',
  rate_limit_buckets:
    "the API's rate-limit buckets: counters of the last seconds of this deployment, refilled on their own",
};

export interface ArchiveTable {
  name: string;
  /** The column holding the tenant: `tenant_id`, or `id` for `tenants`. */
  tenantColumn: string;
  /** The columns written to the archive and read back, in catalogue order (generated ones left out). */
  columns: string[];
  /** The primary key's columns, in key order: the archive is read in keyset pages by it. */
  key: string[];
  /** Identity columns (`GENERATED ALWAYS AS IDENTITY`): imported as they were, the sequence moved past them. */
  identity: string[];
  /** Generated columns (computed by the database): neither archived nor written. */
  generated: string[];
}

export interface ForeignKey {
  table: string;
  columns: string[];
  parent: string;
  parentColumns: string[];
  name: string;
}

export interface TenantCatalogue {
  /** Archived tables, parents before children (each table after every table it references). */
  tables: ArchiveTable[];
  /** Tenant tables left out (those of EXCLUDED_TABLES that exist). */
  excluded: string[];
  /** Tenant tables that are neither archived nor excluded with a reason: must be empty. */
  unaccounted: string[];
  /** The foreign keys between archived tables (the import checks them). */
  foreignKeys: ForeignKey[];
}

interface ColumnRow {
  table: string;
  column: string;
  generated: boolean;
  identity: boolean;
  key_position: number | null;
}

interface ForeignKeyRow {
  name: string;
  table: string;
  parent: string;
  columns: string[];
  parent_columns: string[];
}

/** Reads the tenant tables and their keys from the catalogue of `db`. */
export async function tenantCatalogue(db: Db): Promise<TenantCatalogue> {
  const columns = await sql<ColumnRow>`
    SELECT c.relname AS "table", a.attname AS "column",
           a.attgenerated <> '' AS generated, a.attidentity <> '' AS identity,
           array_position(pk.conkey, a.attnum) AS key_position
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_constraint pk ON pk.conrelid = c.oid AND pk.contype = 'p'
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
       AND (c.relname = 'tenants' OR EXISTS (
             SELECT FROM pg_attribute t WHERE t.attrelid = c.oid AND t.attname = 'tenant_id' AND NOT t.attisdropped))
     ORDER BY c.relname, a.attnum`.execute(db);
  const foreignKeys = await sql<ForeignKeyRow>`
    SELECT k.conname AS name, c.relname AS "table", p.relname AS parent,
           array(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
                   JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i) AS columns,
           array(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
                   JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i) AS parent_columns
      FROM pg_constraint k
      JOIN pg_class c ON c.oid = k.conrelid
      JOIN pg_class p ON p.oid = k.confrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE k.contype = 'f' AND n.nspname = 'public'
     ORDER BY k.conname`.execute(db);

  const byName = new Map<string, ArchiveTable>();
  for (const row of columns.rows) {
    let table = byName.get(row.table);
    if (!table) {
      table = {
        name: row.table,
        tenantColumn: row.table === 'tenants' ? 'id' : 'tenant_id',
        columns: [],
        key: [],
        identity: [],
        generated: [],
      };
      byName.set(row.table, table);
    }
    if (!row.generated || row.identity) table.columns.push(row.column);
    if (row.identity) table.identity.push(row.column);
    else if (row.generated) table.generated.push(row.column);
    if (row.key_position !== null) table.key[row.key_position - 1] = row.column;
  }
  const excluded = [...byName.keys()].filter((name) => name in EXCLUDED_TABLES).sort();
  const unaccounted = [...byName.values()]
    .filter((table) => !(table.name in EXCLUDED_TABLES) && table.key.length === 0)
    .map((table) => table.name);
  const archived = [...byName.values()].filter(
    (table) => !(table.name in EXCLUDED_TABLES) && table.key.length > 0,
  );
  const archivedNames = new Set(archived.map((table) => table.name));
  const keys = foreignKeys.rows
    .filter((fk) => archivedNames.has(fk.table) && archivedNames.has(fk.parent))
    .map((fk) => ({
      name: fk.name,
      table: fk.table,
      parent: fk.parent,
      columns: fk.columns,
      parentColumns: fk.parent_columns,
    }));
  return { tables: parentsFirst(archived, keys), excluded, unaccounted, foreignKeys: keys };
}

/** Tables ordered so each comes after the tables it references (by name among equals). */
function parentsFirst(tables: ArchiveTable[], keys: ForeignKey[]): ArchiveTable[] {
  const placed = new Set<string>();
  const ordered: ArchiveTable[] = [];
  let rest = [...tables].sort((a, b) => a.name.localeCompare(b.name));
  while (rest.length > 0) {
    const ready = rest.filter((table) =>
      keys.every((fk) => fk.table !== table.name || fk.parent === table.name || placed.has(fk.parent)),
    );
    if (ready.length === 0) {
      throw new Error(`foreign keys form a cycle among ${rest.map((table) => table.name).join(', ')}`);
    }
    for (const table of ready) {
      placed.add(table.name);
      ordered.push(table);
    }
    rest = rest.filter((table) => !placed.has(table.name));
  }
  return ordered;
}
