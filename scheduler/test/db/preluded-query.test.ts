import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { PreludedQuery, queryWithPrelude } from '../../src/db/preluded-query.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * A statement sent behind a prelude under one Sync (src/db/preluded-query.ts), on a pg
 * client of its own: one transaction for both, the prelude's answers kept out of the
 * statement's result, and either one's failure reported as the query's and leaving the
 * connection serving. PostgreSQL only (the embedded database takes no protocol messages).
 */
const onPostgres = inject('testDb') === 'postgres';
let client: pg.Client;

beforeAll(async () => {
  if (!onPostgres) return;
  client = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await client.connect();
});
afterAll(async () => client?.end());

/** The session's value of a setting now, outside any transaction ('' once set and gone). */
async function setting(name: string): Promise<string | null> {
  const { rows } = await client.query<{ value: string | null }>('SELECT current_setting($1, true) AS value', [
    name,
  ]);
  return rows[0]?.value ?? null;
}

describe('a statement behind a prelude', runsIf(onPostgres, NEEDS_POSTGRES), () => {
  it('runs in the prelude’s transaction, sees its settings, and leaves none behind', async () => {
    const result = await queryWithPrelude(
      client,
      "SELECT set_config('app.prelude_xact', txid_current()::text, true), set_config('app.tenant_id', 'tenant-a', true)",
      "SELECT txid_current()::text = current_setting('app.prelude_xact') AS same, current_setting('app.tenant_id') AS tenant",
      [],
    );
    expect(result.rows).toEqual([{ same: true, tenant: 'tenant-a' }]);
    expect(await setting('app.tenant_id')).toBe('');
    expect(await setting('app.prelude_xact')).toBe('');
  });

  it('answers only the statement’s rows, fields, command and count, its parameters bound', async () => {
    const result = await queryWithPrelude(
      client,
      "SELECT set_config('app.unused', 'x', true)",
      'SELECT g AS n, $2::text AS label FROM generate_series(1, $1::int) AS g',
      [3, 'row'],
    );
    expect(result.command).toBe('SELECT');
    expect(result.rowCount).toBe(3);
    expect(result.fields.map((field) => field.name)).toEqual(['n', 'label']);
    expect(result.rows).toEqual([
      { n: 1, label: 'row' },
      { n: 2, label: 'row' },
      { n: 3, label: 'row' },
    ]);
  });

  it('fails with the statement’s error, and the connection serves the next query untold', async () => {
    const failure = queryWithPrelude(
      client,
      "SELECT set_config('app.tenant_id', 'tenant-b', true)",
      'SELECT 1 / $1::int',
      [0],
    );
    await expect(failure).rejects.toMatchObject({ code: '22012' });
    expect(await setting('app.tenant_id')).toBe('');
    const next = await queryWithPrelude(
      client,
      "SELECT set_config('app.tenant_id', 'tenant-c', true)",
      "SELECT current_setting('app.tenant_id') AS tenant",
      [],
    );
    expect(next.rows).toEqual([{ tenant: 'tenant-c' }]);
  });

  it('fails with the prelude’s error and never runs the statement', async () => {
    const failure = queryWithPrelude(
      client,
      "SELECT set_config('statement_timeout', 'not a duration', true)",
      "SELECT set_config('app.statement_ran', 'yes', false)",
      [],
    );
    await expect(failure).rejects.toMatchObject({ code: '22023' });
    // The statement would have set this for the session: the error skipped it to the Sync.
    expect(await setting('app.statement_ran')).toBeNull();
    expect((await client.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('rolls the statement’s writes back when its transaction fails at the Sync', async () => {
    await client.query('CREATE TEMP TABLE prelude_probe (id int PRIMARY KEY DEFERRABLE INITIALLY DEFERRED)');
    const failure = queryWithPrelude(
      client,
      "SELECT set_config('app.unused', 'x', true)",
      'INSERT INTO prelude_probe VALUES ($1), ($1)',
      [7],
    );
    // The deferred key is checked at the implicit commit: the error still reaches the query.
    await expect(failure).rejects.toMatchObject({ code: '23505' });
    expect((await client.query('SELECT count(*)::int AS n FROM prelude_probe')).rows).toEqual([{ n: 0 }]);
    const written = await queryWithPrelude(
      client,
      "SELECT set_config('app.unused', 'x', true)",
      'INSERT INTO prelude_probe VALUES ($1)',
      [8],
    );
    expect([written.command, written.rowCount]).toEqual(['INSERT', 1]);
  });

  it('is a pg query, so that a pipelined client would take it too', () => {
    expect(new PreludedQuery('SELECT 1', 'SELECT 2', [])).toBeInstanceOf(pg.Query);
  });
});
