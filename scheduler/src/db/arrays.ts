import { type RawBuilder, sql } from 'kysely';

/**
 * Many values in a fixed number of bind parameters: one array per list or column, whatever
 * its length, so that no statement's parameter count grows with its input (the drivers
 * refuse one above MAX_STATEMENT_PARAMETERS, src/db/drivers.ts). pg and PGlite both send
 * a JavaScript array as one array parameter; uuids go in their wire form or hyphenated.
 */

/** The element types the arrays below are cast to. */
export type ElementType = 'uuid' | 'text' | 'integer' | 'boolean' | 'timestamptz' | 'jsonb';

const arrayOf = (values: readonly unknown[], type: ElementType) =>
  // jsonb travels as text and is cast per element (below): the drivers serialise a text
  // array alike, whatever the text holds.
  sql`${[...values]}::${sql.raw(type === 'jsonb' ? 'text' : type)}[]`;

/** `column = ANY($1::type[])`: whether the column's value is one of `values`, in one parameter. */
export function isAnyOf(
  column: string,
  values: readonly unknown[],
  type: ElementType = 'uuid',
): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} = ANY(${arrayOf(values, type)})`;
}

/** The columns of rows in the order an INSERT names them, each with its element type. */
export type RowColumns<Row> = readonly (readonly [keyof Row & string, ElementType])[];

/**
 * `SELECT … FROM unnest($1::uuid[], $2::text[], …)`: the rows as a table, one array per
 * column (as many parameters as columns), in the order `columns` gives; the source of an
 * `insertInto(…).columns(…).expression(…)` naming the same columns in the same order.
 * A missing or undefined value is NULL; jsonb values are JSON text.
 */
export function unnestRows<Row>(rows: readonly Row[], columns: RowColumns<Row>): RawBuilder<unknown> {
  const alias = (index: number) => sql.ref(`u.c${index}`);
  return sql`SELECT ${sql.join(
    columns.map(([, type], index) => (type === 'jsonb' ? sql`${alias(index)}::jsonb` : alias(index))),
  )} FROM unnest(${sql.join(
    columns.map(([name, type]) =>
      arrayOf(
        rows.map((row) => row[name] ?? null),
        type,
      ),
    ),
  )}) AS u(${sql.join(columns.map((_, index) => sql.ref(`c${index}`)))})`;
}
