import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { type DatabaseHandle, type Db, openDatabase } from '../../src/db/database.ts';

export interface TestDatabase extends DatabaseHandle {
  /** postgres:// URL of this file's own database (PostgreSQL runs only). */
  url: string | null;
  /** Closes and, on PostgreSQL, drops the database. */
  dispose(): Promise<void>;
}

/** Node has WebAssembly as a global; the ES lib types without DOM do not declare it. */
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<PGliteWasmModule> };
type PGliteWasmModule =
  NonNullable<Parameters<typeof PGlite.create>[0]> extends { pgliteWasmModule?: infer M } ? M : never;

let wasmModule: Promise<PGliteWasmModule> | undefined;

/** PGlite's WASM compiled once per worker; each instance then starts in a fraction of a second. */
function pgliteWasm(): Promise<PGliteWasmModule> {
  const require = createRequire(import.meta.url);
  // The package does not export its .wasm; it sits beside the entry point.
  const file = path.join(path.dirname(require.resolve('@electric-sql/pglite')), 'pglite.wasm');
  wasmModule ??= WebAssembly.compile(readFileSync(file));
  return wasmModule;
}

/** The login the application's pool uses on PostgreSQL runs: a member of scheduler_app only. */
export const testAppLogin = 'scheduler_test_api';

/** How a test opens its database: `through` rewrites the application's URL (support/pgbouncer.ts). */
export interface TestDatabaseOptions {
  /**
   * PostgreSQL: the application's connections go to this URL made from the server's (a
   * pooler in front of it); the owner's stay direct, as docs/operations.md advises.
   */
  through?: ((serverUrl: string) => string) | undefined;
}

/** A fresh, migrated database for one test file. */
export async function openTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  if (inject('testDb') === 'postgres') {
    const name = `sched_t_${randomBytes(6).toString('hex')}`;
    const adminUrl = inject('pgAdminUrl');
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const appUrl = new URL(url);
    appUrl.username = testAppLogin;
    appUrl.password = '';
    const handle = await openDatabase({
      url: options.through ? options.through(appUrl.toString()) : appUrl.toString(),
      ownerUrl: url.toString(),
      poolSize: 20,
      // A connection opened while the machine is loaded (two suites at once, swapping) may
      // take seconds; the 10 s a server allows is a race there, and a lost race would read as
      // a 503 in a test about something else. A test of the connect deadline sets its own.
      connectTimeoutMs: 120_000,
    });
    return {
      ...handle,
      url: url.toString(),
      async dispose() {
        await handle.close();
        const cleanup = new pg.Client({ connectionString: adminUrl });
        await cleanup.connect();
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await cleanup.end();
      },
    };
  }
  const snapshot = readFileSync(inject('pgliteSnapshot'));
  const handle = await openDatabase({
    pglite: { loadDataDir: new Blob([snapshot]), pgliteWasmModule: await pgliteWasm() },
  });
  return { ...handle, url: null, dispose: () => handle.close() };
}

/** This file's database as its tests read it; opened by `useTestDatabase`. */
export interface FileDatabase {
  /** The application's view: role `scheduler_app`, rows of the running tenant scope only. */
  readonly db: Db;
  /** The schema owner's view: bypasses row-level security (fixtures, raw rules tests). */
  readonly owner: Db;
  /** postgres:// URL of the database (PostgreSQL runs only). */
  readonly url: string | null;
  /** PostgreSQL: the LISTEN that wakes a job worker (DatabaseHandle.wakeups). */
  readonly wakeups: DatabaseHandle['wakeups'];
}

/**
 * The hooks of a test file below the API: its own database, opened before its first test
 * and disposed after its last. Read the fields inside tests (they exist from `beforeAll`
 * on). A file that also needs the app uses `useTestContext` (context.ts) instead.
 */
export function useTestDatabase(): FileDatabase {
  let opened: TestDatabase | undefined;
  beforeAll(async () => {
    opened = await openTestDatabase();
  });
  afterAll(async () => opened?.dispose());
  const handle = (): TestDatabase => {
    if (!opened) throw new Error('the test database is opened in beforeAll: read it inside a test or hook');
    return opened;
  };
  return {
    get db() {
      return handle().db;
    },
    get owner() {
      return handle().owner;
    },
    get url() {
      return handle().url;
    },
    get wakeups() {
      return handle().wakeups;
    },
  };
}

/**
 * Runs `statement` as raw SQL on `on`, past every service, each `?` bound to the next of
 * `values` (a parameter, never text pasted into the statement).
 */
export function runSql(on: Db, statement: string, ...values: unknown[]) {
  const parts = statement.split('?');
  return sql(Object.assign(parts, { raw: parts }) as unknown as TemplateStringsArray, ...values).execute(on);
}

/** What the database's refusal of a statement carries: its SQLSTATE and the constraint named. */
export interface Refusal {
  code: string;
  constraint: string | undefined;
}

/**
 * The refusal of `action` (a statement run past every service): fails the test if the
 * database accepted it. The rules tests assert the whole of it, code and constraint.
 */
export async function refusal(action: Promise<unknown>): Promise<Refusal> {
  const error = (await action.then(
    () => {
      throw new Error('the database accepted it');
    },
    (e: unknown) => e,
  )) as { code?: string; constraint?: string };
  return { code: String(error.code), constraint: error.constraint };
}

/** The SQLSTATE alone of `action`'s refusal (a privilege or a missing relation names no constraint). */
export async function refusalCode(action: Promise<unknown>): Promise<string> {
  return (await refusal(action)).code;
}
