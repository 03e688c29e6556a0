import { mkdirSync } from 'node:fs';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { btree_gist } from '@electric-sql/pglite/contrib/btree_gist';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PGliteDialect,
  PostgresDialect,
  sql,
} from 'kysely';
import pg from 'pg';
import { DataDirLockedError, lockDataDir } from '../../../common/src/data-dir-lock.ts';
import {
  dialectOver,
  SerializedDriver,
  SessionDriver,
  TenantTransactions,
  tenantSession,
} from './drivers.ts';
import { PreludedQuery } from './preluded-query.ts';
import type { Database } from './types.ts';
import { wireParsers } from './wire-types.ts';

/**
 * Wakes a worker when jobs became due elsewhere (PostgreSQL's LISTEN, below):
 * `listen` subscribes and answers how to stop. Polling stays as the fallback.
 */
export interface WakeupSource {
  listen(onWake: () => void): Promise<() => Promise<void>>;
}

export type Db = Kysely<Database>;

/**
 * The role the application's queries run as (migration 0006 creates it): not the owner of
 * any table, without BYPASSRLS, so the tenant policies always apply to it.
 */
export const appRole = 'scheduler_app';

/** The database handle and its owner: whoever opens it closes it. */
export interface DatabaseHandle {
  /** The application's view: role `scheduler_app`, rows of the running tenant scope only. */
  db: Db;
  /** The schema owner's view: migrations, operators' tools and test fixtures; bypasses row-level security. */
  owner: Db;
  kind: 'postgres' | 'pglite';
  /** The embedded instance, when kind is pglite (the test setup dumps a snapshot of it). */
  pglite?: PGlite;
  /**
   * PostgreSQL: wakes the job worker when another process queued work that is due now
   * (LISTEN on the channel migration 0019 notifies). The embedded database has one
   * process, which wakes its own worker, so it has none.
   */
  wakeups?: WakeupSource;
  /** PostgreSQL: the application pool's connections now (/metrics); the embedded database has no pool. */
  poolUse?: () => PoolUse;
  close(): Promise<void>;
}

/** The application pool's connections at one moment. */
export interface PoolUse {
  /** Connections the pool may open (DATABASE_POOL_SIZE). */
  max: number;
  /** Connections open now, lent out or idle. */
  open: number;
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

export interface DatabaseOptions {
  /** postgres:// URL the application connects with; absent means PGlite in `dataDir`. */
  url?: string | undefined;
  /** postgres:// URL of the schema owner (migrations); absent: `url`. */
  ownerUrl?: string | undefined;
  dataDir?: string | undefined;
  poolSize?: number | undefined;
  /** How long opening a PostgreSQL connection may take (10 s by default). */
  connectTimeoutMs?: number | undefined;
  /**
   * PostgreSQL: how long the application's statements may run (the server cancels them),
   * and, with a second of grace, how long the client waits for an answer before it gives up
   * on the statement and drops its connection; it also bounds opening a connection and
   * waiting for one of the pool. Absent: no deadline (tools, migrations, tests). The
   * owner's pool never has one: a migration may take long.
   */
  statementTimeoutMs?: number | undefined;
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

/** How much longer than the server's own statement_timeout the client waits for its answer. */
const clientDeadlineGraceMs = 1000;

/**
 * The message of the error pg's `query_timeout` fails a statement with: a plain `Error`,
 * no code (node-postgres, lib/client.js). The error handler answers it 503.
 */
const clientTimeoutMessage = 'Query read timeout';

type QueryFunction = (this: pg.Client, ...args: unknown[]) => unknown;
const sendQuery: QueryFunction = pg.Client.prototype.query;

/**
 * pg's client, ending its connection when a statement outlives `query_timeout`. pg fails
 * the statement but keeps the connection as it is, the unanswered statement still in
 * flight: back in the pool, it would make every later borrower's statements wait behind
 * one the server may never answer (a network path that drops packets behind an open
 * socket never does). Ended instead: pg destroys the socket of a connection with a
 * statement in flight at once, the pool discards the connection when it comes back and
 * opens a new one for the next loan, and the server rolls back whatever transaction the
 * connection held once it notices. Later statements on it (a transaction's ROLLBACK) fail
 * at once with pg's "Client was closed and is not queryable".
 */
class DeadlineClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const query: QueryFunction = (...args) => {
      const result = sendQuery.apply(this, args);
      // A query object is answered through its own promise (preluded-query.ts).
      const answer = result instanceof PreludedQuery ? result.done : result;
      if (answer instanceof Promise) {
        answer.catch((error: unknown) => {
          if (error instanceof Error && error.message === clientTimeoutMessage) void this.end();
        });
      }
      return result;
    };
    this.query = query as pg.Client['query'];
  }
}

