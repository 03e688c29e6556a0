import { type Kysely, sql } from 'kysely';

/**
 * Why an admin decided: `POST /offers/{id}/approve|reject` and `POST /time-off/{id}/approve|reject`
 * take an optional `reason`, stored as `decision_reason` and shown to the person concerned.
 * The API's rule held here too: one line (no line break, line or paragraph separator) of 1
 * to 500 characters, or null; and only on a decision an admin took (approved or rejected),
 * never on an offer still open, taken, cancelled or expired, nor on time off still requested.
 * Existing rows have no reason: null passes every check.
 */
const statements = [
  'ALTER TABLE offers ADD COLUMN decision_reason text',
  `ALTER TABLE offers ADD CONSTRAINT offers_decision_reason_shape
     CHECK (char_length(decision_reason) BETWEEN 1 AND 500 AND decision_reason !~ '[\\n\\r\\u2028\\u2029]')`,
  `ALTER TABLE offers ADD CONSTRAINT offers_decision_reason_decided
     CHECK (decision_reason IS NULL OR status IN ('approved', 'rejected'))`,
  'ALTER TABLE time_off ADD COLUMN decision_reason text',
  `ALTER TABLE time_off ADD CONSTRAINT time_off_decision_reason_shape
     CHECK (char_length(decision_reason) BETWEEN 1 AND 500 AND decision_reason !~ '[\\n\\r\\u2028\\u2029]')`,
  `ALTER TABLE time_off ADD CONSTRAINT time_off_decision_reason_decided
     CHECK (decision_reason IS NULL OR status IN ('approved', 'rejected'))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
