import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { sql } from 'kysely';
import { extract } from 'tar-stream';
import type { Db } from '../db/database.ts';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_FORMAT_VERSION,
  MANIFEST_FILE,
  type Manifest,
  type ManifestTable,
  MIGRATION_NAMES,
  SCHEMA_VERSION,
} from './archive.ts';
import { type ArchiveTable, type TenantCatalogue, tenantCatalogue } from './tables.ts';

/** Rows written per statement (one jsonb array parameter, whatever the count). */
export const IMPORT_BATCH_ROWS = 500;

/** Why an archive was not imported; nothing was written. */
export class ImportRefused extends Error {
  override name = 'ImportRefused';
}

export interface ImportResult {
  tenantId: string;
  rows: Record<string, number>;
}

/**
 * Imports a tenant archive (archive.ts) into the database of `owner` (the schema owner's
 * view: row-level security does not apply to it), in one transaction: everything or
 * nothing. The tenant must be empty here (no row of it in any table), the database at this
 * scheduler's schema (migrated, nothing pending) and the archive's schema no newer. Ids are
 * kept.
 *
 * Triggers are off for the transaction (`session_replication_role = replica`): the rows are
 * the results of the triggers that ran when they were first written (the overtime ledger
 * and balances, the audit log, counters of filled seats), so running them again would
 * write those results twice, and the guards that compare a row with the present (an active
 * user, time off, a shift that has ended) would refuse history that was valid when it was
 * made. Check, unique, exclusion and not-null constraints still hold every row. Foreign
 * keys, which PostgreSQL checks with triggers, are checked by this import before it
 * commits, each one from the catalogue, and so is the ledger: every balance is the sum of
 * its ledger rows. Identity sequences move past the imported values.
 */
export async function importTenant(owner: Db, archive: Readable): Promise<ImportResult> {
  const tar = extract();
  const unpacking = pipeline(archive, createGunzip(), tar);
  unpacking.catch(() => undefined);
  const entries = tar[Symbol.asyncIterator]();
  const first = await entries.next();
  if (first.done || first.value.header.name !== MANIFEST_FILE) {
    throw new ImportRefused(`not a tenant archive: ${MANIFEST_FILE} is not its first file`);
  }
  const manifest = checkManifest(await textOf(first.value));
  const tenantId = manifest.tenant_id;
  const counted: Record<string, number> = {};
  await owner.transaction().execute(async (trx) => {
    await checkSchemaVersion(trx, manifest.schema_version);
    await setReplicaRole(trx);
    const catalogue = await tenantCatalogue(trx);
    const tables = matchTables(manifest, catalogue);
    await checkEmpty(trx, catalogue, tenantId);
    for (let next = await entries.next(); !next.done; next = await entries.next()) {
      const entry = next.value;
      const table = tables.get(entry.header.name);
      if (!table) {
        entry.resume();
        continue;
      }
      counted[table.archived.name] = await loadTable(trx, table, tenantId, entry);
    }
    for (const { archived, manifested } of tables.values()) {
      const rows = counted[archived.name] ?? 0;
      if (rows !== manifested.rows) {
        throw new ImportRefused(
          `${manifested.file}: ${rows} rows, the manifest says ${manifested.rows} (a cut or altered archive)`,
        );
      }
    }
    await checkForeignKeys(trx, catalogue, tenantId);
    await checkLedger(trx, tenantId);
    await moveSequences(trx, catalogue);
  });
  await unpacking;
  return { tenantId, rows: counted };
}

