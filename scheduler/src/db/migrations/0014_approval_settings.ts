import { type Kysely, sql } from 'kysely';

/**
 * Two tenant settings for the staff's own requests:
 *
 * - `offers_need_approval` (off by default): when on, a colleague taking an offered
 *   shift only marks the offer accepted, and an admin approves the move; when off, the
 *   seat moves at once, as a claim would.
 * - `time_off_needs_approval` (on by default, as leave is in most workplaces): when on,
 *   time off is requested and blocks nothing until an admin approves it; when off, it is
 *   approved as it is entered.
 */
const statements = [
  'ALTER TABLE tenant_settings ADD COLUMN offers_need_approval boolean NOT NULL DEFAULT false',
  'ALTER TABLE tenant_settings ADD COLUMN time_off_needs_approval boolean NOT NULL DEFAULT true',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
