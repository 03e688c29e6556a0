import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/database.ts';

/**
 * db/types.ts is written by hand for Kysely; this holds it to the migrated schema, on
 * whichever engine the run uses (PGlite or PostgreSQL): the same tables, the same
 * columns, the same nullability, and a TypeScript type that fits the column's SQL type.
 */
interface DeclaredColumn {
  nullable: boolean;
  /** The selected value's type without `null`, e.g. `string`, `boolean`, `'draft' | 'published'`. */
  type: string;
}

const typesFile = path.resolve(import.meta.dirname, '../../src/db/types.ts');

/** Column wrappers of db/types.ts and the value type each stands for. */
const aliases: Record<string, { base: string; nullable: boolean }> = {
  CreatedAt: { base: 'string', nullable: false },
  UpdatedAt: { base: 'string', nullable: false },
  Timestamp: { base: 'string', nullable: false },
  NullableTimestamp: { base: 'string', nullable: true },
  BigIntColumn: { base: 'number', nullable: false },
};

/** What a select returns for a column type: unwraps Generated<T>, ColumnType<Select, …>, Json<T>. */
function selectType(node: ts.TypeNode, source: ts.SourceFile): DeclaredColumn {
  if (ts.isTypeReferenceNode(node)) {
    const name = node.typeName.getText(source);
    const first = node.typeArguments?.[0];
    if ((name === 'Generated' || name === 'ColumnType') && first) return selectType(first, source);
    if (name === 'Json') return { nullable: false, type: 'json' };
    const alias = aliases[name];
    if (alias) return { nullable: alias.nullable, type: alias.base };
  }
  if (ts.isUnionTypeNode(node)) {
    const parts = node.types.filter(
      (t) => !(ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword),
    );
    const inner = parts.map((t) => selectType(t, source));
    return {
      nullable: parts.length < node.types.length || inner.some((t) => t.nullable),
      type: inner.map((t) => t.type).join(' | '),
    };
  }
  return { nullable: false, type: node.getText(source) };
}

function declaredTables(): Map<string, Map<string, DeclaredColumn>> {
  const source = ts.createSourceFile(
    typesFile,
    readFileSync(typesFile, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
  });
  const tables = new Map<string, Map<string, DeclaredColumn>>();
  for (const member of interfaces.get('Database')?.members ?? []) {
    if (!ts.isPropertySignature(member) || !member.type) continue;
    const tableName = member.name.getText(source);
    const shape = interfaces.get(member.type.getText(source));
    if (!shape) throw new Error(`no interface for table ${tableName}`);
    const columns = new Map<string, DeclaredColumn>();
    for (const column of shape.members) {
      if (!ts.isPropertySignature(column) || !column.type) continue;
      columns.set(column.name.getText(source), selectType(column.type, source));
    }
    tables.set(tableName, columns);
  }
  return tables;
}

/** The TypeScript value types a SQL type may be declared as (wire-types.ts decides several). */
function fits(sqlType: string, value: string): boolean {
  switch (sqlType) {
    case 'uuid':
    case 'timestamp with time zone':
      return value === 'string';
    case 'text':
      return value === 'string' || /^'[^']*'( \| '[^']*')*$/.test(value) || value === 'AccessRole';
    case 'boolean':
      return value === 'boolean';
    case 'integer':
    case 'bigint':
    case 'double precision':
      return value === 'number';
    case 'jsonb':
      return value === 'json' || value.startsWith('Record<') || value.endsWith('[]');
    case 'ARRAY':
      return value.endsWith('[]');
    default:
      return false;
  }
}

const db = useTestDatabase();

describe('db/types.ts against the migrated database', () => {
  it('declares exactly the tables and columns the migrations create, with their nullability and types', async () => {
    const { rows } = await sql<{
      table_name: string;
      column_name: string;
      is_nullable: string;
      data_type: string;
    }>`
      SELECT table_name, column_name, is_nullable, data_type
      FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%'
      ORDER BY table_name, ordinal_position`.execute(db.owner);
    const actual = new Map<string, Map<string, { nullable: boolean; sqlType: string }>>();
    for (const row of rows) {
      const table = actual.get(row.table_name) ?? new Map();
      table.set(row.column_name, { nullable: row.is_nullable === 'YES', sqlType: row.data_type });
      actual.set(row.table_name, table);
    }
    const declared = declaredTables();
    expect([...declared.keys()].sort()).toEqual([...actual.keys()].sort());
    for (const [table, columns] of actual) {
      const mine = declared.get(table) ?? new Map<string, DeclaredColumn>();
      expect([...mine.keys()].sort(), table).toEqual([...columns.keys()].sort());
      for (const [column, { nullable, sqlType }] of columns) {
        const declaredColumn = mine.get(column);
        expect(declaredColumn?.nullable, `${table}.${column} nullable`).toBe(nullable);
        expect(
          fits(sqlType, declaredColumn?.type ?? ''),
          `${table}.${column}: ${sqlType} as ${declaredColumn?.type}`,
        ).toBe(true);
      }
    }
  });
});