async function textOf(stream: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const hex32 = /^[0-9a-f]{32}$/;

function checkManifest(text: string): Manifest {
  let manifest: Partial<Manifest>;
  try {
    manifest = JSON.parse(text) as Partial<Manifest>;
  } catch {
    throw new ImportRefused(`${MANIFEST_FILE} is not JSON`);
  }
  if (manifest.format !== ARCHIVE_FORMAT)
    throw new ImportRefused(`not a tenant archive (format ${manifest.format})`);
  if (manifest.format_version !== ARCHIVE_FORMAT_VERSION) {
    throw new ImportRefused(
      `archive format version ${manifest.format_version}; this scheduler reads version ${ARCHIVE_FORMAT_VERSION}`,
    );
  }
  if (typeof manifest.tenant_id !== 'string' || !hex32.test(manifest.tenant_id)) {
    throw new ImportRefused(`${MANIFEST_FILE}: tenant_id is not an id`);
  }
  if (typeof manifest.schema_version !== 'string' || !Array.isArray(manifest.tables)) {
    throw new ImportRefused(`${MANIFEST_FILE}: schema_version or tables missing`);
  }
  return manifest as Manifest;
}

/** What an operator runs to bring a database to this scheduler's schema. */
export const MIGRATE_COMMAND = 'npm run migrate -w scheduler';

/**
 * The archive's schema must be one this scheduler knows, and the database must be at this
 * scheduler's schema: migrated, nothing pending, nothing newer. An older archive's missing
 * columns then take their defaults. Read before anything else, with the catalogue rather
 * than the migrations' table, so a database that was never migrated is said as such, not
 * as a missing relation.
 */
async function checkSchemaVersion(db: Db, version: string): Promise<void> {
  if (!MIGRATION_NAMES.includes(version)) {
    throw new ImportRefused(
      `the archive's schema (${version}) is newer than this scheduler's (${SCHEMA_VERSION}): upgrade the scheduler, run ${MIGRATE_COMMAND}, then import`,
    );
  }
  const { rows } = await sql<{ migrated: boolean }>`
    SELECT to_regclass('public.kysely_migration') IS NOT NULL AS migrated`.execute(db);
  const applied = rows[0]?.migrated
    ? (await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db)).rows.map(
        (row) => row.name,
      )
    : [];
  if (applied.length === 0) {
    throw new ImportRefused(
      `the database has no scheduler schema (never migrated): run ${MIGRATE_COMMAND} with the same settings first`,
    );
  }
  const unknown = applied.filter((name) => !MIGRATION_NAMES.includes(name));
  if (unknown.length > 0) {
    throw new ImportRefused(
      `the database's schema (${unknown.at(-1)}) is newer than this scheduler's (${SCHEMA_VERSION}): import with the release that migrated it`,
    );
  }
  const pending = MIGRATION_NAMES.filter((name) => !applied.includes(name));
  if (pending.length > 0) {
    throw new ImportRefused(
      `the database's schema is older than this scheduler's (${pending.length} migrations pending, up to ${SCHEMA_VERSION}): run ${MIGRATE_COMMAND} with the same settings first`,
    );
  }
}

async function setReplicaRole(db: Db): Promise<void> {
  try {
    await sql`SET LOCAL session_replication_role = replica`.execute(db);
  } catch (error) {
    throw new ImportRefused(
      `the owner's login may not switch triggers off (${error instanceof Error ? error.message : String(error)}): import as a superuser, or GRANT SET ON PARAMETER session_replication_role TO the owner`,
    );
  }
}

interface TableToLoad {
  archived: ArchiveTable;
  manifested: ManifestTable;
}

/** The archive's tables by file, each a table of this database with the columns the archive names. */
function matchTables(manifest: Manifest, catalogue: TenantCatalogue): Map<string, TableToLoad> {
  const known = new Map(catalogue.tables.map((table) => [table.name, table]));
  const tables = new Map<string, TableToLoad>();
  for (const manifested of manifest.tables) {
    const archived = known.get(manifested.name);
    if (!archived)
      throw new ImportRefused(`the archive holds a table this database has not: ${manifested.name}`);
    const unknown = manifested.columns.filter((column) => !archived.columns.includes(column));
    if (unknown.length > 0) {
      throw new ImportRefused(`${manifested.name}: columns this database has not: ${unknown.join(', ')}`);
    }
    tables.set(manifested.file, { archived, manifested });
  }
  return tables;
}

async function checkEmpty(db: Db, catalogue: TenantCatalogue, tenantId: string): Promise<void> {
  for (const table of catalogue.tables) {
    const { rows } = await sql<{ found: boolean }>`
      SELECT EXISTS (SELECT FROM ${sql.table(table.name)} WHERE ${sql.ref(table.tenantColumn)} = ${tenantId}) AS found`.execute(
      db,
    );
    if (rows[0]?.found) {
      throw new ImportRefused(`tenant ${tenantId} is not empty here (${table.name} holds rows of it)`);
    }
  }
}

