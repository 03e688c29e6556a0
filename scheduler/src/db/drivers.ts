import {
  type AbortableOperationOptions,
  AbortedTransactionError,
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import { inBackground } from './lanes.ts';
import { queryWithPrelude } from './preluded-query.ts';
import { currentActor, currentTenant } from './tenant-scope.ts';

/**
 * Kysely drivers layered over the one real driver (a pg pool, or PGlite's single
 * session), so that the application's queries and the owner's share it:
 *
 * - `SerializedDriver` lends PGlite's one session to one user at a time, whole
 *   transactions included (the application and the owner's view both queue on it);
 * - `SessionDriver` prepares a connection each time it is lent: on PGlite the
 *   application's tells the session the request's tenant (row-level security, migration
 *   0006), the owner's view drops the application role for the loan and takes it back after;
 * - `TenantTransactions` tells PostgreSQL's connections the request's tenant per
 *   transaction, every statement in one, so that a pooler in transaction mode may hand
 *   each transaction another server connection.
 *
 * - `ParameterGuard`, over each of them (`dialectOver`), refuses a statement with more
 *   bind parameters than `MAX_STATEMENT_PARAMETERS` before it is sent.
 *
 * None of them owns the real driver: the database handle initialises and destroys it once.
 */
type Prepare = (connection: DatabaseConnection) => Promise<void>;

/**
 * Passes everything through to `inner`; init and destroy belong to the handle. A driver
 * that lends connections of its own wrapping (`ParameterGuard`) unwraps them in `unwrap`.
 */
class DelegatingDriver implements Driver {
  constructor(protected readonly inner: Driver) {}
  protected unwrap(connection: DatabaseConnection): DatabaseConnection {
    return connection;
  }
  async init(): Promise<void> {}
  acquireConnection(): Promise<DatabaseConnection> {
    return this.inner.acquireConnection();
  }
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(this.unwrap(connection), settings);
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(this.unwrap(connection));
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(this.unwrap(connection));
  }
  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return (
      this.inner.savepoint?.(this.unwrap(connection), name, compile) ??
      Promise.reject(new Error('no savepoints'))
    );
  }
  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return (
      this.inner.rollbackToSavepoint?.(this.unwrap(connection), name, compile) ??
      Promise.reject(new Error('no savepoints'))
    );
  }
  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return (
      this.inner.releaseSavepoint?.(this.unwrap(connection), name, compile) ??
      Promise.reject(new Error('no savepoints'))
    );
  }
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(this.unwrap(connection));
  }
  async destroy(): Promise<void> {}
}

/**
 * Loans of the foreground lane granted in a row while background work waits, before one
 * background loan goes: requests come first, and background work still gets a share
 * however busy the requests keep the session.
 */
const FOREGROUND_BURST = 8;

/**
 * One borrower at a time (PGlite has a single session), a turn of the event loop before
 * each loan, and requests before background work.
 *
 * Why the turn: PGlite runs in this thread and answers a statement without any I/O, so a
 * promise chain of statements (a job worker working through a backlog, a sweep of
 * reminders) resolves on microtasks alone and never lets the event loop reach its timers
 * or sockets: no request is accepted, no webhook is sent, until the chain ends. The next
 * borrower is chosen on a `setImmediate` after each loan, so the loop runs its I/O between
 * any two loans and no chain of loans can hold the process, whoever makes it. A
 * transaction is one loan: its statements run back to back, as a transaction must.
 *
 * Why two lanes: the session is the one resource every tenant's requests share with the
 * job worker. Loans asked for in the background (src/db/lanes.ts: the worker, the
 * reminder sweep) wait while requests wait, up to `FOREGROUND_BURST` requests in a row;
 * each lane is served in arrival order. So one tenant's backlog of deliveries costs
 * another tenant's read about one loan of waiting, not the whole queue of the worker's.
 */
export class SerializedDriver extends DelegatingDriver {
  private readonly lanes = { foreground: [] as (() => void)[], background: [] as (() => void)[] };
  /** Whether a borrower holds the session, or one is being chosen. */
  private held = false;
  private foregroundStreak = 0;

