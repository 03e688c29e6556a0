import type { KyselyPlugin, QueryId, RootOperationNode } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/**
 * A view of a test database that reports the statements running through it, and can make
 * one fail or run something between a statement and the next (the races services guard
 * against). The code under test runs unchanged on top of it.
 */
export interface Statement {
  /** `select`, `insert`, `update` or `delete`. */
  kind: string;
  /** Every table the statement names. */
  tables: string[];
}

export interface DbHooks {
  db: Db;
  statements: Statement[];
  /** Throw this from the next statement that matches. */
  failNext(match: (statement: Statement) => boolean, error: Error): void;
  /** Run `action` after the next matching statement has run, before its result is returned. */
  afterNext(match: (statement: Statement) => boolean, action: () => Promise<void>): void;
}

const kinds: Record<string, string> = {
  SelectQueryNode: 'select',
  InsertQueryNode: 'insert',
  UpdateQueryNode: 'update',
  DeleteQueryNode: 'delete',
};

function tablesOf(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const child of node) tablesOf(child, found);
  } else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (record.kind === 'TableNode') {
      const table = record.table as { identifier?: { name?: string } } | undefined;
      if (table?.identifier?.name) found.add(table.identifier.name);
    }
    for (const child of Object.values(record)) tablesOf(child, found);
  }
  return found;
}

/**
 * A statement written as raw SQL (sql`...`) is described from its text: its first
 * keyword, and the tables it reads or writes by name.
 */
function describeRaw(node: { sqlFragments?: readonly string[] }): Statement {
  const text = (node.sqlFragments ?? []).join(' ');
  const kind =
    /^\s*(?:WITH\b.*?\)\s*)?(select|insert|update|delete)\b/is.exec(text)?.[1]?.toLowerCase() ?? 'raw';
  const tables = new Set<string>();
  for (const match of text.matchAll(/\b(?:FROM|UPDATE|INTO|JOIN)\s+([a-z_][a-z0-9_]*)/gi)) {
    tables.add((match[1] as string).toLowerCase());
  }
  return { kind, tables: [...tables] };
}

const statementOf = (node: RootOperationNode): Statement =>
  node.kind === 'RawNode'
    ? describeRaw(node as { sqlFragments?: readonly string[] })
    : { kind: kinds[node.kind] ?? node.kind, tables: [...tablesOf(node)] };

export function withDbHooks(db: Db): DbHooks {
  const statements: Statement[] = [];
  let failure: { match: (s: Statement) => boolean; error: Error } | null = null;
  let after: { match: (s: Statement) => boolean; action: () => Promise<void> } | null = null;
  const pending = new Map<QueryId, () => Promise<void>>();

  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }): RootOperationNode {
      const statement = statementOf(node);
      statements.push(statement);
      if (failure?.match(statement)) {
        const { error } = failure;
        failure = null;
        throw error;
      }
      if (after?.match(statement)) {
        pending.set(queryId, after.action);
        after = null;
      }
      return node;
    },
    async transformResult({ result, queryId }) {
      const action = pending.get(queryId);
      pending.delete(queryId);
      if (action) await action();
      return result;
    },
  };

  return {
    db: db.withPlugin(plugin),
    statements,
    failNext(match, error) {
      failure = { match, error };
    },
    afterNext(match, action) {
      after = { match, action };
    },
  };
}

/** A statement of this kind that names this table. */
export const on =
  (kind: string, table: string) =>
  (statement: Statement): boolean =>
    statement.kind === kind && statement.tables.includes(table);

/**
 * Hooks on the database of an app not built yet: pass `viewDb` to createTestContext (or
 * useTestContext, useRouteTests), then use the rest inside tests, once the app exists.
 */
export interface AppDbHooks extends DbHooks {
  viewDb(db: Db): Db;
}

export function appDbHooks(): AppDbHooks {
  let hooks: DbHooks | undefined;
  const built = (): DbHooks => {
    if (!hooks) throw new Error('the app is built in beforeAll: use its database hooks inside a test');
    return hooks;
  };
  return {
    viewDb(db) {
      hooks = withDbHooks(db);
      return hooks.db;
    },
    get db() {
      return built().db;
    },
    get statements() {
      return built().statements;
    },
    failNext: (match, error) => built().failNext(match, error),
    afterNext: (match, action) => built().afterNext(match, action),
  };
}

/** What PostgreSQL throws when its disk is full (SQLSTATE 53100): a failure no service handles. */
export const diskFull = () =>
  Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' });
