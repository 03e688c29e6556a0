import { describe, expect, it } from 'vitest';
import { FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { asLegacyRows } from '../support/legacy-rows.ts';
import { action, created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

// Fresh, provisioned tenants per test: no test sees what another created.
const t = useRouteTests();

const SHIFT_NOT_FOUND = { error: { code: 'NOT_FOUND', message: 'shift not found' } };
const times = { starts_at: '2030-07-02T10:00:00+02:00', ends_at: '2030-07-02T16:00:00+02:00' };

describe('POST /api/v1/shifts', () => {
  it('creates a draft shift with its slots, empty', async () => {
    const eventId = await newEvent(t.admin, { publish: false });
    const roleId = await newRole(t.admin);
    const response = await t.admin.request('POST', '/api/v1/shifts', {
      event_id: eventId,
      name: ' Bar ',
      ...times,
      slots: [
        { role_id: roleId, capacity: 2 },
        { role_id: roleId, capacity: 1 },
      ],
    });
    expect(response.statusCode).toBe(201);
    const shift = response.json();
    expect(shift).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: t.admin.tenantId,
      event_id: eventId,
      name: 'Bar',
      location_id: null,
      starts_at: '2030-07-02T08:00:00.000Z',
      ends_at: '2030-07-02T14:00:00.000Z',
      status: 'draft',
      published_at: null,
      created_at: expect.stringMatching(/Z$/),
    });
    const slots = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json();
    expect(slots).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        tenant_id: t.admin.tenantId,
        shift_id: shift.id,
        role_id: roleId,
        capacity: 2,
        filled_count: 0,
        created_at: expect.stringMatching(/Z$/),
      },
      expect.objectContaining({ capacity: 1, filled_count: 0 }),
    ]);
  });

  it.each([
    ['an end before the start', { ends_at: '2030-07-02T07:00:00Z' }, 'ends_at: must be after starts_at'],
    [
      'a shift longer than 7 days',
      { starts_at: '2030-07-01T00:00:00Z', ends_at: '2030-07-08T00:01:00Z' },
      'ends_at: a shift lasts at most 7 days',
    ],
    [
      'an unknown event',
      { event_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c' },
      'event_id: no such event in this tenant',
    ],
    ['a capacity of 0', { slots: [{ role_id: 'ROLE', capacity: 0 }] }, 'slots[0].capacity: must be >= 1'],
    [
      'an unknown role in the second slot',
      {
        slots: [
          { role_id: 'ROLE', capacity: 1 },
          { role_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c', capacity: 1 },
        ],
      },
      'slots[1].role_id: no such role in this tenant',
    ],
    [
      'a slot with an extra field',
      { slots: [{ role_id: 'ROLE', capacity: 1, note: 'x' }] },
      'slots[0].note: is not an allowed field',
    ],
    [
      'a capacity that is not an integer',
      { slots: [{ role_id: 'ROLE', capacity: 1.5 }] },
      'slots[0].capacity: must be integer',
    ],
  ])('refuses %s with 422 and creates nothing', async (_label, change, message) => {
    const eventId = await newEvent(t.admin);
    const roleId = await newRole(t.admin);
    const body = JSON.parse(
      JSON.stringify({ event_id: eventId, name: 'Bar', ...times, ...change }).replaceAll('ROLE', roleId),
    );
    const response = await t.admin.request('POST', '/api/v1/shifts', body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    expect((await t.admin.request('GET', '/api/v1/shifts')).json()).toEqual([]);
  });

  it('takes a shift of exactly 7 days, and refuses a change that makes one longer', async () => {
    const eventId = await newEvent(t.admin);
    const week = await t.admin.request('POST', '/api/v1/shifts', {
      event_id: eventId,
      name: 'Standby week',
      starts_at: '2030-07-01T00:00:00Z',
      ends_at: '2030-07-08T00:00:00Z',
    });
    expect(week.statusCode, week.body).toBe(201);
    const longer = await t.admin.request('PATCH', `/api/v1/shifts/${week.json().id}`, {
      ends_at: '2030-07-09T00:00:00Z',
    });
    expect(longer.statusCode).toBe(422);
    expect(longer.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'ends_at: a shift lasts at most 7 days' },
    });
  });

  it('takes the most slots a shift holds, 50, and names the first of them whose role is unknown', async () => {
    const eventId = await newEvent(t.admin);
    const roles = [];
    for (let i = 0; i < 50; i++) roles.push(await newRole(t.admin, `Role ${i}`));
    const slots = roles.map((role_id, i) => ({ role_id, capacity: i + 1 }));
    const unknown = (i: number) => `0193a1b2c3d47e8f9a0b1c2d3e4f5a${String(i).padStart(2, '0')}`;
    const refused = await t.admin.request('POST', '/api/v1/shifts', {
      event_id: eventId,
      name: 'Bar',
      ...times,
      slots: slots.map((slot, i) => (i === 36 || i === 40 ? { ...slot, role_id: unknown(i) } : slot)),
    });
    expect(refused.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'slots[36].role_id: no such role in this tenant' },
    });
    const shift = await created(t.admin, '/api/v1/shifts', {
      event_id: eventId,
      name: 'Bar',
      ...times,
      slots,
    });
    const stored = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json();
    expect(stored.map((s: { role_id: string; capacity: number }) => [s.role_id, s.capacity])).toEqual(
      slots.map((s) => [s.role_id, s.capacity]),
    );
  });

  it("refuses another tenant's event and role as unknown", async () => {
    const theirEvent = await newEvent(t.otherAdmin);
    const theirRole = await newRole(t.otherAdmin);
    const mine = await newEvent(t.admin);
    const onTheirEvent = await t.admin.request('POST', '/api/v1/shifts', {
      event_id: theirEvent,
      name: 'S',
      ...times,
    });
    expect(onTheirEvent.json().error.message).toBe('event_id: no such event in this tenant');
    const withTheirRole = await t.admin.request('POST', '/api/v1/shifts', {
      event_id: mine,
      name: 'S',
      ...times,
      slots: [{ role_id: theirRole, capacity: 1 }],
    });
    expect(withTheirRole.json().error.message).toBe('slots[0].role_id: no such role in this tenant');
  });

  it('answers the fixed 403 to an employee', async () => {
    const eventId = await newEvent(t.admin);
    const response = await t.employee.request('POST', '/api/v1/shifts', {
      event_id: eventId,
      name: 'S',
      ...times,
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('shift status and the list filters', () => {
  it('derives draft, open, filled and completed, and filters agree with the records', async () => {
    const eventId = await newEvent(t.admin);
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const draft = await newShift(t.admin, eventId, { roleId, publish: false });
    const open = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-03T10:00:00Z',
      ends_at: '2030-07-03T12:00:00Z',
    });
    const filled = await newShift(t.admin, eventId, {
      roleId,
      capacities: [1],
      starts_at: '2030-07-04T10:00:00Z',
      ends_at: '2030-07-04T12:00:00Z',
    });
    await created(t.employee, `/api/v1/shifts/${filled.id}/slots/${filled.slots[0]}/claim`, {});
    const done = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2020-01-01T10:00:00Z',
      ends_at: '2020-01-01T12:00:00Z',
    });

    const byStatus = async (status: string) =>
      (await t.admin.request('GET', `/api/v1/shifts?status=${status}`))
        .json()
        .map((s: { id: string }) => s.id);
    expect(await byStatus('draft')).toEqual([draft.id]);
    expect(await byStatus('open')).toEqual([open.id]);
    expect(await byStatus('filled')).toEqual([filled.id]);
    expect(await byStatus('completed')).toEqual([done.id]);
    const all = (await t.admin.request('GET', '/api/v1/shifts')).json();
    expect(all.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      [done.id, 'completed'],
      [draft.id, 'draft'],
      [open.id, 'open'],
      [filled.id, 'filled'],
    ]);
  });

  it('filters by event, in either id form', async () => {
    const first = await newEvent(t.admin);
    const second = await newEvent(t.admin);
    const roleId = await newRole(t.admin);
    const a = await newShift(t.admin, first, { roleId });
    await newShift(t.admin, second, { roleId });
    const hyphenated = first.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
    for (const id of [first, hyphenated]) {
      const ids = (await t.admin.request('GET', `/api/v1/shifts?event_id=${id}`))
        .json()
        .map((s: { id: string }) => s.id);
      expect(ids).toEqual([a.id]);
    }
    const ofEvent = (await t.admin.request('GET', `/api/v1/events/${first}/shifts`)).json();
    expect(ofEvent.map((s: { id: string }) => s.id)).toEqual([a.id]);
  });

  it.each([
    ['an unknown status', 'status=closed', 'status: must be one of draft, open, filled, completed'],
    ['a malformed event id', 'event_id=42', null],
    ['an unknown parameter', 'stauts=open', 'stauts: is not an allowed field'],
  ])('refuses %s with 422', async (_label, query, message) => {
    const response = await t.admin.request('GET', `/api/v1/shifts?${query}`);
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    if (message) expect(response.json().error.message).toBe(message);
  });
});