interface PoolSettings {
  url: string;
  max: number;
  connectTimeoutMs: number;
  /** Startup options (`-c name=value`); a pooler in transaction mode refuses any. */
  startupOptions?: string | undefined;
  /**
   * The client's own deadline on a statement: the server's statement_timeout (set per
   * transaction, TenantTransactions) plus the grace.
   */
  statementTimeoutMs?: number | undefined;
}

function pgPool({ url, max, connectTimeoutMs, startupOptions, statementTimeoutMs }: PoolSettings): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // A server that accepts the connection but never answers must not hang start-up
    // or a request for ever; nor waiting for a connection of the pool.
    connectionTimeoutMillis: connectTimeoutMs,
    types: pgTypes,
    ...(startupOptions === undefined ? {} : { options: startupOptions }),
    ...(statementTimeoutMs === undefined
      ? {}
      : {
          // The server cancels a statement that runs too long (57014), keeping the
          // connection; a server that does not answer at all (frozen, cut off behind an
          // open socket) cannot, so the client gives up a second later by itself.
          query_timeout: statementTimeoutMs + clientDeadlineGraceMs,
          Client: DeadlineClient,
        }),
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  // Nor a client that is lent out between two statements (a transaction, a tenant's
  // setting and its query, the job worker's claims) when the server ends it: without a
  // listener of its own, its 'error' event would be unhandled and end the process.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

const run = (sql: string) => (connection: DatabaseConnection) =>
  connection.executeQuery(CompiledQuery.raw(sql)).then(() => {});

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.url ? openPostgres(options.url, options) : openPglite(options);
}

/**
 * Two pools. The application's connections carry no session state at all: each
 * transaction, and each statement outside one, is told its tenant, its actor, UTC and the
 * statement timeout for its own length (TenantTransactions), so that a pooler in
 * transaction mode (PgBouncer) may serve them; they send no startup options either, which
 * such a pooler refuses. With one URL for both (an owner's login), the application's
 * connections take the role `scheduler_app` as a startup option, so that a connection that
 * cannot take it fails to open rather than run with the owner's rights, and a RESET ROLE
 * returns to it; a pooler in transaction mode refuses that option, so behind one the owner
 * has a URL of its own (DATABASE_OWNER_URL, direct) and the application's login is a
 * member of `scheduler_app` of its own (see docs/operations.md). The
 * owner's pool is small (migrations) and keeps its session settings: it connects directly.
 * LISTEN needs a session of its own for as long as it listens: it goes to the owner's URL
 * when there is one (direct to the server, where a pooler in transaction mode would lose
 * it), else to the application's.
 */