  override async acquireConnection(): Promise<DatabaseConnection> {
    await new Promise<void>((grant) => {
      (inBackground() ? this.lanes.background : this.lanes.foreground).push(grant);
      this.handOn();
    });
    try {
      return await this.inner.acquireConnection();
    } catch (error) {
      this.held = false;
      this.handOn();
      throw error;
    }
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.releaseConnection(connection);
    } finally {
      this.held = false;
      this.handOn();
    }
  }

  /** When the session is free and someone waits: the next borrower, chosen after a turn of the loop. */
  private handOn(): void {
    if (this.held || (this.lanes.foreground.length === 0 && this.lanes.background.length === 0)) return;
    this.held = true;
    setImmediate(() => {
      const next = this.next();
      if (next) next();
      else this.held = false;
    });
  }

  private next(): (() => void) | undefined {
    const { foreground, background } = this.lanes;
    if (foreground.length > 0 && (background.length === 0 || this.foregroundStreak < FOREGROUND_BURST)) {
      this.foregroundStreak = background.length > 0 ? this.foregroundStreak + 1 : 0;
      return foreground.shift();
    }
    this.foregroundStreak = 0;
    return background.shift();
  }
}

/** Runs `prepare` on every connection lent, and `restore` when it comes back. */
export class SessionDriver extends DelegatingDriver {
  constructor(
    inner: Driver,
    private readonly prepare: Prepare,
    private readonly restore?: Prepare,
  ) {
    super(inner);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    try {
      await this.prepare(connection);
    } catch (error) {
      await this.inner.releaseConnection(connection);
      throw error;
    }
    return connection;
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.restore?.(connection);
    } finally {
      await this.inner.releaseConnection(connection);
    }
  }
}

/**
 * Tells PGlite's one session the tenant and the actor of the running scope (tenant-scope.ts)
 * before it is used: `app.tenant_id`, read by the row-level security policies, and
 * `app.actor_id`, the user the audit log records (migration 0015); the empty string for
 * either outside any scope or without a user, which the policies match with nothing and
 * the audit log reads as the system. Both go in one round trip. The values are set for the
 * session and only ever by this function, so a session that was last told the same pair
 * needs no round trip; every other loan overwrites them before the borrower's first
 * statement. They are set outside any transaction (a loan starts before BEGIN), so no
 * rollback can undo them behind the record kept here.
 *
 * Only for the embedded database: its session is in this process and lent whole to one
 * borrower at a time (SerializedDriver), so what it was told is what it holds. A server
 * connection is another matter (behind a pooler in transaction mode it changes between
 * transactions): PostgreSQL's connections are told per transaction (TenantTransactions).
 */
export function tenantSession(): Prepare {
  const told = new WeakMap<DatabaseConnection, string>();
  return async (connection) => {
    const tenant = currentTenant() ?? '';
    const actor = currentActor() ?? '';
    // Neither holds a space: a uuid or nothing.
    const pair = `${tenant} ${actor}`;
    if (told.get(connection) === pair) return;
    told.delete(connection);
    await connection.executeQuery(
      CompiledQuery.raw(
        "SELECT set_config('app.tenant_id', $1, false), set_config('app.actor_id', $2, false)",
        [tenant, actor],
      ),
    );
    told.set(connection, pair);
  };
}

/** What every transaction of the application's PostgreSQL connections is told besides its tenant. */
export interface TransactionSettingsOfApp {
  /** statement_timeout for the transaction, in milliseconds. */
  statementTimeoutMs?: number | undefined;
}

/** A value written into the prelude: a uuid, a time zone or a number; anything else is a bug. */
function literal(value: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(value))
    throw new Error(`refusing to send ${JSON.stringify(value)} as a setting`);
  return `'${value}'`;
}

/** The commands whose row count Kysely reads as the rows a statement changed. */
const countedCommands = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * A pg client lent by TenantTransactions: each statement outside a transaction is sent
 * behind the scope's settings under one Sync (preluded-query.ts), a transaction of its own.
 */
