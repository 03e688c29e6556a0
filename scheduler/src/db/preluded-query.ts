import pg from 'pg';

/**
 * The parts of pg's `Query` this subclass relies on. They are not in pg's published types
 * (node-postgres, lib/query.js), but they are the interface its client drives a query
 * through, and the lockfile pins the version: test/db/preluded-query.test.ts fails if
 * they change.
 */
interface QueryInternals {
  prepare(connection: PgConnection): void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: PgConnection): void;
}

/** The protocol writer of pg's client (lib/connection.js): one message each. */
interface PgConnection {
  parse(query: { text: string }): void;
  bind(config: Record<string, never>): void;
  execute(config: Record<string, never>): void;
}

type QueryConstructor = new (config: {
  text: string;
  values: unknown[];
  queryMode: 'extended';
  callback: (error: Error | null, result: pg.QueryResult) => void;
}) => QueryInternals;

const BaseQuery = pg.Query as unknown as QueryConstructor;

/**
 * A statement sent behind a prelude in one extended-protocol exchange: Parse, Bind and
 * Execute of the prelude, then of the statement, and one Sync. PostgreSQL runs everything
 * before a Sync in one implicit transaction, which the Sync commits (or rolls back after an
 * error: then the statement is skipped), so what the prelude sets with
 * `set_config(…, true)` holds for the statement and ends with it. That is a transaction of
 * its own told its tenant without BEGIN and COMMIT: two statements for the server instead
 * of four, and one query for pg instead of three (drivers.ts, TenantTransactions).
 *
 * The prelude's own row and completion are not the statement's: they are passed over, and
 * everything after them goes to pg's query as usual (types, errors, the result). A failure
 * of the prelude is the query's error, as a failure of the statement is.
 */
export class PreludedQuery extends BaseQuery {
  /** Whether the prelude's answers are still to come. */
  private inPrelude = true;
  /** Settles with the statement's result or the exchange's first error. */
  readonly done: Promise<pg.QueryResult>;

  constructor(
    private readonly prelude: string,
    text: string,
    values: readonly unknown[],
  ) {
    let settle: (error: Error | null, result: pg.QueryResult) => void = () => {};
    // Extended mode even without values: a simple Query message could not share the Sync.
    super({
      text,
      values: [...values],
      queryMode: 'extended',
      callback: (error, result) => settle(error, result),
    });
    this.done = new Promise((resolve, reject) => {
      settle = (error, result) => (error ? reject(error) : resolve(result));
    });
  }

  override prepare(connection: PgConnection): void {
    // The unnamed statement and portal: the statement's Parse and Bind replace them next.
    connection.parse({ text: this.prelude });
    connection.bind({});
    connection.execute({});
    super.prepare(connection);
  }

  override handleDataRow(message: unknown): void {
    if (!this.inPrelude) super.handleDataRow(message);
  }

  override handleCommandComplete(message: unknown, connection: PgConnection): void {
    if (this.inPrelude) this.inPrelude = false;
    else super.handleCommandComplete(message, connection);
  }
}

/** Sends `text` behind `prelude` on `client` (see PreludedQuery) and answers its result. */
export function queryWithPrelude(
  client: pg.ClientBase,
  prelude: string,
  text: string,
  values: readonly unknown[],
): Promise<pg.QueryResult> {
  const query = new PreludedQuery(prelude, text, values);
  client.query(query as unknown as pg.Submittable);
  return query.done;
}