async function openPostgres(url: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  const timeout = options.connectTimeoutMs ?? options.statementTimeoutMs ?? 10_000;
  const max = options.poolSize ?? 10;
  const appPool = pgPool({
    url,
    max,
    connectTimeoutMs: timeout,
    startupOptions: options.ownerUrl === undefined ? `-c role=${appRole}` : undefined,
    statementTimeoutMs: options.statementTimeoutMs,
  });
  const ownerDriver = new PostgresDialect({
    pool: pgPool({
      url: options.ownerUrl ?? url,
      max: 2,
      connectTimeoutMs: timeout,
      startupOptions: '-c TimeZone=UTC',
    }),
  }).createDriver();
  await ownerDriver.init();
  const db = new Kysely<Database>({
    dialect: dialectOver(new TenantTransactions(appPool, { statementTimeoutMs: options.statementTimeoutMs })),
  });
  const owner = new Kysely<Database>({
    dialect: dialectOver(new SessionDriver(ownerDriver, async () => {})),
  });
  const listenUrl = options.ownerUrl ?? url;
  return {
    db,
    owner,
    kind: 'postgres',
    wakeups: { listen: (onWake) => listenForDueJobs(listenUrl, timeout, onWake) },
    poolUse: () => ({
      max,
      open: appPool.totalCount,
      idle: appPool.idleCount,
      waiting: appPool.waitingCount,
    }),
    close: async () => {
      // Kysely's own destroy first: later queries then fail as "destroyed", which the
      // error handler answers 503, rather than with whatever a closed pool says.
      await Promise.all([db.destroy(), owner.destroy()]);
      await Promise.all([appPool.ended ? undefined : appPool.end(), ownerDriver.destroy()]);
    },
  };
}

/** The channel a job becoming due is announced on (migration 0019). */
const jobsChannel = 'scheduler_jobs';

/**
 * A connection of its own that LISTENs for due jobs and calls `onWake` for each
 * announcement, and once after every (re)connection (what was announced while it was away
 * is due now). A lost connection is opened again after a doubling wait (1 s to 30 s): the
 * worker polls meanwhile. Answers how to stop listening.
 */
