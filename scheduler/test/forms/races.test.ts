import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { raceAgainst } from '../support/held-racer.ts';
import { created, tenantOf } from '../support/scheduling.ts';

/** Submitting to, or converting from, a form deleted meanwhile: 404, never 500, nothing left behind. */
const t = useRouteTests();

async function formWithSubmission() {
  const form = await created(t.admin, '/api/v1/forms', {
    title: 'Catering',
    fields: [{ name: 'contact', label: 'Name', type: 'text', required: true }],
  });
  const customer = await t.ctx.caller('customer', tenantOf(t.admin), `cust-${form.id}`);
  const submission = await created(customer, `/api/v1/f/${form.slug}/submit`, { data: { contact: 'Dana' } });
  return { form, customer, submission };
}

describe('a form deleted while it is used', () => {
  it('answers 404 to a submission racing the delete', async () => {
    const { form, customer } = await formWithSubmission();
    const answer = await raceAgainst(
      t.ctx.db.owner,
      (trx) => trx.deleteFrom('customer_forms').where('id', '=', form.id).execute(),
      () => customer.request('POST', `/api/v1/f/${form.slug}/submit`, { data: { contact: 'Eve' } }),
    );
    expect(answer.json(), answer.body).toEqual({ error: { code: 'NOT_FOUND', message: 'form not found' } });
  });

  it('answers 404 to a conversion racing the delete, and creates no event', async () => {
    const { form, submission } = await formWithSubmission();
    const answer = await raceAgainst(
      t.ctx.db.owner,
      (trx) => trx.deleteFrom('customer_forms').where('id', '=', form.id).execute(),
      () =>
        t.admin.request('POST', `/api/v1/forms/${form.id}/submissions/${submission.id}/convert`, {
          name: 'Dinner',
          starts_at: '2030-01-01T18:00:00Z',
          ends_at: '2030-01-01T23:00:00Z',
        }),
    );
    expect(answer.json(), answer.body).toEqual({
      error: { code: 'NOT_FOUND', message: 'submission not found' },
    });
    expect((await t.admin.request('GET', '/api/v1/events')).json()).toEqual([]);
  });
});
