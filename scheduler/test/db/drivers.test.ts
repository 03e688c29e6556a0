import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { MAX_STATEMENT_PARAMETERS, TooManyParametersError } from '../../src/db/drivers.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * The drivers every statement passes through (src/db/drivers.ts), on this file's own
 * database: the bound on a statement's bind parameters, on the application's view and
 * the owner's alike; an array, the way many values travel, is one parameter.
 */
let handle: TestDatabase;

beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(async () => handle?.dispose());

const views = (): [string, Db][] => [
  ['application', handle.db],
  ['owner', handle.owner],
];

/** A statement of `count` bind parameters that answers how many it got. */
const counting = (count: number) =>
  sql<{ n: number }>`SELECT cardinality(ARRAY[${sql.join(
    Array.from({ length: count }, (_, i) => sql`${i}::int`),
  )}]) AS n`;

describe('the bound on bind parameters', () => {
  it('is 1,000', () => {
    expect(MAX_STATEMENT_PARAMETERS).toBe(1000);
  });

  it.each(['application', 'owner'])('sends a statement of exactly the bound (%s view)', async (view) => {
    const db = new Map(views()).get(view) as Db;
    const { rows } = await counting(MAX_STATEMENT_PARAMETERS).execute(db);
    expect(rows).toEqual([{ n: MAX_STATEMENT_PARAMETERS }]);
  });

  it.each(['application', 'owner'])(
    'refuses one more before it is sent (%s view): the transaction around it goes on',
    async (view) => {
      const db = new Map(views()).get(view) as Db;
      const failure = await db.transaction().execute(async (trx) => {
        const refused = await counting(MAX_STATEMENT_PARAMETERS + 1)
          .execute(trx)
          .then(
            () => null,
            (error: unknown) => error,
          );
        // Had the server refused it, the transaction would be aborted (25P02).
        const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(trx);
        expect(rows).toEqual([{ ok: 1 }]);
        return refused;
      });
      expect(failure).toBeInstanceOf(TooManyParametersError);
      expect(failure).toMatchObject({
        name: 'TooManyParametersError',
        parameters: MAX_STATEMENT_PARAMETERS + 1,
        message: `statement with ${MAX_STATEMENT_PARAMETERS + 1} bind parameters refused (at most ${MAX_STATEMENT_PARAMETERS}; pass lists as arrays): SELECT cardinality(ARRAY[$1::int, $2::int, $3::int, $4::int, $5::int, $6::int, $7::int, $8::int, $9::int, $10::int, $11:`,
      });
      expect((failure as { code?: unknown }).code).toBeUndefined();
    },
  );

  it('refuses a statement the query builder grew from a list (a long IN list)', async () => {
    const ids = Array.from({ length: MAX_STATEMENT_PARAMETERS + 1 }, () => randomUUID());
    const query = handle.owner.selectFrom('tenants').select('id').where('id', 'in', ids);
    await expect(query.execute()).rejects.toThrow(TooManyParametersError);
    // The same list as one array parameter.
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM tenants WHERE id = ANY(${ids}::uuid[])`.execute(handle.owner);
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('refuses a streamed statement too', async () => {
    const ids = Array.from({ length: MAX_STATEMENT_PARAMETERS + 1 }, () => randomUUID());
    const stream = handle.owner.selectFrom('tenants').select('id').where('id', 'in', ids).stream();
    await expect(stream.next()).rejects.toThrow(TooManyParametersError);
  });
});

describe('an array as one parameter', () => {
  it('carry 65,536 ids (more than one statement could bind one by one) in one parameter, in their wire form or hyphenated', async () => {
    const ids = Array.from({ length: 65_536 }, () => randomUUID());
    const wire = ids.map((id) => id.replaceAll('-', ''));
    for (const [, db] of views()) {
      const { rows } = await sql<{ n: number; first: string; last: string }>`
        SELECT cardinality(${wire}::uuid[]) AS n, (${ids}::uuid[])[1] AS first,
               (${wire}::uuid[])[65536] AS last`.execute(db);
      expect(rows).toEqual([{ n: 65_536, first: wire[0], last: wire[65_535] }]);
    }
  });
});