describe('what employees see', () => {
  it('only published shifts of published events; the rest is 404 everywhere', async () => {
    const roleId = await newRole(t.admin);
    const liveEvent = await newEvent(t.admin);
    const draftEvent = await newEvent(t.admin, { publish: false });
    const visible = await newShift(t.admin, liveEvent, { roleId });
    const draftShift = await newShift(t.admin, liveEvent, { roleId, publish: false });
    const ofDraftEvent = await newShift(t.admin, draftEvent, { roleId });

    const listed = (await t.employee.request('GET', '/api/v1/shifts'))
      .json()
      .map((s: { id: string }) => s.id);
    expect(listed).toEqual([visible.id]);
    for (const hidden of [draftShift, ofDraftEvent]) {
      for (const url of [`/api/v1/shifts/${hidden.id}`, `/api/v1/shifts/${hidden.id}/slots`]) {
        const response = await t.employee.request('GET', url);
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual(SHIFT_NOT_FOUND);
      }
    }
    expect((await t.employee.request('GET', `/api/v1/events/${draftEvent}/shifts`)).statusCode).toBe(404);
    expect((await t.employee.request('GET', '/api/v1/shifts?status=draft')).json()).toEqual([]);
    expect((await t.employee.request('GET', `/api/v1/shifts/${visible.id}/slots`)).statusCode).toBe(200);
  });
});