/** Writes a table file's rows in batches; each row must be the tenant's. Answers how many. */
async function loadTable(db: Db, table: TableToLoad, tenantId: string, lines: AsyncIterable<unknown>) {
  const { archived, manifested } = table;
  const t = sql.table(archived.name);
  const columns = sql.join(manifested.columns.map((column) => sql.ref(column)));
  const overriding = manifested.columns.some((column) => archived.identity.includes(column))
    ? sql`OVERRIDING SYSTEM VALUE`
    : sql``;
  let loaded = 0;
  const write = async (batch: string[]) => {
    const result = await sql`
      INSERT INTO ${t} (${columns}) ${overriding}
      SELECT ${columns} FROM jsonb_populate_recordset(NULL::${t}, ${`[${batch.join(',')}]`}::jsonb) r
       WHERE ${sql.ref(`r.${archived.tenantColumn}`)} = ${tenantId}::uuid`.execute(db);
    if (Number(result.numAffectedRows ?? 0) !== batch.length) {
      throw new ImportRefused(`${manifested.file}: a row of another tenant than ${tenantId}`);
    }
    loaded += batch.length;
  };
  let batch: string[] = [];
  let rest = '';
  for await (const chunk of lines) {
    const parts = (rest + (chunk as Buffer).toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      if (line === '') continue;
      batch.push(line);
      if (batch.length === IMPORT_BATCH_ROWS) {
        await write(batch);
        batch = [];
      }
    }
  }
  if (rest !== '') batch.push(rest);
  if (batch.length > 0) await write(batch);
  return loaded;
}

/** Every foreign key between the tenant's tables holds for its rows (the triggers that check them were off). */
async function checkForeignKeys(db: Db, catalogue: TenantCatalogue, tenantId: string): Promise<void> {
  const tenantColumn = new Map(catalogue.tables.map((table) => [table.name, table.tenantColumn]));
  for (const fk of catalogue.foreignKeys) {
    const matches = sql.join(
      fk.columns.map((column, i) => sql`${sql.ref(`p.${fk.parentColumns[i]}`)} = ${sql.ref(`c.${column}`)}`),
      sql` AND `,
    );
    const set = sql.join(
      fk.columns.map((column) => sql`${sql.ref(`c.${column}`)} IS NOT NULL`),
      sql` AND `,
    );
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ${sql.table(fk.table)} c
       WHERE ${sql.ref(`c.${tenantColumn.get(fk.table) ?? 'tenant_id'}`)} = ${tenantId} AND ${set}
         AND NOT EXISTS (SELECT FROM ${sql.table(fk.parent)} p WHERE ${matches})`.execute(db);
    const broken = rows[0]?.n ?? 0;
    if (broken > 0) {
      throw new ImportRefused(
        `${fk.table}: ${broken} rows refer to ${fk.parent} rows the archive lacks (${fk.name})`,
      );
    }
  }
}

/** Each balance is the sum of its ledger rows, as the ledger's triggers keep it. */
async function checkLedger(db: Db, tenantId: string): Promise<void> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n
      FROM (SELECT user_id, sum(delta_minutes) AS total FROM overtime_ledger WHERE tenant_id = ${tenantId} GROUP BY user_id) l
      FULL JOIN (SELECT user_id, balance_minutes FROM overtime_balances WHERE tenant_id = ${tenantId}) b
        ON b.user_id = l.user_id
     WHERE b.balance_minutes IS DISTINCT FROM l.total`.execute(db);
  if ((rows[0]?.n ?? 0) > 0) {
    throw new ImportRefused('overtime_balances: a balance is not the sum of its ledger rows');
  }
}

/** Identity sequences past every value now in their column, so later rows never take one. */
async function moveSequences(db: Db, catalogue: TenantCatalogue): Promise<void> {
  for (const table of catalogue.tables) {
    for (const column of table.identity) {
      await sql`
        SELECT setval(s.seq, m.top)
          FROM (SELECT pg_get_serial_sequence(${table.name}, ${column})::regclass AS seq) s,
               (SELECT max(${sql.ref(column)}) AS top FROM ${sql.table(table.name)}) m
         WHERE m.top IS NOT NULL AND m.top > coalesce(pg_sequence_last_value(s.seq), 0)`.execute(db);
    }
  }
}
