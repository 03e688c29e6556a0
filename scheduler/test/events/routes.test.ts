import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { type Caller, FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { newRole } from '../support/scheduling.ts';
import { layDownShifts } from '../support/shifts.ts';
import { EMBEDDED_ONLY } from '../support/skips.ts';

// Fresh, provisioned tenants per test: no test sees what another created.
const t = useRouteTests();

const NOT_FOUND = { error: { code: 'NOT_FOUND', message: 'event not found' } };
const window = { starts_at: '2030-07-02T10:00:00+02:00', ends_at: '2030-07-05T00:00:00Z' };

async function createEvent(caller: Caller, body: Record<string, unknown> = {}) {
  const response = await caller.request('POST', '/api/v1/events', { name: 'Festival', ...window, ...body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

describe('POST /api/v1/events', () => {
  it('creates a draft event, times stored in UTC', async () => {
    const response = await t.admin.request('POST', '/api/v1/events', {
      name: '  Festival ',
      description: '  On the river  ',
      ...window,
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: t.admin.tenantId,
      name: 'Festival',
      description: 'On the river',
      location_id: null,
      starts_at: '2030-07-02T08:00:00.000Z',
      ends_at: '2030-07-05T00:00:00.000Z',
      status: 'draft',
      published_at: null,
      submission_id: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('takes a window under a millisecond, judged to the microsecond the database keeps', async () => {
    await createEvent(t.admin, {
      starts_at: '2030-07-02T10:00:00.0001Z',
      ends_at: '2030-07-02T10:00:00.0009Z',
    });
    const empty = await t.admin.request('POST', '/api/v1/events', {
      name: 'Festival',
      starts_at: '2030-07-02T10:00:00.0000001Z',
      ends_at: '2030-07-02T10:00:00.0000004Z',
    });
    expect(empty.statusCode).toBe(422);
    expect(empty.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'ends_at: must be after starts_at' },
    });
  });

  it('takes a location of the tenant', async () => {
    const location = (await t.admin.request('POST', '/api/v1/locations', { name: 'Hall' })).json();
    expect((await createEvent(t.admin, { location_id: location.id })).location_id).toBe(location.id);
  });

  it.each([
    ['an end before the start', { ends_at: '2030-07-02T07:00:00Z' }, 'ends_at: must be after starts_at'],
    ['an end equal to the start', { ends_at: '2030-07-02T08:00:00Z' }, 'ends_at: must be after starts_at'],
    ['a blank name', { name: '   ' }, 'name: must not be blank'],
    ['a missing name', { name: undefined }, 'name: is required'],
    ['a date without time', { starts_at: '2030-07-02' }, 'starts_at: must match format "date-time"'],
    ['February 30', { starts_at: '2030-02-30T10:00:00Z' }, 'starts_at: must match format "date-time"'],
    [
      'an offset past what the database reads',
      { starts_at: '2030-07-02T08:00:00+23:59' },
      'starts_at: must match format "date-time"',
    ],
    [
      'an end with an offset of -16:00',
      { ends_at: '2030-07-02T08:00:00-16:00' },
      'ends_at: must match format "date-time"',
    ],
    ['an unknown field', { status: 'published' }, 'status: is not an allowed field'],
    ['a malformed location id', { location_id: 'hall' }, 'location_id: must match pattern "^[0-9a-f]{32}$"'],
    [
      'a location nobody has',
      { location_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c' },
      'location_id: no such location in this tenant',
    ],
  ])('refuses %s with 422 and creates nothing', async (_label, change, message) => {
    const response = await t.admin.request('POST', '/api/v1/events', {
      name: 'Festival',
      ...window,
      ...change,
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    expect((await t.admin.request('GET', '/api/v1/events')).json()).toEqual([]);
  });

  it("refuses another tenant's location as unknown", async () => {
    const theirs = (await t.otherAdmin.request('POST', '/api/v1/locations', { name: 'Theirs' })).json();
    const response = await t.admin.request('POST', '/api/v1/events', {
      name: 'F',
      ...window,
      location_id: theirs.id,
    });
    expect(response.statusCode).toBe(422);
  });

  it('answers the fixed 403 to an employee and creates nothing', async () => {
    const response = await t.employee.request('POST', '/api/v1/events', { name: 'F', ...window });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    expect((await t.admin.request('GET', '/api/v1/events')).json()).toEqual([]);
  });
});

describe('reading events', () => {
  it('lists every event to an admin and only published ones to an employee, by start', async () => {
    const later = await createEvent(t.admin, {
      name: 'Later',
      starts_at: '2030-08-01T00:00:00Z',
      ends_at: '2030-08-02T00:00:00Z',
    });
    const draft = await createEvent(t.admin, { name: 'Draft' });
    const published = (await t.admin.request('POST', `/api/v1/events/${later.id}/publish`)).json();
    const names = (await t.admin.request('GET', '/api/v1/events'))
      .json()
      .map((e: { name: string }) => e.name);
    expect(names).toEqual(['Draft', 'Later']);
    expect((await t.employee.request('GET', '/api/v1/events')).json()).toEqual([published]);
    expect((await t.employee.request('GET', `/api/v1/events/${draft.id}`)).json()).toEqual(NOT_FOUND);
    expect((await t.employee.request('GET', `/api/v1/events/${later.id}`)).json()).toEqual(published);
  });

  it('answers 404 for another tenant, a malformed id, and accepts the hyphenated form', async () => {
    const event = await createEvent(t.admin);
    for (const [caller, id] of [
      [t.otherAdmin, event.id],
      [t.admin, 'not-a-uuid'],
      [t.admin, '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c'],
    ] as const) {
      const response = await caller.request('GET', `/api/v1/events/${id}`);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(NOT_FOUND);
    }
    const hyphenated = event.id.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
    expect((await t.admin.request('GET', `/api/v1/events/${hyphenated}`)).json()).toEqual(event);
    expect((await t.otherAdmin.request('GET', '/api/v1/events')).json()).toEqual([]);
  });
});

describe('POST /api/v1/events/{id}/publish', () => {
  it('publishes a draft once; again is 409 INVALID_STATE and changes nothing', async () => {
    const event = await createEvent(t.admin);
    const response = await t.admin.request('POST', `/api/v1/events/${event.id}/publish`);
    expect(response.statusCode).toBe(200);
    const published = response.json();
    expect(published).toEqual({ ...event, status: 'published', published_at: expect.stringMatching(/Z$/) });
    const again = await t.admin.request('POST', `/api/v1/events/${event.id}/publish`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: { code: 'INVALID_STATE', message: 'event is already published' } });
    expect((await t.admin.request('GET', `/api/v1/events/${event.id}`)).json()).toEqual(published);
  });

  it('is 403 to an employee and 404 to another tenant', async () => {
    const event = await createEvent(t.admin);
    expect((await t.employee.request('POST', `/api/v1/events/${event.id}/publish`)).json()).toEqual(
      FORBIDDEN_BODY,
    );
    const other = await t.otherAdmin.request('POST', `/api/v1/events/${event.id}/publish`);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(NOT_FOUND);
    expect((await t.admin.request('GET', `/api/v1/events/${event.id}`)).json().status).toBe('draft');
  });
});

describe('PATCH /api/v1/events/{id}', () => {
  it('changes only the fields sent; null clears the description', async () => {
    const event = await createEvent(t.admin, { description: 'Old' });
    const response = await t.admin.request('PATCH', `/api/v1/events/${event.id}`, {
      name: 'Renamed',
      description: null,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ...event, name: 'Renamed', description: null });
  });

  it('moves the end and the location, and clears the location with null', async () => {
    const location = (await t.admin.request('POST', '/api/v1/locations', { name: 'Hall' })).json();
    const event = await createEvent(t.admin);
    const moved = await t.admin.request('PATCH', `/api/v1/events/${event.id}`, {
      ends_at: '2030-07-06T00:00:00Z',
      location_id: location.id,
    });
    expect(moved.json()).toEqual({ ...event, ends_at: '2030-07-06T00:00:00.000Z', location_id: location.id });
    const cleared = await t.admin.request('PATCH', `/api/v1/events/${event.id}`, { location_id: null });
    expect(cleared.json()).toEqual({ ...event, ends_at: '2030-07-06T00:00:00.000Z', location_id: null });
    const unknown = await t.admin.request('PATCH', `/api/v1/events/${event.id}`, {
      location_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c',
    });
    expect(unknown.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'location_id: no such location in this tenant' },
    });
  });

  it('checks the window against the stored other end', async () => {
    const event = await createEvent(t.admin);
    const response = await t.admin.request('PATCH', `/api/v1/events/${event.id}`, {
      starts_at: '2030-07-06T00:00:00Z',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.message).toBe('ends_at: must be after starts_at');
    expect((await t.admin.request('GET', `/api/v1/events/${event.id}`)).json()).toEqual(event);
  });

  it.each([
    ['an empty body', {}, 'body: must NOT have fewer than 1 properties'],
    ['a blank name', { name: ' ' }, 'name: must not be blank'],
  ])('refuses %s with 422', async (_label, body, message) => {
    const event = await createEvent(t.admin);
    const response = await t.admin.request('PATCH', `/api/v1/events/${event.id}`, body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });

  it('is 403 to an employee and 404 to another tenant', async () => {
    const event = await createEvent(t.admin);
    expect((await t.employee.request('PATCH', `/api/v1/events/${event.id}`, { name: 'X' })).statusCode).toBe(
      403,
    );
    const other = await t.otherAdmin.request('PATCH', `/api/v1/events/${event.id}`, { name: 'X' });
    expect(other.statusCode).toBe(404);
    expect((await t.admin.request('GET', `/api/v1/events/${event.id}`)).json().name).toBe('Festival');
  });
});

describe('DELETE /api/v1/events/{id}', () => {
  it('deletes an event with its shifts while nobody is assigned', async () => {
    const event = await createEvent(t.admin);
    const shift = await t.admin.request('POST', '/api/v1/shifts', {
      event_id: event.id,
      name: 'S',
      starts_at: '2030-07-02T10:00:00Z',
      ends_at: '2030-07-02T12:00:00Z',
    });
    expect(shift.statusCode).toBe(201);
    expect((await t.admin.request('DELETE', `/api/v1/events/${event.id}`)).statusCode).toBe(204);
    expect((await t.admin.request('GET', `/api/v1/events/${event.id}`)).statusCode).toBe(404);
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.json().id}`)).statusCode).toBe(404);
  });

  /** The event's rows: itself, its shifts, their slots, its documents. */
  async function rowsOf(eventId: string) {
    const { rows } = await sql<{ shifts: number; slots: number; documents: number; events: number }>`
      SELECT (SELECT count(*) FROM shifts WHERE event_id = ${eventId})::int AS shifts,
             (SELECT count(*) FROM shift_slots sl JOIN shifts s ON s.tenant_id = sl.tenant_id AND s.id = sl.shift_id
               WHERE s.event_id = ${eventId})::int AS slots,
             (SELECT count(*) FROM event_documents WHERE event_id = ${eventId})::int AS documents,
             (SELECT count(*) FROM events WHERE id = ${eventId})::int AS events`.execute(t.ctx.db.owner);
    return rows[0];
  }

  it('deletes an event of many batches whole: no shift, slot or document left, each removal audited', async () => {
    const event = await createEvent(t.admin);
    const roleId = await newRole(t.admin);
    const where = { tenantId: t.admin.tenantId, eventId: event.id as string, roleId };
    // 600 shifts of 2 slots: 1,800 rows, several batches.
    await layDownShifts(t.ctx.db.owner, where, 600, 2);
    await t.ctx.db.owner
      .insertInto('event_documents')
      .values(
        [1, 2].map((n) => ({
          tenant_id: t.admin.tenantId,
          id: randomUUID(),
          event_id: event.id,
          object_key: `documents/${n}`,
          filename: `plan-${n}.pdf`,
          content_type: 'application/pdf',
          size_bytes: 1,
        })),
      )
      .execute();
    // Another event of the tenant, with a shift, stays as it is.
    const other = await createEvent(t.admin);
    await layDownShifts(t.ctx.db.owner, { ...where, eventId: other.id }, 1, 2);

    const response = await t.admin.request('DELETE', `/api/v1/events/${event.id}`);
    expect(response.statusCode, response.body).toBe(204);
    expect(response.body).toBe('');
    expect(await rowsOf(event.id)).toEqual({ shifts: 0, slots: 0, documents: 0, events: 0 });
    expect(await rowsOf(other.id)).toMatchObject({ shifts: 1, events: 1 });
    const audited = await sql<{ action: string; actor_user_id: string; n: number }>`
      SELECT action, actor_user_id, count(*)::int AS n FROM audit_log
       WHERE tenant_id = ${t.admin.tenantId} AND action LIKE '%.deleted'
       GROUP BY action, actor_user_id ORDER BY action`.execute(t.ctx.db.owner);
    const actor = t.admin.userId;
    expect(audited.rows).toEqual([
      { action: 'document.deleted', actor_user_id: actor, n: 2 },
      { action: 'event.deleted', actor_user_id: actor, n: 1 },
      { action: 'shift.deleted', actor_user_id: actor, n: 600 },
      { action: 'slot.deleted', actor_user_id: actor, n: 1200 },
    ]);
    expect((await t.admin.request('DELETE', `/api/v1/events/${event.id}`)).json()).toEqual(NOT_FOUND);
  });

  it(
    'answers another tenant while it deletes a large event on the embedded database',
    // 2,000 shifts and 4,000 slots laid down and deleted: 20 ms a row is room for a loaded machine.
    runsIf(inject('testDb') === 'pglite', EMBEDDED_ONLY, { timeout: 120_000 }),
    async () => {
      const event = await createEvent(t.admin);
      const roleId = await newRole(t.admin);
      const shifts = 2000;
      await layDownShifts(
        t.ctx.db.owner,
        { tenantId: t.admin.tenantId, eventId: event.id, roleId },
        shifts,
        2,
      );
      expect((await t.otherAdmin.request('GET', '/api/v1/roles')).statusCode).toBe(200);

      let deleted = false;
      const deletion = t.admin.request('DELETE', `/api/v1/events/${event.id}`).then((answer) => {
        deleted = true;
        return answer;
      });
      // Each count waits for its turn on the one session: it is answered between two
      // batches of the delete, or, were the delete one statement, after all of it.
      let left = shifts;
      for (let i = 0; i < 10_000 && left === shifts && !deleted; i++) {
        left = (await rowsOf(event.id))?.shifts ?? 0;
      }
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThan(shifts);
      // Another tenant's request meanwhile: answered before the delete is done.
      const roles = await t.otherAdmin.request('GET', '/api/v1/roles');
      expect(roles.statusCode).toBe(200);
      expect(deleted).toBe(false);
      expect((await deletion).statusCode).toBe(204);
      expect(await rowsOf(event.id)).toEqual({ shifts: 0, slots: 0, documents: 0, events: 0 });
    },
  );

  it('is 403 to an employee and 404 to another tenant, and deletes nothing', async () => {
    const event = await createEvent(t.admin);
    expect((await t.employee.request('DELETE', `/api/v1/events/${event.id}`)).statusCode).toBe(403);
    const other = await t.otherAdmin.request('DELETE', `/api/v1/events/${event.id}`);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(NOT_FOUND);
    expect((await t.admin.request('GET', `/api/v1/events/${event.id}`)).statusCode).toBe(200);
  });
});

describe('GET /api/v1/events?from=&to=', () => {
  it('keeps the events overlapping [from, to), by start; employees still see published ones only', async () => {
    const at = async (starts_at: string, ends_at: string, publish = true) => {
      const event = await createEvent(t.admin, { starts_at, ends_at });
      if (publish)
        expect((await t.admin.request('POST', `/api/v1/events/${event.id}/publish`)).statusCode).toBe(200);
      return event.id as string;
    };
    const june = await at('2030-06-01T00:00:00Z', '2030-07-01T00:00:00Z');
    const july = await at('2030-07-01T00:00:00Z', '2030-08-01T00:00:00Z', false);
    const summer = await at('2030-06-15T00:00:00Z', '2030-09-15T00:00:00Z');
    const ids = async (caller: Caller, query: string) => {
      const response = await caller.request('GET', `/api/v1/events?${query}`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json().map((e: { id: string }) => e.id);
    };
    expect(await ids(t.admin, 'from=2030-07-01T00:00:00Z&to=2030-07-02T00:00:00Z')).toEqual([summer, july]);
    expect(await ids(t.admin, 'to=2030-07-01T00:00:00Z')).toEqual([june, summer]);
    expect(await ids(t.admin, 'from=2030-08-01T00:00:00Z')).toEqual([summer]);
    expect(await ids(t.admin, 'from=2030-09-15T00:00:00Z')).toEqual([]);
    expect(await ids(t.employee, 'from=2030-07-01T00:00:00Z')).toEqual([summer]);
    expect(await ids(t.otherAdmin, 'from=2030-01-01T00:00:00Z')).toEqual([]);
  });

  it('filters a tenant with an event spanning the whole calendar, for every caller', async () => {
    const forever = await createEvent(t.admin, {
      starts_at: '0001-01-01T00:00:00Z',
      ends_at: '9999-12-31T00:00:00Z',
    });
    const ids = async (caller: Caller, query: string) => {
      const response = await caller.request('GET', `/api/v1/events?${query}`);
      expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
      return response.json().map((e: { id: string }) => e.id);
    };
    for (const query of [
      'from=2000-01-01T00:00:00Z',
      'from=0001-01-01T00:00:00Z',
      'to=0001-01-01T00:00:01Z',
    ]) {
      expect(await ids(t.admin, query), query).toEqual([forever.id]);
    }
    // A draft: the employee sees none of it, but gets an answer.
    expect(await ids(t.employee, 'from=2000-01-01T00:00:00Z')).toEqual([]);
  });

  it.each([
    [
      'to equal to from',
      'from=2030-07-01T00:00:00Z&to=2030-07-01T02:00:00%2B02:00',
      'to: must be after from',
    ],
    ['to before from', 'from=2030-07-01T00:00:00Z&to=2030-06-01T00:00:00Z', 'to: must be after from'],
    ['a malformed time', 'to=2030-13-01T00:00:00Z', 'to: must match format "date-time" or "date"'],
    ['a month 13', 'to=2030-13-01', 'to: must match format "date-time" or "date"'],
    [
      'an offset of +16:00',
      'from=2030-07-01T00:00:00%2B16:00',
      'from: must match format "date-time" or "date"',
    ],
    ['an unknown parameter', 'status=draft', 'status: is not an allowed field'],
  ])('refuses %s with 422', async (_label, query, message) => {
    const response = await t.admin.request('GET', `/api/v1/events?${query}`);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });
});
