import { randomBytes } from 'node:crypto';
import type { Identity } from '../auth/identity.ts';
import { claimToUuid } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, forbidden, notFound } from '../errors.ts';
import type { Event } from '../events/schemas.ts';
import { createEvent } from '../events/service.ts';
import { newId } from '../ids.ts';
import { requiredText } from '../input/text.ts';
import {
  deleteForm,
  type FormValues,
  findForm,
  findFormBySlug,
  findSubmission,
  formTenant,
  insertForm,
  insertSubmission,
  listForms,
  listSubmissions,
  type StoredForm,
  updateForm,
} from './repository.ts';
import type {
  ConvertSubmissionRequest,
  CreateFormRequest,
  CustomerForm,
  FormSubmission,
  SubmitFormRequest,
  UpdateFormRequest,
} from './schemas.ts';
import { checkFields, checkSubmission } from './submission-data.ts';
import { submissionText } from './submission-text.ts';

const duplicateSlug = (slug: string) =>
  new AppError('DUPLICATE', `a form with the slug "${slug}" already exists`);

/** A slug from the title (ASCII letters and digits), with a random tail so it is hard to guess. */
function generatedSlug(title: string): string {
  const base = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return `${base || 'form'}-${randomBytes(5).toString('hex')}`;
}

/**
 * The pin exactly as typed (a claim value is compared as the provider issues it, so it is
 * not trimmed), and the id it maps to by the rule the customer's own token follows.
 */
function pin(caller: Identity, claim: string | null | undefined) {
  const value = claim ?? null;
  return { customer_claim: value, customer_id: value === null ? null : claimToUuid(caller.issuer, value) };
}

export function getForms(deps: Deps, caller: Identity): Promise<CustomerForm[]> {
  return listForms(deps.db, caller.tenantId);
}

export async function getForm(deps: Deps, caller: Identity, id: string): Promise<CustomerForm> {
  const form = await findForm(deps.db, caller.tenantId, id);
  if (!form) throw notFound('form');
  return form;
}

export async function createForm(
  deps: Deps,
  caller: Identity,
  input: CreateFormRequest,
): Promise<CustomerForm> {
  const title = requiredText('title', input.title);
  const values: FormValues = {
    title,
    slug: input.slug ?? generatedSlug(title),
    fields: checkFields(input.fields),
    ...pin(caller, input.customer_id),
  };
  try {
    return await unitOfWork(deps, caller, 'form.created', async (tx) => {
      const form = await insertForm(tx.db, caller.tenantId, newId(), values);
      await tx.record({ type: 'form.created', formId: form.id });
      return form;
    });
  } catch (error) {
    if (isUniqueViolation(error, 'customer_forms_slug_key')) throw duplicateSlug(values.slug);
    throw error;
  }
}

export async function changeForm(
  deps: Deps,
  caller: Identity,
  id: string,
  input: UpdateFormRequest,
): Promise<CustomerForm> {
  const values: Partial<FormValues> = {
    ...(input.title !== undefined ? { title: requiredText('title', input.title) } : {}),
    ...(input.slug !== undefined ? { slug: input.slug } : {}),
    ...(input.fields !== undefined ? { fields: checkFields(input.fields) } : {}),
    ...(input.customer_id !== undefined ? pin(caller, input.customer_id) : {}),
  };
  try {
    const form = await unitOfWork(deps, caller, 'form.updated', async (tx) => {
      const form = await updateForm(tx.db, caller.tenantId, id, values);
      if (form) await tx.record({ type: 'form.updated', formId: id });
      return form;
    });
    if (!form) throw notFound('form');
    return form;
  } catch (error) {
    if (isUniqueViolation(error, 'customer_forms_slug_key')) throw duplicateSlug(input.slug ?? '');
    throw error;
  }
}

/** Removes the form and its submissions; events converted from them stay. */
export async function removeForm(deps: Deps, caller: Identity, id: string): Promise<void> {
  const deleted = await unitOfWork(deps, caller, 'form.deleted', async (tx) => {
    const deleted = await deleteForm(tx.db, caller.tenantId, id);
    if (deleted) await tx.record({ type: 'form.deleted', formId: id });
    return deleted;
  });
  if (!deleted) throw notFound('form');
}

