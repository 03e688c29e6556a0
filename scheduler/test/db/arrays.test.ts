import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { isAnyOf, type RowColumns, unnestRows } from '../../src/db/arrays.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { useTestDatabase } from '../support/database.ts';

/**
 * Lists and rows as arrays (src/db/arrays.ts), on this file's own database: every value
 * comes back as it went in, in order, in statements of a fixed number of parameters.
 */
const handle = useTestDatabase();

interface Row {
  id: string;
  label: string | null;
  n: number;
  flag: boolean;
  at: string | null;
  data: string | null;
}

const columns: RowColumns<Row> = [
  ['id', 'uuid'],
  ['label', 'text'],
  ['n', 'integer'],
  ['flag', 'boolean'],
  ['at', 'timestamptz'],
  ['data', 'jsonb'],
];

const labels = [
  'a,b',
  '"quoted"',
  '{braces}',
  'back\\slash',
  'NULL',
  '',
  null,
  ' spaced ',
  'line\nbreak',
  'Zürich 🎪',
  '{"data":{"shift_id":"x"}}',
];

describe('unnestRows', () => {
  it('gives back every row as it went in, in order, the empty string and null apart', async () => {
    const rows: Row[] = labels.map((label, i) => ({
      id: randomUUID().replaceAll('-', ''),
      label,
      n: i - 5,
      flag: i % 2 === 0,
      at: i === 3 ? null : new Date(Date.UTC(2030, 0, 1, i)).toISOString(),
      data: i === 4 ? null : JSON.stringify({ i, text: label, nested: { list: [1, '2', null] } }),
    }));
    for (const db of [handle.db, handle.owner]) {
      const { rows: back } = await sql<Row>`
        SELECT * FROM (${unnestRows(rows, columns)}) AS t(id, label, n, flag, at, data)`.execute(db);
      expect(back).toEqual(
        rows.map((row) => ({ ...row, data: row.data === null ? null : JSON.parse(row.data) })),
      );
    }
  });

  it('writes a missing value as NULL', async () => {
    const partial = [{ id: randomUUID() }] as unknown as Row[];
    const { rows } = await sql<Row>`
      SELECT * FROM (${unnestRows(partial, columns)}) AS t(id, label, n, flag, at, data)`.execute(handle.db);
    expect(rows).toEqual([
      { id: expect.any(String), label: null, n: null, flag: null, at: null, data: null },
    ]);
  });

  it('takes 20,000 rows in as many parameters as columns', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: randomUUID(), label: `r${i}`, n: i }));
    const query = sql<{ count: number; sum: number; last: string }>`
      SELECT count(*)::int AS count, sum(n)::int AS sum, max(label) FILTER (WHERE n = 19999) AS last
        FROM (${unnestRows(rows, [
          ['id', 'uuid'],
          ['label', 'text'],
          ['n', 'integer'],
        ])}) AS t(id, label, n)`;
    expect(query.compile(handle.db).parameters).toHaveLength(3);
    const { rows: result } = await query.execute(handle.db);
    expect(result).toEqual([{ count: 20_000, sum: (19_999 * 20_000) / 2, last: 'r19999' }]);
  });
});

describe('isAnyOf', () => {
  it('matches the rows whose column is one of the values, in one parameter; none for an empty list', async () => {
    const ids = Array.from({ length: 5000 }, () => randomUUID());
    await sql`INSERT INTO tenants (id, vapid_public_key, vapid_private_key)
              SELECT id, 'p', 'k' FROM unnest(${ids.slice(0, 3)}::uuid[]) AS u(id)`.execute(handle.owner);
    const query = handle.owner.selectFrom('tenants').select('id').where(isAnyOf('id', ids)).orderBy('id');
    expect(query.compile().parameters).toHaveLength(1);
    const found = (await query.execute()).map((row) => row.id);
    expect(found).toEqual(
      ids
        .slice(0, 3)
        .map((id) => id.replaceAll('-', ''))
        .sort(),
    );
    expect(await handle.owner.selectFrom('tenants').select('id').where(isAnyOf('id', [])).execute()).toEqual(
      [],
    );
  });

  it('compares as the type it is given', async () => {
    const { rows } = await sql<{ yes: boolean; no: boolean }>`
      SELECT ${isAnyOf('v.t', ['a,b', 'c'], 'text')} AS yes, ${isAnyOf('v.n', [1, 2], 'integer')} AS no
        FROM (VALUES ('a,b', 3)) AS v(t, n)`.execute(handle.db);
    expect(rows).toEqual([{ yes: true, no: false }]);
  });

  it('keeps the tenant wall: the application finds only its own tenant among the ids it names', async () => {
    const [mine, theirs] = [randomUUID(), randomUUID()];
    await sql`INSERT INTO tenants (id, vapid_public_key, vapid_private_key)
              SELECT id, 'p', 'k' FROM unnest(${[mine, theirs]}::uuid[]) AS u(id)`.execute(handle.owner);
    const found = await asTenant(mine, () =>
      handle.db
        .selectFrom('tenants')
        .select('id')
        .where(isAnyOf('id', [mine, theirs]))
        .execute(),
    );
    expect(found).toEqual([{ id: mine.replaceAll('-', '') }]);
  });
});