async function listenForDueJobs(url: string, connectTimeoutMs: number, onWake: () => void) {
  let client: pg.Client | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | null = null;
  let waitMs = 1000;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
    next.on('notification', () => onWake());
    next.on('error', () => reconnect(next));
    next.on('end', () => reconnect(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${jobsChannel}`);
    } catch {
      reconnect(next);
      return;
    }
    if (stopped) {
      await next.end().catch(() => undefined);
      return;
    }
    client = next;
    waitMs = 1000;
    onWake();
  };
  const reconnect = (lost: pg.Client) => {
    if (client === lost) client = null;
    lost.end().catch(() => undefined);
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, waitMs);
    retry.unref();
    waitMs = Math.min(waitMs * 2, 30_000);
  };
  // A first failure is no reason to fail the caller: the retries go on, polling meanwhile.
  await connect().catch(() => undefined);
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    retry = null;
    await (client as pg.Client | null)?.end().catch(() => undefined);
    client = null;
  };
}

/**
 * PGlite has one session, lent to one borrower at a time. The application's loans run as
 * `scheduler_app` (taken again whenever the owner's view had dropped it); the owner's
 * loans drop the role for their length and take it back after, once it exists.
 */
async function openPglite(options: DatabaseOptions): Promise<DatabaseHandle> {
  // No dataDir: an in-memory database (tests, the snapshot builder).
  let dataDir: string | undefined;
  let release: (() => Promise<void>) | null = null;
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    // One process per folder, before anything is opened: two PGlite instances on one
    // folder corrupt it. A second start, migrate or dev exits here, naming the owner.
    release = await lockDataDir(options.dataDir);
    dataDir = `${options.dataDir}/pglite`;
    mkdirSync(dataDir, { recursive: true });
  }
  let pglite: PGlite;
  let inner: Driver;
  try {
    pglite = await PGlite.create({
      ...options.pglite,
      ...(dataDir ? { dataDir } : {}),
      parsers: wireParsers,
      // The exclusion constraint against overlapping assignments needs it (migration 0002).
      extensions: { btree_gist },
    });
    inner = new PGliteDialect({ pglite }).createDriver();
    await inner.init();
    // Set once, it holds for the session.
    await pglite.exec("SET TIME ZONE 'UTC'");
  } catch (error) {
    await release?.();
    throw error;
  }
  const shared = new SerializedDriver(inner);
  let asApp = false;
  const tellTenant = tenantSession();
  const appSession = new SessionDriver(shared, async (connection) => {
    if (!asApp) {
      await run(`SET ROLE ${appRole}`)(connection);
      asApp = true;
    }
    await tellTenant(connection);
  });
  const ownerSession = new SessionDriver(
    shared,
    async (connection) => {
      asApp = false;
      await run('RESET ROLE')(connection);
    },
    // Before the first migration the role does not exist yet; the next application loan
    // then tries again, and fails rather than run as the superuser.
    async (connection) => {
      await run(
        `SELECT set_config('role', '${appRole}', false) WHERE EXISTS (SELECT FROM pg_roles WHERE rolname = '${appRole}')`,
      )(connection);
      asApp = (await connection.executeQuery(CompiledQuery.raw('SELECT current_user'))).rows.some(
        (row) => (row as { current_user?: string }).current_user === appRole,
      );
    },
  );
  const db = new Kysely<Database>({ dialect: dialectOver(appSession) });
  const owner = new Kysely<Database>({ dialect: dialectOver(ownerSession) });
  return {
    db,
    owner,
    kind: 'pglite',
    pglite,
    close: async () => {
      await Promise.all([db.destroy(), owner.destroy()]);
      await inner.destroy();
      await release?.();
    },
  };
}

/**
 * Refuses to serve when the application's queries would not be held by row-level
 * security: they must run as `scheduler_app` or a member of it, as a role that is neither
 * a superuser nor allowed to bypass the policies, and owns no table (owners bypass them).
 */
export async function checkApplicationRole(db: Db): Promise<void> {
  const { rows } = await sql<{ role: string; member: boolean; bypasses: boolean; owns: boolean }>`
    SELECT current_user AS role,
           pg_has_role(current_user, ${appRole}, 'USAGE') AS member,
           (rolsuper OR rolbypassrls) AS bypasses,
           EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = 'public' AND c.relowner = r.oid) AS owns
      FROM pg_roles r WHERE r.rolname = current_user`.execute(db);
  const row = rows[0];
  if (!row) throw new Error("the role of the application's connections is unknown");
  if (row.bypasses) {
    throw new Error(`the application's queries run as ${row.role}, which may bypass row-level security`);
  }
  if (row.owns) throw new Error(`the application's queries run as ${row.role}, which owns the tables`);
  if (!row.member)
    throw new Error(`the application's queries run as ${row.role}, not a member of ${appRole}`);
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

/** Where the database is, as configured: the setting names a failure points at. */
export interface DatabaseSettings {
  databaseUrl?: string | undefined;
  databaseOwnerUrl?: string | undefined;
  dataDir: string;
}

/**
 * Why the database could not be opened or migrated, naming the setting to look at:
 * DATA_DIR for the embedded database; for PostgreSQL the login the failed step used,
 * DATABASE_OWNER_URL for migrations when it is set, DATABASE_URL otherwise.
 */
export function describeDatabaseFailure(
  settings: DatabaseSettings,
  step: 'migrate' | 'serve',
  error: unknown,
): string {
  if (error instanceof DataDirLockedError) {
    return `DATA_DIR: ${error.dir} is in use by process ${error.pid} (a scheduler, migrate or dev on the same folder); stop it, or set another DATA_DIR`;
  }
  const reason = rootMessage(error);
  if (step === 'migrate' && settings.databaseOwnerUrl) {
    return `DATABASE_OWNER_URL: cannot use the database at ${redacted(settings.databaseOwnerUrl)}: ${reason}`;
  }
  if (settings.databaseUrl) {
    return `DATABASE_URL: cannot use the database at ${redacted(settings.databaseUrl)}: ${reason}`;
  }
  return `DATA_DIR: cannot use the embedded database in ${settings.dataDir}/pglite: ${reason}`;
}
