import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { lengthChecks } from '../../src/db/migrations/0013_length_checks.ts';

/**
 * Runs `write` as a database written before the length checks of migration 0013 would
 * have taken it: the checks are dropped, `write` stores its over-long shifts or time
 * entries, and the checks are added back `NOT VALID`, as the migration added them over
 * such a database (the rows stay, new and updated rows are checked). Through the owner's
 * view, between requests (the tables are locked meanwhile on PostgreSQL).
 */
export async function asLegacyRows<T>(owner: Db, write: () => Promise<T>): Promise<T> {
  const checks = Object.entries(lengthChecks).flatMap(([table, byName]) =>
    Object.entries(byName).map(([name, condition]) => ({ table, name, condition })),
  );
  for (const { table, name } of checks) {
    await sql.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${name}`).execute(owner);
  }
  try {
    return await write();
  } finally {
    for (const { table, name, condition } of checks) {
      await sql
        .raw(`ALTER TABLE ${table} ADD CONSTRAINT ${name} CHECK (${condition}) NOT VALID`)
        .execute(owner);
    }
  }
}
