import { describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import { created, tenantOf } from '../support/scheduling.ts';

/** Customer forms: the admin side, the public surface and conversion into events. */
const t = useRouteTests();

const hex32 = /^[0-9a-f]{32}$/;
const fields = [
  { name: 'contact', label: 'Your name', type: 'text', required: true },
  { name: 'email', label: 'Email', type: 'email', required: true },
  { name: 'phone', label: 'Phone', type: 'tel' },
  { name: 'day', label: 'Date', type: 'date', required: true },
  { name: 'guests', label: 'Guests', type: 'number' },
  { name: 'notes', label: 'Notes', type: 'textarea' },
  { name: 'menu', label: 'Menu', type: 'select', required: true, options: ['Buffet', 'Seated dinner'] },
];
const goodData = {
  contact: '  Dana Fox ',
  email: 'dana@example.com',
  day: '2027-06-12',
  menu: 'Buffet',
  guests: 80,
};

async function newForm(extra: Record<string, unknown> = {}) {
  return created(t.admin, '/api/v1/forms', { title: 'Catering request', fields, ...extra });
}
const customerOf = (admin: Caller, claim: string | null = 'c-1', sub = uniqueName('cust')) =>
  t.ctx.caller('customer', tenantOf(admin), sub, claim === null ? {} : { customer: claim });

describe('admin forms', () => {
  it('creates a form (201) with a slug made from the title, and lists and reads it', async () => {
    const form = await newForm();
    expect(form).toEqual({
      id: expect.stringMatching(hex32),
      tenant_id: t.admin.tenantId,
      slug: expect.stringMatching(/^catering-request-[0-9a-f]{10}$/),
      title: 'Catering request',
      fields: fields.map((field) => ({ required: false, ...field })),
      customer_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await t.admin.request('GET', '/api/v1/forms')).json()).toEqual([form]);
    expect((await t.admin.request('GET', `/api/v1/forms/${form.id}`)).json()).toEqual(form);
    const untitled = await newForm({ title: 'Ünïcôdé ✓' });
    expect(untitled.slug).toMatch(/^unicode-[0-9a-f]{10}$/);
    const symbols = await newForm({ title: '✓✓✓' });
    expect(symbols.slug).toMatch(/^form-[0-9a-f]{10}$/);
    const spaced = await newForm({ title: '  --Grand  Opening!! Night--  ' });
    expect(spaced.slug).toMatch(/^grand-opening-night-[0-9a-f]{10}$/);
    // Cut at 60 characters, where a separator would end the title's part with a dash.
    const long = await newForm({ title: `${'a'.repeat(59)} ${'b'.repeat(20)}` });
    expect(long.slug).toMatch(/^a{59}-[0-9a-f]{10}$/);
  });

  it('takes a chosen slug, unique across every tenant (409 DUPLICATE)', async () => {
    const slug = uniqueName('wedding');
    expect((await newForm({ slug })).slug).toBe(slug);
    const again = await t.otherAdmin.request('POST', '/api/v1/forms', { title: 'Mine', fields, slug });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({
      error: { code: 'DUPLICATE', message: `a form with the slug "${slug}" already exists` },
    });
  });

  it.each([
    [{ title: '   ' }, 'title: must not be blank'],
    [{ fields: [] }, 'fields'],
    [{ fields: [fields[0], { ...fields[0], label: 'Again' }] }, 'fields[1].name: "contact" is used twice'],
    [
      { fields: [{ name: 'menu', label: 'Menu', type: 'select' }] },
      'fields[0].options: a select field needs options',
    ],
    [
      { fields: [{ name: 'a', label: 'A', type: 'text', options: ['x'] }] },
      'fields[0].options: only select fields have options',
    ],
    [{ fields: [{ name: 'a', label: 'A', type: 'file' }] }, 'fields[0].type'],
    [{ fields: [{ name: 'Bad Name', label: 'A', type: 'text' }] }, 'fields[0].name'],
    [{ fields: [{ name: 'a', label: 'A', type: 'text', hint: 'x' }] }, 'fields[0].hint'],
    [{ slug: 'Has Caps' }, 'slug'],
    [{ slug: 'a--b' }, 'slug'],
    [{ slug: '-ab' }, 'slug'],
    [{ slug: 'ab' }, 'slug'],
    [{ customer_id: '' }, 'customer_id'],
  ])('refuses %j with 422 (%s)', async (body, message) => {
    const response = await t.admin.request('POST', '/api/v1/forms', { title: 'T', fields, ...body });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    expect(response.json().error.message).toContain(message);
    expect((await t.admin.request('GET', '/api/v1/forms')).json()).toEqual([]);
  });

  it('changes a form in part, and unpins it with customer_id null', async () => {
    const form = await newForm({ customer_id: 'c-1' });
    expect(form.customer_id).toBe('c-1');
    const changed = await t.admin.request('PATCH', `/api/v1/forms/${form.id}`, {
      title: '  Catering 2027 ',
      fields: [fields[0]],
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({
      id: form.id,
      slug: form.slug,
      title: 'Catering 2027',
      fields: [fields[0]],
      customer_id: 'c-1',
    });
    const unpinned = await t.admin.request('PATCH', `/api/v1/forms/${form.id}`, { customer_id: null });
    expect(unpinned.json().customer_id).toBeNull();
    const taken = await newForm();
    const clash = await t.admin.request('PATCH', `/api/v1/forms/${form.id}`, { slug: taken.slug });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().error.code).toBe('DUPLICATE');
  });

  it('refuses (422) an empty change, as every partial update does, and changes nothing', async () => {
    const form = await newForm({ customer_id: 'c-1' });
    const before = (await t.admin.request('GET', `/api/v1/forms/${form.id}`)).json();
    const response = await t.admin.request('PATCH', `/api/v1/forms/${form.id}`, {});
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'body: must NOT have fewer than 1 properties' },
    });
    expect((await t.admin.request('GET', `/api/v1/forms/${form.id}`)).json()).toEqual(before);
  });

  it('deletes a form with its submissions and keeps the events made from them', async () => {
    const form = await newForm();
    const customer = await customerOf(t.admin);
    const submission = await created(customer, `/api/v1/f/${form.slug}/submit`, { data: goodData });
    const event = await created(t.admin, `/api/v1/forms/${form.id}/submissions/${submission.id}/convert`, {
      name: 'Fox wedding',
      starts_at: '2027-06-12T15:00:00Z',
      ends_at: '2027-06-13T01:00:00Z',
    });
    expect((await t.admin.request('DELETE', `/api/v1/forms/${form.id}`)).statusCode).toBe(204);
    expect((await t.admin.request('GET', `/api/v1/forms/${form.id}`)).statusCode).toBe(404);
    expect((await customer.request('GET', `/api/v1/f/${form.slug}`)).statusCode).toBe(404);
    const kept = await t.admin.request('GET', `/api/v1/events/${event.id}`);
    expect(kept.statusCode).toBe(200);
    expect(kept.json()).toMatchObject({ name: 'Fox wedding', submission_id: null });
    expect((await t.admin.request('DELETE', `/api/v1/forms/${form.id}`)).statusCode).toBe(404);
  });

  it('is for admins: employees and customers get the fixed 403', async () => {
    const form = await newForm();
    const customer = await customerOf(t.admin);
    for (const caller of [t.employee, customer]) {
      for (const [method, url] of [
        ['GET', '/api/v1/forms'],
        ['GET', `/api/v1/forms/${form.id}`],
        ['DELETE', `/api/v1/forms/${form.id}`],
        ['GET', `/api/v1/forms/${form.id}/submissions`],
      ] as const) {
        const response = await caller.request(method, url);
        expect(response.statusCode, `${method} ${url}`).toBe(403);
        expect(response.json()).toEqual(FORBIDDEN_BODY);
      }
    }
    expect((await t.admin.request('GET', `/api/v1/forms/${form.id}`)).statusCode).toBe(200);
  });
});

