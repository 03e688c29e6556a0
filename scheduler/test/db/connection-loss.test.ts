import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * A connection the server ends while the application holds it between two statements (a
 * transaction, a tenant's setting and its query) must fail the next statement, not the
 * process: an 'error' event nobody listens to ends a Node process. PostgreSQL only (the
 * embedded database has no server to end it).
 */
const onPostgres = inject('testDb') === 'postgres';
let handle: TestDatabase;

beforeAll(async () => {
  if (onPostgres) handle = await openTestDatabase();
});
afterAll(async () => handle?.dispose());

describe('a connection ended by the server while lent out', runsIf(onPostgres, NEEDS_POSTGRES), () => {
  it('fails the next statement and leaves the process and the pool serving', async () => {
    const failure = await handle.db
      .transaction()
      .execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
        // The administrator ends this session while the transaction is between statements,
        // and waits until the session is gone (PostgreSQL's own wait, not a guess of time).
        const ended = await sql<{ gone: boolean }>`
          SELECT pg_terminate_backend(${rows[0]?.pid}::int, 600000) AS gone`.execute(handle.owner);
        expect(ended.rows).toEqual([{ gone: true }]);
        await sql`SELECT 1`.execute(trx);
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(Error);
    const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(handle.db);
    expect(rows).toEqual([{ ok: 1 }]);
  });
});
