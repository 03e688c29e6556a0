import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, tenantOf } from '../support/scheduling.ts';

/**
 * Text the API stores and shows again: a name, title, label or one-line field holds one
 * line (no CR, LF or other control character, no line separator, no bidirectional
 * override that would make it read backwards); a description may hold line breaks and
 * tabs, nothing else of the kind. A refusal is 422 naming the field, and stores nothing.
 */
// Many refused submissions from one client: a limit that does not get in the way.
const t = useRouteTests({ formSubmitLimit: { max: 1000, windowMs: 3_600_000 } });

const oneLineBreakers = [
  'Bar\r\nX-Injected: 1',
  'Bar\nline two',
  'Bell\u0007',
  'Esc\u001b[31m',
  'C1\u0085',
  'Sep\u2028',
  'evil\u202Etxt.exe',
];

interface Case {
  name: string;
  field: string;
  send: (
    value: string,
  ) => Promise<{ statusCode: number; json(): { error: { code: string; message: string } } }>;
}

async function world() {
  const role = await newRole(t.admin);
  const event = await newEvent(t.admin);
  const shift = await newShift(t.admin, event, { roleId: role });
  const form = await created(t.admin, '/api/v1/forms', {
    title: 'Catering',
    fields: [
      { name: 'contact', label: 'Name', type: 'text', required: true },
      { name: 'email', label: 'Email', type: 'email' },
      { name: 'phone', label: 'Phone', type: 'tel' },
      { name: 'notes', label: 'Notes', type: 'textarea' },
    ],
  });
  const customer = await t.ctx.caller('customer', tenantOf(t.admin), `cust-${form.id}`);
  return { role, event, shift, form, customer };
}

function oneLineCases(w: Awaited<ReturnType<typeof world>>): Case[] {
  const admin = t.admin;
  const post = (url: string, body: unknown) => admin.request('POST', url, body);
  const patch = (url: string, body: unknown) => admin.request('PATCH', url, body);
  const window = { starts_at: '2030-01-01T10:00:00Z', ends_at: '2030-01-01T12:00:00Z' };
  return [
    { name: 'role name', field: 'name', send: (v) => post('/api/v1/roles', { name: v }) },
    { name: 'location name', field: 'name', send: (v) => post('/api/v1/locations', { name: v }) },
    {
      name: 'location street',
      field: 'street',
      send: (v) => post('/api/v1/locations', { name: 'Hall', street: v }),
    },
    {
      name: 'location city',
      field: 'city',
      send: (v) => post('/api/v1/locations', { name: 'Hall', city: v }),
    },
    {
      name: 'location postal code',
      field: 'postal_code',
      send: (v) => post('/api/v1/locations', { name: 'Hall', postal_code: v }),
    },
    {
      name: 'location country',
      field: 'country',
      send: (v) => post('/api/v1/locations', { name: 'Hall', country: v }),
    },
    { name: 'event name', field: 'name', send: (v) => post('/api/v1/events', { name: v, ...window }) },
    { name: 'event rename', field: 'name', send: (v) => patch(`/api/v1/events/${w.event}`, { name: v }) },
    {
      name: 'shift name',
      field: 'name',
      send: (v) => post('/api/v1/shifts', { event_id: w.event, name: v, ...window }),
    },
    { name: 'shift rename', field: 'name', send: (v) => patch(`/api/v1/shifts/${w.shift.id}`, { name: v }) },
    {
      name: 'bulk shift name',
      field: 'name',
      send: (v) =>
        post(`/api/v1/events/${w.event}/shifts/bulk`, { start_time: '09:00', end_time: '17:00', name: v }),
    },
    {
      name: 'form title',
      field: 'title',
      send: (v) => post('/api/v1/forms', { title: v, fields: [{ name: 'a', label: 'A', type: 'text' }] }),
    },
    {
      name: 'form field label',
      field: 'fields[0].label',
      send: (v) => post('/api/v1/forms', { title: 'T', fields: [{ name: 'a', label: v, type: 'text' }] }),
    },
    {
      name: 'form select option',
      field: 'fields[0].options[0]',
      send: (v) =>
        post('/api/v1/forms', {
          title: 'T',
          fields: [{ name: 'a', label: 'A', type: 'select', options: [v] }],
        }),
    },
    {
      name: 'form pin',
      field: 'customer_id',
      send: (v) =>
        post('/api/v1/forms', {
          title: 'T',
          fields: [{ name: 'a', label: 'A', type: 'text' }],
          customer_id: v,
        }),
    },
    {
      name: 'document file name',
      field: 'filename',
      send: (v) =>
        post(`/api/v1/events/${w.event}/documents/upload`, {
          filename: v,
          content_type: 'application/pdf',
          size_bytes: 10,
        }),
    },
    {
      name: 'submitted text',
      field: 'data.contact',
      send: (v) => w.customer.request('POST', `/api/v1/f/${w.form.slug}/submit`, { data: { contact: v } }),
    },
    {
      name: 'submitted phone',
      field: 'data.phone',
      send: (v) =>
        w.customer.request('POST', `/api/v1/f/${w.form.slug}/submit`, {
          data: { contact: 'Dana', phone: `+49 30 1234${v}` },
        }),
    },
  ];
}

