import { mkdirSync } from 'node:fs';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { btree_gist } from '@electric-sql/pglite/contrib/btree_gist';
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './types.ts';
import { wireParsers } from './wire-types.ts';

export type Db = Kysely<Database>;

/** The database handle and its owner: whoever opens it closes it. */
export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** The embedded instance, when kind is pglite (the test setup dumps a snapshot of it). */
  pglite?: PGlite;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; absent means PGlite in `dataDir`. */
  url?: string | undefined;
  dataDir?: string | undefined;
  poolSize?: number | undefined;
  /** How long opening a PostgreSQL connection may take (10 s by default). */
  connectTimeoutMs?: number | undefined;
  /** Extra PGlite options: tests start from a migrated snapshot with a precompiled module. */
  pglite?: Omit<PGliteOptions, 'parsers' | 'dataDir'> | undefined;
}

/** pg's type parsers with the wire-form overrides; scoped to our pool, not process-wide. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    const wire = format !== 'binary' ? wireParsers[oid] : undefined;
    return wire ?? pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      // A server that accepts the connection but never answers must not hang start-up
      // or a request for ever.
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      types: pgTypes,
      // Timestamps come back in UTC, whatever the server's default zone.
      options: '-c TimeZone=UTC',
    });
    // An idle client losing its server must not crash the process; the next query reports it.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  // No dataDir: an in-memory database (tests, the snapshot builder).
  let dataDir: string | undefined;
  if (options.dataDir) {
    dataDir = `${options.dataDir}/pglite`;
    mkdirSync(dataDir, { recursive: true });
  }
  const pglite = await PGlite.create({
    ...options.pglite,
    ...(dataDir ? { dataDir } : {}),
    parsers: wireParsers,
    // The exclusion constraint against overlapping assignments needs it (migration 0002).
    extensions: { btree_gist },
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  // PGlite has a single session: set once, it holds for every query.
  await sql`SET TIME ZONE 'UTC'`.execute(db);
  return { db, kind: 'pglite', pglite, close: () => db.destroy() };
}

/** The URL without its password, for messages. */
function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}

/**
 * What went wrong, from the first error of the cause chain that is not a wrapper of ours
 * ("migration … failed" adds nothing when the connection is the problem).
 */
function rootMessage(error: unknown): string {
  let current: unknown = error;
  const seen = new Set<unknown>();
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    if (current.name !== 'MigrationError' || !(current.cause instanceof Error)) {
      const code = (current as NodeJS.ErrnoException).code;
      if (current.message)
        return code && !current.message.includes(code) ? `${current.message} (${code})` : current.message;
      if (code) return code;
    }
    current = current instanceof AggregateError && current.errors[0] ? current.errors[0] : current.cause;
  }
  return 'unknown error';
}

/**
 * Why the database could not be opened or migrated, naming the setting to look at:
 * DATABASE_URL for PostgreSQL, DATA_DIR for the embedded database.
 */
export function describeDatabaseFailure(url: string | undefined, dataDir: string, error: unknown): string {
  const reason = rootMessage(error);
  if (url) return `DATABASE_URL: cannot use the database at ${redacted(url)}: ${reason}`;
  return `DATA_DIR: cannot use the embedded database in ${dataDir}/pglite: ${reason}`;
}
