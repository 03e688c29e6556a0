import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './types.ts';

export type Db = Kysely<Database>;

/** The database handle and its owner: whoever opens it closes it. */
export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; absent means PGlite in `dataDir`. */
  url?: string | undefined;
  dataDir?: string | undefined;
  poolSize?: number | undefined;
  /** An already opened PGlite instance (tests load a migrated snapshot into one). */
  pglite?: PGlite | undefined;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    // An idle client losing its server must not crash the process; the next query reports it.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  let pglite = options.pglite;
  if (!pglite) {
    if (!options.dataDir) throw new Error('openDatabase needs a url, a dataDir or a PGlite instance');
    const dir = `${options.dataDir}/pglite`;
    mkdirSync(dir, { recursive: true });
    pglite = await PGlite.create(dir);
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return { db, kind: 'pglite', close: () => db.destroy() };
}