class TenantScopedConnection implements DatabaseConnection {
  /** Whether a transaction Kysely began is open on it (its statements are told already). */
  inTransaction = false;
  /** Whether the client must not go back to the pool (a ROLLBACK failed: its state is unknown). */
  discard = false;

  constructor(
    readonly client: pg.PoolClient,
    private readonly driver: TenantTransactions,
  ) {}

  /** Opens a transaction told the scope's settings; `begin` the statement that opens it. */
  async open(begin: string): Promise<void> {
    try {
      await this.client.query(`${begin}; ${this.driver.prelude()}`);
    } catch (error) {
      // BEGIN went through and the settings did not (a role that cannot be taken): the
      // transaction is open and failed, and must not stay so on the connection.
      await this.end('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /** Ends the open transaction with `statement` (COMMIT or ROLLBACK); answers the command tag. */
  async end(statement: 'COMMIT' | 'ROLLBACK'): Promise<string> {
    try {
      return (await this.client.query(statement)).command;
    } catch (error) {
      if (statement === 'ROLLBACK') this.discard = true;
      throw error;
    }
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { command, rowCount, rows } = this.inTransaction
      ? await this.client.query(query.sql, [...query.parameters])
      : await queryWithPrelude(this.client, this.driver.prelude(), query.sql, query.parameters);
    return {
      rows: (rows ?? []) as R[],
      ...(countedCommands.has(command) ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}),
    };
  }

  // biome-ignore lint/correctness/useYield: refuses before its first row, as it must.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    // A cursor keeps a portal open across round trips, which the prelude's one exchange
    // cannot hold; the application reads pages instead (the tenant export does).
    throw new Error("streaming is not supported on the application's PostgreSQL connections");
  }
}

/**
 * Tells PostgreSQL the tenant and the actor of the running scope (tenant-scope.ts) per
 * transaction, never per connection: `app.tenant_id`, read by the row-level security
 * policies (migration 0006), and `app.actor_id`, the user the audit log records
 * (migration 0015), the empty string for either outside any scope or without a user
 * (the policies then match nothing, the audit log records the system). With them the
 * settings a connection would otherwise take at start-up: `TimeZone` UTC and the statement
 * timeout.
 *
 * Why per transaction: behind a pooler in transaction mode (PgBouncer, the one most
 * deployments run) a client's connection is lent a server connection for one transaction
 * at a time, a statement outside any transaction being one of its own; whatever a session
 * was told before belongs to whichever client used it last. So every transaction Kysely
 * begins is told with `set_config(…, true)`, which lasts until its end, in the round trip
 * of its BEGIN; and every statement outside one is sent behind the same settings under one
 * Sync, which PostgreSQL runs as one implicit transaction (preluded-query.ts): one round
 * trip, two statements for the server, no BEGIN or COMMIT. Nothing is left on a session
 * for the next transaction to rely on, and nothing a transaction sets outlives it, so a
 * connection a pooler hands on carries nothing of this tenant's. The same holds on a
 * direct connection.
 *
 * It lends the clients of the application's pg pool itself (no driver below it): the
 * handle (database.ts) opens and ends the pool. The values are written into the prelude
 * as literals (the BEGIN's simple query may hold two statements, a parameterised one only
 * one): uuids, a zone and a number, checked.
 */
export class TenantTransactions implements Driver {
  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: TransactionSettingsOfApp = {},
  ) {}

