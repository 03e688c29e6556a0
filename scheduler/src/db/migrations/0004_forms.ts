import { type Kysely, sql } from 'kysely';

/**
 * Customer forms as the API serves them:
 * - a pinned form keeps the customer claim as the admin typed it (`customer_claim`, shown
 *   back) next to the id it maps to (`customer_id`, compared with the caller's), and the
 *   two are set or cleared together; a submission keeps its customer's claim the same way;
 * - slugs are URL-safe (lowercase letters, digits, inner hyphens, 3 to 80 characters),
 *   globally unique already (0001), and `fields` is a JSON array;
 * - forms get `updated_at` for their edits.
 * Deleting a form removes its submissions (0001's cascade); events converted from them
 * stay, losing only their `submission_id` (0001's `SET NULL`).
 */
const statements = [
  'ALTER TABLE customer_forms ADD COLUMN customer_claim text',
  'ALTER TABLE customer_forms ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now()',
  `ALTER TABLE customer_forms ADD CONSTRAINT customer_forms_pin
     CHECK ((customer_id IS NULL) = (customer_claim IS NULL))`,
  `ALTER TABLE customer_forms ADD CONSTRAINT customer_forms_slug_format
     CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,78}[a-z0-9]$' AND slug NOT LIKE '%--%')`,
  `ALTER TABLE customer_forms ADD CONSTRAINT customer_forms_fields_array
     CHECK (jsonb_typeof(fields) = 'array')`,
  'ALTER TABLE form_submissions ADD COLUMN customer_claim text',
  `ALTER TABLE form_submissions ADD CONSTRAINT form_submissions_customer
     CHECK ((customer_id IS NULL) = (customer_claim IS NULL))`,
  `ALTER TABLE form_submissions ADD CONSTRAINT form_submissions_data_object
     CHECK (jsonb_typeof(data) = 'object')`,
  'CREATE INDEX customer_forms_tenant ON customer_forms (tenant_id, created_at)',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
