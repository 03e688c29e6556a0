import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { FormField } from '../db/types.ts';
import type { CustomerForm, FormSubmission } from './schemas.ts';

const formColumns = [
  'id',
  'tenant_id',
  'slug',
  'title',
  'fields',
  'customer_claim',
  'created_at',
  'updated_at',
] as const;

type FormRow = Omit<CustomerForm, 'customer_id'> & { customer_claim: string | null };

/** The form as the API shows it: the pin as the admin typed it. */
const toForm = ({ customer_claim, ...row }: FormRow): CustomerForm => ({
  ...row,
  customer_id: customer_claim,
});

/** A form with the id its pin maps to, for the access check. */
export type StoredForm = CustomerForm & { customerKey: string | null };

export interface FormValues {
  title: string;
  slug: string;
  fields: FormField[];
  customer_id: string | null;
  customer_claim: string | null;
}

export async function listForms(db: Db, tenantId: string): Promise<CustomerForm[]> {
  const rows = await db
    .selectFrom('customer_forms')
    .select(formColumns)
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toForm);
}

export async function findForm(db: Db, tenantId: string, id: string): Promise<CustomerForm | undefined> {
  const row = await db
    .selectFrom('customer_forms')
    .select(formColumns)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && toForm(row);
}

/** By slug across every tenant: the public surface resolves the form before the tenant. */
/**
 * The tenant a public form's slug belongs to. The form surface resolves a slug across
 * tenants by design (another tenant's form is 403, not 404), through the narrow function
 * of migration 0006 that answers only the tenant id.
 */
export async function formTenant(db: Db, slug: string): Promise<string | undefined> {
  const { rows } = await sql<{ tenant_id: string | null }>`SELECT form_tenant(${slug}) AS tenant_id`.execute(
    db,
  );
  return rows[0]?.tenant_id ?? undefined;
}

/** A form of the running tenant scope by its slug. */
export async function findFormBySlug(db: Db, slug: string): Promise<StoredForm | undefined> {
  const row = await db
    .selectFrom('customer_forms')
    .select([...formColumns, 'customer_id'])
    .where('slug', '=', slug)
    .executeTakeFirst();
  if (!row) return undefined;
  const { customer_id, ...rest } = row;
  return { ...toForm(rest), customerKey: customer_id };
}

export async function insertForm(
  db: Db,
  tenantId: string,
  id: string,
  values: FormValues,
): Promise<CustomerForm> {
  const row = await db
    .insertInto('customer_forms')
    .values({ tenant_id: tenantId, id, ...values, fields: JSON.stringify(values.fields) })
    .returning(formColumns)
    .executeTakeFirstOrThrow();
  return toForm(row);
}

export async function updateForm(
  db: Db,
  tenantId: string,
  id: string,
  values: Partial<FormValues>,
): Promise<CustomerForm | undefined> {
  const { fields, ...rest } = values;
  const row = await db
    .updateTable('customer_forms')
    .set({
      ...rest,
      ...(fields ? { fields: JSON.stringify(fields) } : {}),
      updated_at: sql<string>`now()`,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(formColumns)
    .executeTakeFirst();
  return row && toForm(row);
}

export async function deleteForm(db: Db, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('customer_forms')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

function submissions(db: Db, tenantId: string) {
  return db
    .selectFrom('form_submissions as s')
    .leftJoin('events as e', (join) =>
      join.onRef('e.tenant_id', '=', 's.tenant_id').onRef('e.submission_id', '=', 's.id'),
    )
    .select([
      's.id',
      's.tenant_id',
      's.form_id',
      's.data',
      's.customer_claim as customer_id',
      'e.id as event_id',
      's.created_at',
    ])
    .where('s.tenant_id', '=', tenantId);
}

/** Newest first, each with the event it became, if any. */
export function listSubmissions(db: Db, tenantId: string, formId: string): Promise<FormSubmission[]> {
  return submissions(db, tenantId)
    .where('s.form_id', '=', formId)
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id', 'desc')
    .execute();
}

export function findSubmission(
  db: Db,
  tenantId: string,
  formId: string,
  id: string,
): Promise<FormSubmission | undefined> {
  return submissions(db, tenantId).where('s.form_id', '=', formId).where('s.id', '=', id).executeTakeFirst();
}

export interface SubmissionValues {
  tenant_id: string;
  id: string;
  form_id: string;
  data: Record<string, unknown>;
  submitted_by: string;
  customer_id: string | null;
  customer_claim: string | null;
}

export async function insertSubmission(db: Db, values: SubmissionValues): Promise<FormSubmission> {
  const row = await db
    .insertInto('form_submissions')
    .values({ ...values, data: JSON.stringify(values.data) })
    .returning(['id', 'tenant_id', 'form_id', 'data', 'customer_claim', 'created_at'])
    .executeTakeFirstOrThrow();
  const { customer_claim, ...rest } = row;
  return { ...rest, customer_id: customer_claim, event_id: null };
}