  /** The statement that tells a transaction its settings. */
  prelude(): string {
    const values: [string, string][] = [
      ['app.tenant_id', currentTenant() ?? ''],
      ['app.actor_id', currentActor() ?? ''],
      ['TimeZone', 'UTC'],
    ];
    if (this.settings.statementTimeoutMs !== undefined)
      values.push(['statement_timeout', String(this.settings.statementTimeoutMs)]);
    return `SELECT ${values.map(([name, value]) => `set_config('${name}', ${literal(value)}, true)`).join(', ')}`;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TenantScopedConnection(await this.pool.connect(), this);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const scoped = connection as TenantScopedConnection;
    let begin = 'BEGIN';
    if (settings.isolationLevel) begin += ` ISOLATION LEVEL ${settings.isolationLevel.toUpperCase()}`;
    if (settings.accessMode) begin += ` ${settings.accessMode.toUpperCase()}`;
    await scoped.open(begin);
    scoped.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const scoped = connection as TenantScopedConnection;
    try {
      // PostgreSQL completes a COMMIT with ROLLBACK when an earlier error left the
      // transaction failed: nothing was committed, which the caller must hear.
      if ((await scoped.end('COMMIT')) === 'ROLLBACK') throw new AbortedTransactionError();
    } finally {
      scoped.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const scoped = connection as TenantScopedConnection;
    try {
      await scoped.end('ROLLBACK');
    } finally {
      scoped.inTransaction = false;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const scoped = connection as TenantScopedConnection;
    // pg destroys a client released with an error rather than lend it again.
    scoped.client.release(scoped.discard ? new Error('its transaction could not be rolled back') : undefined);
  }

  async destroy(): Promise<void> {}
}

/**
 * The most bind parameters one statement may carry. A statement's parameter count must
 * not grow with its input: PostgreSQL's protocol counts them in 16 bits (65,535 at most;
 * beyond, the server sees a malformed message), and well before that a statement of
 * thousands of parameters costs more to send and plan than the same values as arrays.
 * Lists of ids and many rows go in as one array per column (`= ANY($1::uuid[])`,
 * `INSERT … SELECT * FROM unnest($1::uuid[], $2::text[], …)`), so no statement of the
 * application comes near this; one that does is a bug, refused here before it is sent.
 */
export const MAX_STATEMENT_PARAMETERS = 1000;

/** A statement refused for its number of bind parameters (see MAX_STATEMENT_PARAMETERS): a bug. */
export class TooManyParametersError extends Error {
  constructor(
    readonly parameters: number,
    sql: string,
  ) {
    const start = sql.replace(/\s+/g, ' ').trim().slice(0, 120);
    super(
      `statement with ${parameters} bind parameters refused (at most ${MAX_STATEMENT_PARAMETERS}; pass lists as arrays): ${start}`,
    );
    this.name = 'TooManyParametersError';
  }
}

function checkParameters(query: CompiledQuery): void {
  if (query.parameters.length > MAX_STATEMENT_PARAMETERS) {
    throw new TooManyParametersError(query.parameters.length, query.sql);
  }
}

/** A lent connection that checks each statement before passing it on. */
class GuardedConnection implements DatabaseConnection {
  readonly collectSessionInfo?: DatabaseConnection['collectSessionInfo'];
  readonly killSession?: DatabaseConnection['killSession'];

  constructor(readonly inner: DatabaseConnection) {
    // Kysely aborts a query through these when the connection has them: the inner's, as they are.
    if (inner.collectSessionInfo) this.collectSessionInfo = inner.collectSessionInfo.bind(inner);
    if (inner.killSession) this.killSession = inner.killSession.bind(inner);
  }

  async executeQuery<R>(query: CompiledQuery, options?: AbortableOperationOptions): Promise<QueryResult<R>> {
    checkParameters(query);
    return this.inner.executeQuery<R>(query, options);
  }

  async *streamQuery<R>(
    query: CompiledQuery,
    chunkSize: number,
    options?: AbortableOperationOptions,
  ): AsyncIterableIterator<QueryResult<R>> {
    checkParameters(query);
    yield* this.inner.streamQuery<R>(query, chunkSize, options);
  }
}

/** Lends `inner`'s connections guarded: no statement above MAX_STATEMENT_PARAMETERS is sent. */
export class ParameterGuard extends DelegatingDriver {
  protected override unwrap(connection: DatabaseConnection): DatabaseConnection {
    return connection instanceof GuardedConnection ? connection.inner : connection;
  }
  override async acquireConnection(): Promise<DatabaseConnection> {
    return new GuardedConnection(await this.inner.acquireConnection());
  }
}

/**
 * A Kysely dialect for PostgreSQL syntax over a driver of ours, guarded: every statement
 * of the Kysely built on it passes ParameterGuard.
 */
export function dialectOver(driver: Driver): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new ParameterGuard(driver),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