describe('one-line text', () => {
  it('is refused with 422 naming the field when it holds a line break or another control character', async () => {
    const w = await world();
    for (const item of oneLineCases(w)) {
      for (const value of oneLineBreakers) {
        const response = await item.send(value);
        expect(response.statusCode, `${item.name}: ${JSON.stringify(value)}`).toBe(422);
        expect(response.json().error.code).toBe('VALIDATION_FAILED');
        expect(response.json().error.message, item.name).toMatch(
          new RegExp(`^${item.field.replace(/[[\].]/g, '\\$&')}: `),
        );
      }
    }
    // Nothing of it was stored.
    const names = (await t.admin.request('GET', '/api/v1/roles')).json().map((r: { name: string }) => r.name);
    expect(names).toEqual(['Cook']);
    expect((await t.admin.request('GET', '/api/v1/locations')).json()).toEqual([]);
  });

  it('keeps letters of any script, emoji sequences and ordinary punctuation', async () => {
    for (const name of ['Küche & Bar', 'Сцена №2', '舞台', 'Crew 👩‍🍳 (night)', 'Tab-free — “quoted”']) {
      const response = await t.admin.request('POST', '/api/v1/roles', { name });
      expect(response.statusCode, name).toBe(201);
      expect(response.json().name).toBe(name);
    }
  });
});

describe('multi-line text', () => {
  it('keeps line breaks and tabs in descriptions and notes, and refuses other control characters', async () => {
    const w = await world();
    const description = 'Doors open at 18:00.\n\tBring your badge.\r\nParking behind the hall.';
    const event = await t.admin.request('PATCH', `/api/v1/events/${w.event}`, { description });
    expect(event.statusCode, event.body).toBe(200);
    expect(event.json().description).toBe(description);
    const submitted = await w.customer.request('POST', `/api/v1/f/${w.form.slug}/submit`, {
      data: { contact: 'Dana', notes: 'Vegetarian: 4\nVegan: 2' },
    });
    expect(submitted.statusCode, submitted.body).toBe(201);
    for (const [send, field] of [
      [
        (v: string) => t.admin.request('PATCH', `/api/v1/events/${w.event}`, { description: v }),
        'description',
      ],
      [
        (v: string) => t.admin.request('POST', '/api/v1/roles', { name: 'Medic', description: v }),
        'description',
      ],
      [
        (v: string) =>
          w.customer.request('POST', `/api/v1/f/${w.form.slug}/submit`, {
            data: { contact: 'Dana', notes: v },
          }),
        'data.notes',
      ],
    ] as const) {
      for (const value of ['Bell\u0007', 'NUL-free but \u001b', 'evil\u202Etxt']) {
        const response = await send(value);
        expect(response.statusCode, `${field}: ${JSON.stringify(value)}`).toBe(422);
        expect(response.json().error.message).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `));
      }
    }
  });
});