export async function getSubmissions(
  deps: Deps,
  caller: Identity,
  formId: string,
): Promise<FormSubmission[]> {
  await getForm(deps, caller, formId);
  return listSubmissions(deps.db, caller.tenantId, formId);
}

/**
 * Turns a submission into a draft event, once. Without a `description` (absent, not
 * null) the event describes the submission: its answers under the form's labels.
 */
export async function convertSubmission(
  deps: Deps,
  caller: Identity,
  formId: string,
  submissionId: string,
  input: ConvertSubmissionRequest,
): Promise<Event> {
  const submission = await findSubmission(deps.db, caller.tenantId, formId, submissionId);
  if (!submission) throw notFound('submission');
  const converted = () => new AppError('INVALID_STATE', 'the submission was converted into an event already');
  if (submission.event_id) throw converted();
  const description =
    input.description !== undefined
      ? input.description
      : submissionText(
          (await findForm(deps.db, caller.tenantId, formId))?.fields ?? [],
          submission.data,
          submissionId,
        );
  try {
    return await createEvent(deps, caller, { ...input, description }, submissionId);
  } catch (error) {
    // A concurrent convert won: one event per submission (unique key).
    if (isUniqueViolation(error, 'events_tenant_id_submission_id_key')) throw converted();
    throw error;
  }
}

/**
 * The public form surface: the slug is looked up across tenants, then the caller must
 * belong to the form's tenant, and to a pinned form's customer unless they are one of
 * the tenant's admins. Both refusals are the same 403.
 */
async function reachableForm(deps: Deps, caller: Identity, slug: string): Promise<StoredForm> {
  const tenantId = await formTenant(deps.db, slug);
  if (!tenantId) throw notFound('form');
  if (tenantId !== caller.tenantId) throw forbidden();
  const form = await findFormBySlug(deps.db, slug);
  // Deleted since the lookup.
  if (!form) throw notFound('form');
  // A pinned form is its customer's (a customer token with the same claim) and the
  // admins'; an employee is refused whatever claims their token carries.
  if (form.customerKey !== null && caller.role !== 'admin') {
    if (caller.role !== 'customer' || caller.customerId !== form.customerKey) throw forbidden();
  }
  return form;
}

export async function getPublicForm(deps: Deps, caller: Identity, slug: string): Promise<CustomerForm> {
  const { customerKey: _, ...form } = await reachableForm(deps, caller, slug);
  return form;
}

/**
 * A customer's submission. Counted against the submit limit of the client address and
 * slug once the form is reachable, before its data is checked: invalid attempts count
 * too, so the limit also bounds probing.
 */
export async function submitForm(
  deps: Deps,
  caller: Identity,
  slug: string,
  input: SubmitFormRequest,
  clientIp: string,
): Promise<FormSubmission> {
  const form = await reachableForm(deps, caller, slug);
  const answer = await deps.submitLimiter.take(`${clientIp}\n${slug}`, deps.clock.now().getTime());
  if (!answer.allowed) {
    const seconds = Math.max(1, Math.ceil(answer.retryAfterMs / 1000));
    throw new AppError('RATE_LIMITED', `too many submissions; try again in ${seconds} s`, {
      'retry-after': String(seconds),
    });
  }
  const data = checkSubmission(form.fields, input.data);
  try {
    return await unitOfWork(
      deps,
      { tenantId: form.tenant_id, userId: caller.userId },
      'form.submitted',
      async (tx) => {
        const submission = await insertSubmission(tx.db, {
          tenant_id: form.tenant_id,
          id: newId(),
          form_id: form.id,
          data,
          submitted_by: caller.userId,
          // Only a customer's own claim names the customer of a submission.
          customer_id: caller.role === 'customer' ? caller.customerId : null,
          customer_claim: caller.role === 'customer' ? caller.customerClaim : null,
        });
        await tx.record({ type: 'form.submitted', submission });
        return submission;
      },
    );
  } catch (error) {
    // The form was deleted since it was read.
    if (isForeignKeyViolation(error, 'form_submissions_tenant_id_form_id_fkey')) throw notFound('form');
    throw error;
  }
}