describe('another tenant', () => {
  it('gets 404 for every shift route, and changes nothing', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const shift = await newShift(t.admin, eventId, { roleId, publish: false });
    const slot = shift.slots[0];
    const theirRole = await newRole(t.otherAdmin);
    const attempts: [string, string, unknown][] = [
      ['GET', `/api/v1/shifts/${shift.id}`, undefined],
      ['PATCH', `/api/v1/shifts/${shift.id}`, { name: 'X' }],
      ['POST', `/api/v1/shifts/${shift.id}/publish`, undefined],
      ['GET', `/api/v1/shifts/${shift.id}/slots`, undefined],
      ['POST', `/api/v1/shifts/${shift.id}/slots`, { role_id: theirRole, capacity: 1 }],
      ['PATCH', `/api/v1/shifts/${shift.id}/slots/${slot}`, { capacity: 5 }],
      ['DELETE', `/api/v1/shifts/${shift.id}/slots/${slot}`, undefined],
      ['DELETE', `/api/v1/shifts/${shift.id}`, undefined],
      ['GET', `/api/v1/events/${eventId}/shifts`, undefined],
    ];
    for (const [method, url, body] of attempts) {
      const response = await t.otherAdmin.request(method as 'GET', url, body);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    }
    const after = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).json();
    expect(after).toMatchObject({ name: 'Bar', status: 'draft' });
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()).toEqual([
      expect.objectContaining({ id: slot, capacity: 2 }),
    ]);
  });
});

