import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  isCheckViolation,
  isExclusionViolation,
  isForeignKeyViolation,
  isUniqueViolation,
} from '../../src/db/errors.ts';
import { runSql, useTestDatabase } from '../support/database.ts';

/**
 * A refusal of the database is recognised by the constraint it names, never by its kind
 * alone: any key of any table a statement touches (a trigger's audit row, the outbox, the
 * ledger, a key a later migration adds) refuses with the same SQLSTATE.
 */
describe('recognising a refusal', () => {
  const refusal = (code: string, constraint?: string) =>
    Object.assign(new Error('refused'), { code, constraint });

  it.each([
    ['isUniqueViolation', isUniqueViolation, '23505'],
    ['isForeignKeyViolation', isForeignKeyViolation, '23503'],
    ['isForeignKeyViolation (RESTRICT, PostgreSQL 17)', isForeignKeyViolation, '23001'],
    ['isCheckViolation', isCheckViolation, '23514'],
    ['isExclusionViolation', isExclusionViolation, '23P01'],
  ] as const)('%s: only the constraint named, or one of the list', (_name, is, code) => {
    expect(is(refusal(code, 'a_key'), 'a_key')).toBe(true);
    expect(is(refusal(code, 'a_key'), ['other_key', 'a_key'])).toBe(true);
    expect(is(refusal(code, 'audit_log_pkey'), 'a_key')).toBe(false);
    expect(is(refusal(code, 'audit_log_pkey'), ['other_key', 'a_key'])).toBe(false);
    expect(is(refusal(code, 'a_key'), [])).toBe(false);
    // A refusal that names no constraint is nobody's.
    expect(is(refusal(code), 'a_key')).toBe(false);
    // Another class of refusal under the same name.
    expect(is(refusal('40001', 'a_key'), 'a_key')).toBe(false);
    expect(is(new Error('a_key'), 'a_key')).toBe(false);
    expect(is(undefined, 'a_key')).toBe(false);
  });
});

type Kind = 'unique' | 'foreign key' | 'check' | 'exclusion';
const kinds: Record<string, Kind> = {
  isUniqueViolation: 'unique',
  isForeignKeyViolation: 'foreign key',
  isCheckViolation: 'check',
  isExclusionViolation: 'exclusion',
};

const src = path.resolve(import.meta.dirname, '../../src');
const sources = (readdirSync(src, { recursive: true }) as string[])
  .filter((file) => file.endsWith('.ts') && !file.startsWith(`db${path.sep}migrations`))
  .map((file) => ({
    file: file.split(path.sep).join('/'),
    source: ts.createSourceFile(
      file,
      readFileSync(path.join(src, file), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    ),
  }));

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

/** Every `const <name> = <initializer>` of src/, by name: the lists call sites share. */
const constants = new Map<string, ts.Expression[]>();
for (const { source } of sources) {
  walk(source, (node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      constants.set(node.name.text, [...(constants.get(node.name.text) ?? []), node.initializer]);
    }
  });
}

/** The constraint names an argument spells: literals, lists of them, constants holding them. */
function namesOf(node: ts.Expression, where: string): string[] {
  if (ts.isStringLiteralLike(node)) return [node.text];
  if (ts.isAsExpression(node) || ts.isParenthesizedExpression(node)) return namesOf(node.expression, where);
  if (ts.isArrayLiteralExpression(node)) {
    return node.elements.flatMap((element) =>
      ts.isSpreadElement(element) ? namesOf(element.expression, where) : namesOf(element, where),
    );
  }
  if (ts.isIdentifier(node)) {
    const definitions = constants.get(node.text);
    if (definitions) return definitions.flatMap((definition) => namesOf(definition, where));
  }
  throw new Error(
    `${where}: name the constraint with a literal or a constant list of them, not ${node.getText()}`,
  );
}

/** Every constraint named by a call of the four functions in src/, with its kind and place. */
function namedConstraints(): { kind: Kind; name: string; where: string }[] {
  const found: { kind: Kind; name: string; where: string }[] = [];
  for (const { file, source } of sources) {
    if (file === 'db/errors.ts') continue;
    walk(source, (node) => {
      if (!ts.isCallExpression(node) || !ts.isIdentifier(node.expression)) return;
      const kind = kinds[node.expression.text];
      if (!kind) return;
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const where = `src/${file}:${line}`;
      const argument = node.arguments[1];
      if (!argument) throw new Error(`${where}: ${node.expression.text} without a constraint`);
      for (const name of namesOf(argument, where)) found.push({ kind, name, where });
    });
  }
  return found;
}

/**
 * The names the migrated schema has, by kind. A unique one is a unique or primary key or
 * a unique index (a partial one has no constraint); a check is a CHECK constraint or the
 * name a trigger's function raises check_violation under (`CONSTRAINT = '<name>'`).
 */
async function catalogue(owner: Parameters<typeof runSql>[0]): Promise<Record<Kind, Set<string>>> {
  const rows = async (statement: string) =>
    new Set((await runSql(owner, statement)).rows.map((row) => (row as { name: string }).name));
  const raisedChecks = new Set<string>();
  for (const name of await rows(
    `SELECT p.prosrc AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public'`,
  )) {
    for (const match of name.matchAll(/CONSTRAINT\s*=\s*'([a-z0-9_]+)'/gi))
      raisedChecks.add(match[1] as string);
  }
  const constraints = (types: string) =>
    `SELECT c.conname AS name FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = 'public' AND c.contype IN (${types})`;
  return {
    unique: new Set([
      ...(await rows(constraints(`'u', 'p'`))),
      ...(await rows(
        `SELECT i.relname AS name FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
           JOIN pg_namespace n ON n.oid = i.relnamespace
          WHERE n.nspname = 'public' AND x.indisunique`,
      )),
    ]),
    'foreign key': await rows(constraints(`'f'`)),
    check: new Set([...(await rows(constraints(`'c'`))), ...raisedChecks]),
    exclusion: await rows(constraints(`'x'`)),
  };
}

describe('the constraints the services name', () => {
  const handle = useTestDatabase();

  it('are found in the sources: every call names one, literally or through a constant list', () => {
    const names = namedConstraints();
    // The reading works: it finds the call sites of every kind.
    for (const kind of Object.values(kinds)) expect(names.some((named) => named.kind === kind)).toBe(true);
    expect(names.map((named) => named.name)).toContain('roles_tenant_id_name_key');
  });

  it('exist in the migrated schema, each of the kind its refusal is recognised as', async () => {
    const schema = await catalogue(handle.owner);
    const missing = namedConstraints()
      .filter(({ kind, name }) => !schema[kind].has(name))
      .map(({ kind, name, where }) => `${where}: no ${kind} constraint ${name}`);
    expect(missing).toEqual([]);
  });

  it('would report a name the schema lacks (the check itself works)', async () => {
    const schema = await catalogue(handle.owner);
    expect(schema.unique.has('roles_tenant_id_name_key')).toBe(true);
    expect(schema.unique.has('offers_one_live')).toBe(true);
    expect(schema['foreign key'].has('roles_tenant_id_name_key')).toBe(false);
    expect(schema.check.has('time_entries_shift_ended')).toBe(true);
    expect(schema.unique.has('roles_name_key')).toBe(false);
  });
});
