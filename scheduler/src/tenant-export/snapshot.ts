import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { finished } from 'node:stream/promises';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { type ManifestTable, tableFile } from './archive.ts';
import { type ArchiveTable, tenantCatalogue } from './tables.ts';

/** Rows read per statement: memory holds one page of one table, never a table. */
export const EXPORT_PAGE_ROWS = 1000;

/**
 * Writes every archived table's rows of the tenant to `dir`, as of one moment: one
 * read-only REPEATABLE READ transaction, so the files agree with one another whatever
 * changes meanwhile. The only transaction of a service that is no unit of work: it
 * writes nothing (test/architecture/writes.test.ts names it).
 */
export async function spoolSnapshot(db: Db, tenantId: string, dir: string): Promise<ManifestTable[]> {
  return await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const catalogue = await tenantCatalogue(trx);
      const written: ManifestTable[] = [];
      for (const table of catalogue.tables) {
        const rows = await spoolTable(trx, table, tenantId, join(dir, tableFile(table.name)));
        written.push({ name: table.name, file: tableFile(table.name), rows, columns: table.columns });
      }
      return written;
    });
}

async function write(stream: WriteStream, chunk: string): Promise<void> {
  if (!stream.write(chunk)) {
    await new Promise<void>((resolve, reject) => {
      stream.once('drain', resolve);
      stream.once('error', reject);
    });
  }
}

async function closed(stream: WriteStream): Promise<void> {
  stream.end();
  await finished(stream);
}

/**
 * Writes the tenant's rows of `table` to `path`, one JSON object a line, in pages by its
 * primary key: each page starts after the last row of the previous one (the key read back
 * from that row's JSON by the database, so every key type compares as the database does).
 */
async function spoolTable(db: Db, table: ArchiveTable, tenantId: string, path: string): Promise<number> {
  await mkdir(dirname(path), { recursive: true });
  const out = createWriteStream(path);
  const t = sql.table(table.name);
  const key = sql.join(table.key.map((column) => sql.ref(`t.${column}`)));
  const lastKey = sql.join(table.key.map((column) => sql.ref(`l.${column}`)));
  const tenant = sql.ref(`t.${table.tenantColumn}`);
  let last: string | null = null;
  let count = 0;
  try {
    for (;;) {
      const after: string | null = last;
      // The row as the database writes it as JSON, less its generated columns.
      const page = await sql<{ line: string }>`
        SELECT (to_jsonb(t) - ${table.generated}::text[])::text AS line
          FROM ${t} AS t
         WHERE ${tenant} = ${tenantId}::uuid
           AND (${after}::jsonb IS NULL OR (${key}) > (
                 SELECT ${lastKey} FROM jsonb_populate_record(NULL::${t}, ${after}::jsonb) l))
         ORDER BY ${key}
         LIMIT ${EXPORT_PAGE_ROWS}`.execute(db);
      if (page.rows.length === 0) break;
      count += page.rows.length;
      await write(out, `${page.rows.map((row) => row.line).join('\n')}\n`);
      last = page.rows.at(-1)?.line ?? null;
      if (page.rows.length < EXPORT_PAGE_ROWS) break;
    }
  } finally {
    await closed(out);
  }
  return count;
}