describe('the public form surface /f/{slug}', () => {
  it('shows the form to callers of its tenant and 403 to another tenant’s', async () => {
    const form = await newForm();
    for (const caller of [await customerOf(t.admin), t.employee, t.admin, await customerOf(t.admin, null)]) {
      const response = await caller.request('GET', `/api/v1/f/${form.slug}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(form);
    }
    for (const caller of [t.otherAdmin, await customerOf(t.otherAdmin)]) {
      for (const [method, url, body] of [
        ['GET', `/api/v1/f/${form.slug}`, undefined],
        ['POST', `/api/v1/f/${form.slug}/submit`, { data: goodData }],
      ] as const) {
        const response = await caller.request(method, url, body);
        expect(response.statusCode, url).toBe(403);
        expect(response.json()).toEqual(FORBIDDEN_BODY);
      }
    }
    expect((await t.admin.request('GET', `/api/v1/forms/${form.id}/submissions`)).json()).toEqual([]);
  });

  it('answers 404 for an unknown or impossible slug', async () => {
    const customer = await customerOf(t.admin);
    for (const slug of ['no-such-form-here', 'UPPER', 'a', 'x'.repeat(81), '%00']) {
      const response = await customer.request('GET', `/api/v1/f/${slug}`);
      expect(response.statusCode, slug).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'form not found' } });
      expect((await customer.request('POST', `/api/v1/f/${slug}/submit`, { data: {} })).statusCode).toBe(404);
    }
  });

  it('opens a pinned form to its customer and the tenant’s admins only', async () => {
    const form = await newForm({ customer_id: 'c-1' });
    const url = `/api/v1/f/${form.slug}`;
    expect((await (await customerOf(t.admin, 'c-1')).request('GET', url)).statusCode).toBe(200);
    expect((await t.admin.request('GET', url)).statusCode).toBe(200);
    for (const caller of [
      await customerOf(t.admin, 'c-2'),
      await customerOf(t.admin, 'C-1'),
      await customerOf(t.admin, ' c-1'),
      await customerOf(t.admin, null),
      t.employee,
      // An employee whose token happens to carry the very customer claim: still 403.
      await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('emp'), { customer: 'c-1' }),
    ]) {
      expect((await caller.request('GET', url)).json()).toEqual(FORBIDDEN_BODY);
      expect((await caller.request('POST', `${url}/submit`, { data: goodData })).statusCode).toBe(403);
    }
  });

  it('refuses a number JSON reads as infinite (1e400) with 422, instead of storing null', async () => {
    const form = await created(t.admin, '/api/v1/forms', {
      title: 'Headcount',
      fields: [{ name: 'guests', label: 'Guests', type: 'number', required: true }],
    });
    const customer = await customerOf(t.admin);
    for (const raw of ['1e400', '-1e400']) {
      const response = await t.ctx.request('POST', `/api/v1/f/${form.slug}/submit`, {
        token: customer.token,
        rawBody: `{"data":{"guests":${raw}}}`,
      });
      expect(response.statusCode, raw).toBe(422);
      expect(response.json()).toEqual({
        error: { code: 'VALIDATION_FAILED', message: 'data.guests: must be a number' },
      });
    }
    expect((await t.admin.request('GET', `/api/v1/forms/${form.id}/submissions`)).json()).toEqual([]);
  });

  it('lets an optional field named like an Object property (constructor, toString) be left out', async () => {
    const form = await created(t.admin, '/api/v1/forms', {
      title: 'Builders',
      fields: [
        { name: 'contact', label: 'Name', type: 'text', required: true },
        { name: 'constructor', label: 'Construction firm', type: 'text' },
        { name: 'tostring', label: 'Other', type: 'text' },
        { name: 'hasownproperty', label: 'Owner', type: 'number' },
      ],
    });
    const customer = await customerOf(t.admin);
    const without = await customer.request('POST', `/api/v1/f/${form.slug}/submit`, {
      data: { contact: 'Dana' },
    });
    expect(without.statusCode, without.body).toBe(201);
    expect(without.json().data).toEqual({ contact: 'Dana' });
    const withIt = await customer.request('POST', `/api/v1/f/${form.slug}/submit`, {
      data: { contact: 'Dana', constructor: 'Bau GmbH' },
    });
    expect(withIt.json().data).toEqual({ contact: 'Dana', constructor: 'Bau GmbH' });
  });

  it('stores a numeric customer claim as its digits', async () => {
    const form = await newForm();
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), uniqueName('cust'), {
      customer: 4711,
    });
    const response = await customer.request('POST', `/api/v1/f/${form.slug}/submit`, { data: goodData });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().customer_id).toBe('4711');
  });

  it('stores a valid submission (201): known fields only, text trimmed, the customer’s claim', async () => {
    const form = await newForm();
    const customer = await customerOf(t.admin, 'cust-4711');
    const response = await customer.request('POST', `/api/v1/f/${form.slug}/submit`, {
      data: { ...goodData, phone: '', notes: null },
    });
    expect(response.statusCode).toBe(201);
    const submission = response.json();
    expect(submission).toEqual({
      id: expect.stringMatching(hex32),
      tenant_id: t.admin.tenantId,
      form_id: form.id,
      data: { contact: 'Dana Fox', email: 'dana@example.com', day: '2027-06-12', guests: 80, menu: 'Buffet' },
      customer_id: 'cust-4711',
      event_id: null,
      created_at: expect.any(String),
    });
    expect((await t.admin.request('GET', `/api/v1/forms/${form.id}/submissions`)).json()).toEqual([
      submission,
    ]);
    const byEmployee = await created(t.employee, `/api/v1/f/${form.slug}/submit`, { data: goodData });
    expect(byEmployee.customer_id).toBeNull();
    // Only a customer's own claim names the customer of a submission.
    const claiming = await t.ctx.caller('admin', tenantOf(t.admin), uniqueName('adm'), {
      customer: 'cust-4711',
    });
    const byAdmin = await created(claiming, `/api/v1/f/${form.slug}/submit`, { data: goodData });
    expect(byAdmin.customer_id).toBeNull();
  });

  it.each([
    [{ email: undefined }, 'data.email: is required'],
    [{ email: '   ' }, 'data.email: is required'],
    [{ email: 'not-an-address' }, 'data.email: must be an email address'],
    [{ email: 42 }, 'data.email: must be a string'],
    [{ day: '2027-02-30' }, 'data.day: must be a calendar date (YYYY-MM-DD)'],
    [{ day: '2027-13-01' }, 'data.day: must be a calendar date (YYYY-MM-DD)'],
    [{ day: '12.06.2027' }, 'data.day: must be a calendar date (YYYY-MM-DD)'],
    [{ guests: '80' }, 'data.guests: must be a number'],
    [{ menu: 'buffet' }, 'data.menu: must be one of "Buffet", "Seated dinner"'],
    [{ phone: 'call me' }, 'data.phone: must be a telephone number'],
    [{ contact: 'x'.repeat(1001) }, 'data.contact: must be at most 1000 characters'],
    [{ colour: 'red' }, 'data.colour: is not a field of this form'],
  ])('refuses %j with 422 naming the field and stores nothing', async (change, message) => {
    const form = await newForm();
    const customer = await customerOf(t.admin);
    const response = await customer.request('POST', `/api/v1/f/${form.slug}/submit`, {
      data: { ...goodData, ...change },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    expect(response.json().error.message).toContain(message);
    expect((await t.admin.request('GET', `/api/v1/forms/${form.id}/submissions`)).json()).toEqual([]);
  });

  it('refuses a body without data, or with more, with 422', async () => {
    const form = await newForm();
    const customer = await customerOf(t.admin);
    for (const body of [{}, { data: goodData, extra: 1 }, { data: 'text' }, { data: [1] }]) {
      const response = await customer.request('POST', `/api/v1/f/${form.slug}/submit`, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
    }
  });
});

describe('converting a submission', () => {
  async function submitted() {
    const form = await newForm();
    const customer = await customerOf(t.admin);
    const submission = await created(customer, `/api/v1/f/${form.slug}/submit`, { data: goodData });
    return { form, submission, url: `/api/v1/forms/${form.id}/submissions/${submission.id}/convert` };
  }
  const convertBody = {
    name: 'Fox wedding',
    starts_at: '2027-06-12T15:00:00Z',
    ends_at: '2027-06-13T01:00:00Z',
  };

  it('makes a draft event naming the submission (201), once (409 after)', async () => {
    const { form, submission, url } = await submitted();
    const response = await t.admin.request('POST', url, { ...convertBody, description: ' Buffet for 80 ' });
    expect(response.statusCode).toBe(201);
    const event = response.json();
    expect(event).toMatchObject({
      id: expect.stringMatching(hex32),
      tenant_id: t.admin.tenantId,
      name: 'Fox wedding',
      description: 'Buffet for 80',
      status: 'draft',
      published_at: null,
      submission_id: submission.id,
      starts_at: '2027-06-12T15:00:00.000Z',
    });
    const listed = (await t.admin.request('GET', `/api/v1/forms/${form.id}/submissions`)).json();
    expect(listed[0].event_id).toBe(event.id);
    const again = await t.admin.request('POST', url, convertBody);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'the submission was converted into an event already' },
    });
    expect((await t.admin.request('GET', '/api/v1/events')).json()).toHaveLength(1);
  });

  it('describes the event with the submitted answers when no description is given', async () => {
    const form = await newForm();
    const customer = await customerOf(t.admin);
    const submission = await created(customer, `/api/v1/f/${form.slug}/submit`, {
      data: { ...goodData, notes: 'Vegetarian options\n\tNo nuts, please', phone: '+49 89 1234' },
    });
    const url = `/api/v1/forms/${form.id}/submissions/${submission.id}/convert`;
    const event = await created(t.admin, url, convertBody);
    // The form's order and labels; unanswered fields are left out; several lines indented.
    expect(event.description).toBe(
      [
        'Your name: Dana Fox',
        'Email: dana@example.com',
        'Phone: +49 89 1234',
        'Date: 2027-06-12',
        'Guests: 80',
        'Notes:',
        '  Vegetarian options',
        '  \tNo nuts, please',
        'Menu: Buffet',
      ].join('\n'),
    );
  });

  it('keeps the admin’s description, and none when it is null', async () => {
    for (const [description, expected] of [
      ['Buffet for 80', 'Buffet for 80'],
      [null, null],
    ] as const) {
      const { url } = await submitted();
      const event = await created(t.admin, url, { ...convertBody, description });
      expect(event.description).toBe(expected);
    }
  });

  it('cuts a description longer than an event holds, saying where the whole submission is', async () => {
    const form = await newForm();
    const customer = await customerOf(t.admin);
    const notes = 'x'.repeat(6000);
    const submission = await created(customer, `/api/v1/f/${form.slug}/submit`, {
      data: { ...goodData, notes },
    });
    const event = await created(
      t.admin,
      `/api/v1/forms/${form.id}/submissions/${submission.id}/convert`,
      convertBody,
    );
    const description = String(event.description);
    expect([...description]).toHaveLength(5000);
    expect(description.startsWith('Your name: Dana Fox\n')).toBe(true);
    expect(
      description.endsWith(
        `\n… (cut to 5000 characters; the whole submission is form submission ${submission.id})`,
      ),
    ).toBe(true);
    // The event still reads back and changes as any other (its description fits the schema).
    const renamed = await t.admin.request('PATCH', `/api/v1/events/${event.id}`, { description });
    expect(renamed.statusCode, renamed.body).toBe(200);
  });

  it('converts a submission once under concurrent converts', async () => {
    const { url } = await submitted();
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => t.admin.request('POST', url, convertBody)),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([201, ...Array(7).fill(409)]);
    expect((await t.admin.request('GET', '/api/v1/events')).json()).toHaveLength(1);
  });

  it('answers 404 for a submission of another form, 422 for a bad window, 403 for an employee', async () => {
    const { submission, url } = await submitted();
    const other = await newForm();
    const wrongForm = await t.admin.request(
      'POST',
      `/api/v1/forms/${other.id}/submissions/${submission.id}/convert`,
      convertBody,
    );
    expect(wrongForm.statusCode).toBe(404);
    expect(wrongForm.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'submission not found' } });
    const backwards = await t.admin.request('POST', url, { ...convertBody, ends_at: '2027-06-12T14:00:00Z' });
    expect(backwards.statusCode).toBe(422);
    expect(backwards.json().error.message).toContain('ends_at');
    const badLocation = await t.admin.request('POST', url, {
      ...convertBody,
      location_id: '0123456789abcdef0123456789abcdef',
    });
    expect(badLocation.statusCode).toBe(422);
    expect(badLocation.json().error.message).toContain('location_id');
    expect((await t.employee.request('POST', url, convertBody)).json()).toEqual(FORBIDDEN_BODY);
    expect((await t.admin.request('GET', '/api/v1/events')).json()).toEqual([]);
  });
});
