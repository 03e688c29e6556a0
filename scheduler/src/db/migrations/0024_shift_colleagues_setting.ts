import { type Kysely, sql } from 'kysely';

/**
 * `shift_colleagues_visible` (off by default): when on, an employee on a shift sees who
 * else is on it, by name and role (`GET /shifts/{shift_id}/colleagues`); when off, only
 * admins do. Names of colleagues are personal data, so a tenant opts in.
 */
const statements = [
  'ALTER TABLE tenant_settings ADD COLUMN shift_colleagues_visible boolean NOT NULL DEFAULT false',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