describe('changing shifts', () => {
  it('publishes once; again is 409 INVALID_STATE', async () => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId, publish: false });
    const published = await action(t.admin, `/api/v1/shifts/${shift.id}/publish`);
    expect(published).toMatchObject({ status: 'open', published_at: expect.stringMatching(/Z$/) });
    const again = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/publish`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: { code: 'INVALID_STATE', message: 'shift is already published' } });
    expect((await t.employee.request('POST', `/api/v1/shifts/${shift.id}/publish`)).json()).toEqual(
      FORBIDDEN_BODY,
    );
  });

  it('renames a staffed shift but refuses to move its times or delete it (409)', async () => {
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId });
    await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    const renamed = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Bar, early' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().name).toBe('Bar, early');
    const moved = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, {
      ends_at: '2030-07-02T15:00:00Z',
    });
    expect(moved.statusCode).toBe(409);
    expect(moved.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'shift has assignments; its times change only without them' },
    });
    const deleted = await t.admin.request('DELETE', `/api/v1/shifts/${shift.id}`);
    expect(deleted.statusCode).toBe(409);
    expect(deleted.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'shift has assignments; it can be deleted only without them' },
    });
    const event = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).json().event_id;
    expect((await t.admin.request('DELETE', `/api/v1/events/${event}`)).statusCode).toBe(409);
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).json().ends_at).toBe(
      '2030-07-02T14:00:00.000Z',
    );
  });

  it('moves and deletes a shift nobody is on', async () => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId });
    const moved = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, {
      starts_at: '2030-07-02T09:00:00Z',
    });
    expect(moved.json().starts_at).toBe('2030-07-02T09:00:00.000Z');
    expect(
      (await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { starts_at: '2030-07-02T15:00:00Z' }))
        .statusCode,
    ).toBe(422);
    expect((await t.employee.request('DELETE', `/api/v1/shifts/${shift.id}`)).statusCode).toBe(403);
    expect((await t.admin.request('DELETE', `/api/v1/shifts/${shift.id}`)).statusCode).toBe(204);
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).statusCode).toBe(404);
  });
});

describe('slots', () => {
  it('a new seat or more capacity opens a filled shift; capacity never drops below the fill', async () => {
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId, capacities: [1] });
    const [slot] = shift.slots;
    await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${slot}/claim`, {});
    const status = async () => (await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).json().status;
    expect(await status()).toBe('filled');

    const below = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}/slots/${slot}`, { capacity: 1 });
    expect(below.statusCode).toBe(200);
    const raised = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}/slots/${slot}`, {
      capacity: 3,
    });
    expect(raised.json()).toMatchObject({ capacity: 3, filled_count: 1 });
    expect(await status()).toBe('open');

    await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}/slots/${slot}`, { capacity: 1 });
    expect(await status()).toBe('filled');
    const added = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/slots`, {
      role_id: roleId,
      capacity: 2,
    });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toMatchObject({ shift_id: shift.id, role_id: roleId, capacity: 2, filled_count: 0 });
    expect(await status()).toBe('open');
    expect(
      (await t.admin.request('DELETE', `/api/v1/shifts/${shift.id}/slots/${added.json().id}`)).statusCode,
    ).toBe(204);
    expect(await status()).toBe('filled');
  });

  it('refuses capacity below the fill and removing a slot with assignments (409)', async () => {
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    await qualify(t.admin, t.admin, roleId);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId, capacities: [2] });
    const [slot] = shift.slots;
    await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${slot}/claim`, {});
    await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${slot}/assign`, { user_id: t.admin.userId });
    const below = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}/slots/${slot}`, { capacity: 1 });
    expect(below.statusCode).toBe(409);
    expect(below.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'capacity 1 is below the 2 seats taken' },
    });
    const removed = await t.admin.request('DELETE', `/api/v1/shifts/${shift.id}/slots/${slot}`);
    expect(removed.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'slot has assignments; unassign them first' },
    });
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()).toEqual([
      expect.objectContaining({ id: slot, capacity: 2, filled_count: 2 }),
    ]);
  });

  it.each([
    ['a capacity of 0', { capacity: 0 }, 'capacity: must be >= 1'],
    ['a capacity above 10000', { capacity: 10001 }, 'capacity: must be <= 10000'],
    ['no capacity', {}, 'capacity: is required'],
  ])('refuses %s with 422', async (_label, body, message) => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId });
    const response = await t.admin.request(
      'PATCH',
      `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}`,
      body,
    );
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });

  it('refuses a new slot whose role the tenant does not have (422)', async () => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId });
    const response = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/slots`, {
      role_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c',
      capacity: 1,
    });
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'role_id: no such role in this tenant' },
    });
  });

  it('answers 404 for a slot of another shift and 403 to an employee', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const first = await newShift(t.admin, eventId, { roleId });
    const second = await newShift(t.admin, eventId, { roleId });
    const crossed = await t.admin.request('PATCH', `/api/v1/shifts/${first.id}/slots/${second.slots[0]}`, {
      capacity: 5,
    });
    expect(crossed.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'slot not found' } });
    expect(
      (await t.admin.request('DELETE', `/api/v1/shifts/${first.id}/slots/${second.slots[0]}`)).statusCode,
    ).toBe(404);
    expect(
      (
        await t.employee.request('POST', `/api/v1/shifts/${first.id}/slots`, { role_id: roleId, capacity: 1 })
      ).json(),
    ).toEqual(FORBIDDEN_BODY);
  });
});

