import { type Kysely, sql } from 'kysely';

/**
 * The form submit limit counted in the database (FORM_SUBMIT_LIMIT_STORE=database), shared
 * by every API process: one row per submission attempt, keyed by client address and slug,
 * kept for one window at most (src/forms/shared-submit-limit.ts). It holds no tenant's
 * records (the key is the address and the public slug), so it has no tenant wall; the
 * application may read, add and remove rows, nothing else.
 */
const statements = [
  `CREATE TABLE form_submit_hits (
     key  text NOT NULL CHECK (length(key) <= 1000),
     at   timestamptz NOT NULL
   )`,
  'CREATE INDEX form_submit_hits_key ON form_submit_hits (key, at)',
  'CREATE INDEX form_submit_hits_at ON form_submit_hits (at)',
  'GRANT SELECT, INSERT, DELETE ON form_submit_hits TO scheduler_app',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
