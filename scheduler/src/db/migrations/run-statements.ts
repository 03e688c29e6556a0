import { type Kysely, sql } from 'kysely';

/**
 * Runs a script of `;`-terminated statements one by one. PGlite's query path uses the
 * extended protocol, which takes a single statement, so a migration cannot send a
 * whole script at once. Statements must end with `;` at the end of a line, and no string literal may hold `--` (comments are stripped first).
 */
export async function runStatements(db: Kysely<unknown>, script: string): Promise<void> {
  const withoutComments = script.replace(/--[^\n]*/g, '');
  for (const statement of withoutComments.split(/;\s*(?:\n|$)/)) {
    if (statement.trim() !== '') await sql.raw(statement).execute(db);
  }
}