describe('POST /api/v1/shifts/publish', () => {
  const statusOf = async (id: string) => (await t.admin.request('GET', `/api/v1/shifts/${id}`)).json().status;

  it('publishes the drafts named by id in one call, counting only those that were drafts', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const drafts = [];
    for (const day of ['03', '04', '05']) {
      drafts.push(
        await newShift(t.admin, eventId, {
          roleId,
          publish: false,
          starts_at: `2030-07-${day}T10:00:00Z`,
          ends_at: `2030-07-${day}T14:00:00Z`,
        }),
      );
    }
    const live = await newShift(t.admin, eventId, { roleId });
    const untouched = await newShift(t.admin, eventId, { roleId, publish: false });
    const before = (await t.admin.request('GET', `/api/v1/shifts/${live.id}`)).json().published_at;
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', {
      shift_ids: [...drafts.map((s) => s.id), live.id],
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ published: 3, events_published: 0 });
    for (const shift of drafts) expect(await statusOf(shift.id)).toBe('open');
    expect(await statusOf(untouched.id)).toBe('draft');
    // Published already: left as it was.
    expect((await t.admin.request('GET', `/api/v1/shifts/${live.id}`)).json().published_at).toBe(before);
    // Employees see them now (the event is published).
    const seen = (await t.employee.request('GET', `/api/v1/events/${eventId}/shifts`)).json();
    expect(seen.map((s: { id: string }) => s.id)).toEqual([live.id, ...drafts.map((s) => s.id)]);
    // Again: nothing left to publish.
    const again = await t.admin.request('POST', '/api/v1/shifts/publish', { shift_ids: [drafts[0]?.id] });
    expect(again.json()).toEqual({ published: 0, events_published: 0 });
  });

  it('publishes every draft of an event, and only of that event', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin, { publish: false });
    const otherEvent = await newEvent(t.admin);
    const bulk = await t.admin.request('POST', `/api/v1/events/${eventId}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
    });
    expect(bulk.statusCode, bulk.body).toBe(201);
    const elsewhere = await newShift(t.admin, otherEvent, { roleId, publish: false });
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', { event_id: eventId });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ published: bulk.json().length, events_published: 0 });
    const statuses = (await t.admin.request('GET', `/api/v1/events/${eventId}/shifts`))
      .json()
      .map((s: { status: string }) => s.status);
    expect(new Set(statuses)).toEqual(new Set(['open']));
    expect(await statusOf(elsewhere.id)).toBe('draft');
    // The event itself stays a draft: publishing shifts does not publish their event.
    expect((await t.admin.request('GET', `/api/v1/events/${eventId}`)).json().status).toBe('draft');
    expect((await t.admin.request('POST', '/api/v1/shifts/publish', { event_id: eventId })).json()).toEqual({
      published: 0,
      events_published: 0,
    });
  });

  it('refuses ids the tenant does not have (422 naming each) and publishes nothing', async () => {
    const roleId = await newRole(t.admin);
    const mine = await newShift(t.admin, await newEvent(t.admin), { roleId, publish: false });
    const theirs = await newShift(t.otherAdmin, await newEvent(t.otherAdmin), {
      roleId: await newRole(t.otherAdmin),
      publish: false,
    });
    const missing = '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c';
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', {
      shift_ids: [mine.id, theirs.id, missing],
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: `shift_ids: no such shift in this tenant: ${theirs.id}, ${missing}`,
      },
    });
    expect(await statusOf(mine.id)).toBe('draft');
    const theirStatus = (await t.otherAdmin.request('GET', `/api/v1/shifts/${theirs.id}`)).json().status;
    expect(theirStatus).toBe('draft');
  });

  it("refuses another tenant's event as unknown (422) and publishes nothing", async () => {
    const theirEvent = await newEvent(t.otherAdmin);
    const theirs = await newShift(t.otherAdmin, theirEvent, {
      roleId: await newRole(t.otherAdmin),
      publish: false,
    });
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', { event_id: theirEvent });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'event_id: no such event in this tenant' },
    });
    expect((await t.otherAdmin.request('GET', `/api/v1/shifts/${theirs.id}`)).json().status).toBe('draft');
  });

  const id = (i: number) => i.toString(16).padStart(32, '0');
  it.each([
    ['an empty body', {}, 'body: give exactly one of shift_ids or event_id'],
    [
      'both shift_ids and event_id',
      { shift_ids: [id(1)], event_id: id(2) },
      'body: give exactly one of shift_ids or event_id',
    ],
    ['an empty list', { shift_ids: [] }, 'shift_ids: must NOT have fewer than 1 items'],
    [
      'more than 1000 ids',
      { shift_ids: Array.from({ length: 1001 }, (_, i) => id(i)) },
      'shift_ids: must NOT have more than 1000 items',
    ],
    [
      'an id twice',
      { shift_ids: [id(1), id(1)] },
      'shift_ids: must NOT have duplicate items (items ## 1 and 0 are identical)',
    ],
    ['a malformed id', { shift_ids: ['42'] }, 'shift_ids[0]: must match pattern "^[0-9a-f]{32}$"'],
    ['an unknown field', { shift_ids: [id(1)], all: true }, 'all: is not an allowed field'],
  ])('refuses %s with 422', async (_label, body, message) => {
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });

  it('answers the fixed 403 to an employee, publishing nothing', async () => {
    const roleId = await newRole(t.admin);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId, publish: false });
    const response = await t.employee.request('POST', '/api/v1/shifts/publish', { shift_ids: [shift.id] });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    expect(await statusOf(shift.id)).toBe('draft');
  });
});

describe('the time filter on GET /api/v1/shifts and GET /api/v1/events/{id}/shifts', () => {
  /** Four shifts of one event around 2 and 3 July, and one of another event. */
  async function week() {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const otherEvent = await newEvent(t.admin);
    const at = (starts_at: string, ends_at: string, options: { publish?: boolean; event?: string } = {}) =>
      newShift(t.admin, options.event ?? eventId, {
        roleId,
        starts_at,
        ends_at,
        publish: options.publish ?? true,
      });
    const morning = (await at('2030-07-02T10:00:00Z', '2030-07-02T14:00:00Z')).id;
    const afternoon = (await at('2030-07-02T14:00:00Z', '2030-07-02T18:00:00Z', { publish: false })).id;
    const night = (await at('2030-07-02T22:00:00Z', '2030-07-03T06:00:00Z')).id;
    const next = (await at('2030-07-03T10:00:00Z', '2030-07-03T14:00:00Z')).id;
    const elsewhere = (await at('2030-07-02T12:00:00Z', '2030-07-02T13:00:00Z', { event: otherEvent })).id;
    return { eventId, morning, afternoon, night, next, elsewhere };
  }
  const ids = async (caller: typeof t.admin, url: string) => {
    const response = await caller.request('GET', url);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().map((s: { id: string }) => s.id);
  };

  it('keeps the shifts overlapping [from, to): touching ends do not overlap', async () => {
    const w = await week();
    expect(await ids(t.admin, '/api/v1/shifts?from=2030-07-02T14:00:00Z&to=2030-07-03T00:00:00Z')).toEqual([
      w.afternoon,
      w.night,
    ]);
    // An offset is read as the instant it names (+ written %2B in a query string).
    expect(
      await ids(t.admin, '/api/v1/shifts?from=2030-07-02T16:00:00%2B02:00&to=2030-07-03T02:00:00%2B02:00'),
    ).toEqual([w.afternoon, w.night]);
    expect(await ids(t.admin, '/api/v1/shifts?to=2030-07-02T10:00:00Z')).toEqual([]);
    expect(await ids(t.admin, '/api/v1/shifts?to=2030-07-02T10:00:01Z')).toEqual([w.morning]);
    expect(await ids(t.admin, '/api/v1/shifts?from=2030-07-03T05:59:59.999Z')).toEqual([w.night, w.next]);
    expect(await ids(t.admin, '/api/v1/shifts?from=2030-07-02T12:30:00Z&to=2030-07-02T12:31:00Z')).toEqual([
      w.morning,
      w.elsewhere,
    ]);
  });

  it('composes with the other filters and with what employees see', async () => {
    const w = await week();
    const window = 'from=2030-07-02T12:00:00Z&to=2030-07-03T12:00:00Z';
    expect(await ids(t.admin, `/api/v1/shifts?${window}&event_id=${w.eventId}`)).toEqual([
      w.morning,
      w.afternoon,
      w.night,
      w.next,
    ]);
    expect(await ids(t.admin, `/api/v1/shifts?${window}&status=draft`)).toEqual([w.afternoon]);
    expect(await ids(t.employee, `/api/v1/shifts?${window}`)).toEqual([
      w.morning,
      w.elsewhere,
      w.night,
      w.next,
    ]);
    expect(await ids(t.admin, `/api/v1/events/${w.eventId}/shifts?from=2030-07-02T20:00:00Z`)).toEqual([
      w.night,
      w.next,
    ]);
    expect(await ids(t.employee, `/api/v1/events/${w.eventId}/shifts?to=2030-07-02T15:00:00Z`)).toEqual([
      w.morning,
    ]);
    // Another tenant sees none of them, in or out of the window.
    expect(await ids(t.otherAdmin, `/api/v1/shifts?${window}`)).toEqual([]);
    const theirs = await t.otherAdmin.request('GET', `/api/v1/events/${w.eventId}/shifts?${window}`);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'event not found' } });
  });

  it.each([
    [
      'to equal to from',
      'from=2030-07-02T10:00:00Z&to=2030-07-02T12:00:00%2B02:00',
      'to: must be after from',
    ],
    ['to before from', 'from=2030-07-02T10:00:00Z&to=2030-07-01T10:00:00Z', 'to: must be after from'],
    ['an impossible date', 'from=2030-02-30', 'from: must match format "date-time" or "date"'],
    [
      'a date and a time without an offset',
      'from=2030-07-02T10:00',
      'from: must match format "date-time" or "date"',
    ],
    ['to a day not after from', 'from=2030-07-02&to=2030-07-01', 'to: must be after from'],
    [
      'an offset of -23:59',
      'from=2030-07-02T10:00:00-23:59',
      'from: must match format "date-time" or "date"',
    ],
    [
      'an offset whose + was not encoded',
      'to=2030-07-02T10:00:00+02:00',
      'to: must match format "date-time" or "date"',
    ],
  ])('refuses %s with 422 on both lists', async (_label, query, message) => {
    const eventId = await newEvent(t.admin);
    for (const url of [`/api/v1/shifts?${query}`, `/api/v1/events/${eventId}/shifts?${query}`]) {
      const response = await t.admin.request('GET', url);
      expect(response.statusCode, url).toBe(422);
      expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    }
  });

  it('takes a window under a millisecond wide on both lists', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin);
    const shift = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-02T10:00:00.0005Z',
      ends_at: '2030-07-02T12:00:00Z',
    });
    const query = 'from=2030-07-02T10:00:00.0001Z&to=2030-07-02T10:00:00.0009Z';
    for (const url of [`/api/v1/shifts?${query}`, `/api/v1/events/${eventId}/shifts?${query}`]) {
      const response = await t.admin.request('GET', url);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().map((s: { id: string }) => s.id)).toEqual([shift.id]);
    }
  });

  it('refuses an unknown parameter on the event’s shifts with 422', async () => {
    const eventId = await newEvent(t.admin);
    const response = await t.admin.request(
      'GET',
      `/api/v1/events/${eventId}/shifts?form=2030-07-02T10:00:00Z`,
    );
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'form: is not an allowed field' },
    });
  });
});

describe('a shift longer than 7 days, stored before shifts were bounded', () => {
  /** A draft shift of a thousand years, written as an old database holds it. */
  async function legacyShift() {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin, {
      starts_at: '2030-07-02T00:00:00Z',
      ends_at: '3030-07-02T00:00:00Z',
    });
    const shift = await newShift(t.admin, eventId, { roleId, publish: false });
    const owner = t.ctx.db.owner;
    await asLegacyRows(owner, () =>
      owner
        .updateTable('shifts')
        .set({ ends_at: '3030-07-02T00:00:00Z' })
        .where('id', '=', shift.id)
        .execute(),
    );
    return { shift, eventId };
  }

  it('is listed, and refused clearly when written again: 409 to publish, 422 to rename or split', async () => {
    const { shift, eventId } = await legacyShift();
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).json().ends_at).toBe(
      '3030-07-02T00:00:00.000Z',
    );
    const notPublishable = {
      error: {
        code: 'INVALID_STATE',
        message: 'a shift lasts at most 7 days; change its times before publishing it',
      },
    };
    const one = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/publish`);
    expect(one.statusCode, one.body).toBe(409);
    expect(one.json()).toEqual(notPublishable);
    for (const body of [{ shift_ids: [shift.id] }, { event_id: eventId }]) {
      const many = await t.admin.request('POST', '/api/v1/shifts/publish', body);
      expect(many.statusCode, many.body).toBe(409);
      expect(many.json()).toEqual(notPublishable);
    }
    const renamed = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Watch' });
    expect(renamed.json(), renamed.body).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'ends_at: a shift lasts at most 7 days' },
    });
    const split = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/split/2`);
    expect(split.json(), split.body).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: 'n: each piece would last more than 7 days; a shift lasts at most 7 days',
      },
    });
    // Given times within 7 days, it is a shift like any other.
    const fixed = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, {
      ends_at: '2030-07-03T00:00:00Z',
    });
    expect(fixed.statusCode, fixed.body).toBe(200);
    expect((await t.admin.request('POST', `/api/v1/shifts/${shift.id}/publish`)).statusCode).toBe(200);
  });
});
