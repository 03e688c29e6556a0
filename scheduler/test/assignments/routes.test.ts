import { describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import { appDbHooks } from '../support/db-hooks.ts';
import {
  created,
  newColleague,
  newEvent,
  newRole,
  newShift,
  qualify,
  tenantOf,
} from '../support/scheduling.ts';

// Fresh, provisioned tenants per test: no test sees what another created.
const hooks = appDbHooks();
const t = useRouteTests({
  // Every address with a street and a city is at the Brandenburg Gate.
  geocoder: { name: 'fixed', geocode: async () => ({ lat: 52.5162699, lng: 13.3777034 }) },
  viewDb: hooks.viewDb,
});

const conflict = (code: string, message: string) => ({ error: { code, message } });
const claimUrl = (shift: { id: string; slots: string[] }, slot = 0) =>
  `/api/v1/shifts/${shift.id}/slots/${shift.slots[slot]}/claim`;

async function qualifiedSetup(capacities = [2]) {
  const roleId = await newRole(t.admin);
  await qualify(t.admin, t.employee, roleId);
  const eventId = await newEvent(t.admin);
  const shift = await newShift(t.admin, eventId, { roleId, capacities });
  return { roleId, eventId, shift };
}

async function fill(shiftId: string): Promise<number[]> {
  const slots = (await t.admin.request('GET', `/api/v1/shifts/${shiftId}/slots`)).json();
  return slots.map((slot: { filled_count: number }) => slot.filled_count);
}

describe('POST /api/v1/shifts/{shift_id}/slots/{slot_id}/claim', () => {
  it('gives the caller a seat and counts it', async () => {
    const { shift } = await qualifiedSetup();
    const response = await t.employee.request('POST', claimUrl(shift));
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: t.employee.tenantId,
      shift_id: shift.id,
      slot_id: shift.slots[0],
      user_id: t.employee.userId,
      source: 'claim',
      assigned_by: t.employee.userId,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(await fill(shift.id)).toEqual([1]);
  });

  it('turns the shift filled when the last seat goes, and open again when one frees', async () => {
    const { shift } = await qualifiedSetup([1]);
    const seat = (await t.employee.request('POST', claimUrl(shift))).json();
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).json().status).toBe('filled');
    const full = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
      user_id: t.admin.userId,
    });
    expect(full.statusCode).toBe(409);
    expect(
      (await t.employee.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat.id}`)).statusCode,
    ).toBe(204);
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}`)).json().status).toBe('open');
    expect(await fill(shift.id)).toEqual([0]);
  });

  it('refuses a full slot with SLOT_FULL', async () => {
    const { roleId, shift } = await qualifiedSetup([1]);
    const colleague = await t.ctx.caller('employee', tenantOf(t.admin), 'employee-2');
    await qualify(t.admin, colleague, roleId);
    await created(t.employee, claimUrl(shift), {});
    const response = await colleague.request('POST', claimUrl(shift));
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(conflict('SLOT_FULL', 'the slot is full'));
  });

  it('refuses a second seat on the same shift with ALREADY_ASSIGNED', async () => {
    const { shift } = await qualifiedSetup([1, 1]);
    await created(t.employee, claimUrl(shift, 0), {});
    const response = await t.employee.request('POST', claimUrl(shift, 1));
    expect(response.json()).toEqual(
      conflict('ALREADY_ASSIGNED', 'the user already holds a seat in this shift'),
    );
    expect(await fill(shift.id)).toEqual([1, 0]);
  });

  it('refuses a slot whose role the caller lacks with NOT_QUALIFIED', async () => {
    const { eventId } = await qualifiedSetup();
    const other = await newRole(t.admin, 'Medic');
    const shift = await newShift(t.admin, eventId, { roleId: other });
    const response = await t.employee.request('POST', claimUrl(shift));
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(
      conflict('NOT_QUALIFIED', 'the user does not hold the role this slot needs'),
    );
  });

  it('refuses an overlapping shift with OVERLAPPING_ASSIGNMENT, and allows one that only touches', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    await created(t.employee, claimUrl(shift), {});
    const overlapping = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-02T13:59:00Z',
      ends_at: '2030-07-02T18:00:00Z',
    });
    const response = await t.employee.request('POST', claimUrl(overlapping));
    expect(response.json()).toEqual(
      conflict('OVERLAPPING_ASSIGNMENT', 'the user is assigned to an overlapping shift'),
    );
    const touching = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-02T14:00:00Z',
      ends_at: '2030-07-02T18:00:00Z',
    });
    expect((await t.employee.request('POST', claimUrl(touching))).statusCode).toBe(201);
  });

  it('refuses an admin claiming a draft shift with INVALID_STATE (assign is the way)', async () => {
    const { roleId, eventId } = await qualifiedSetup();
    await qualify(t.admin, t.admin, roleId);
    const draft = await newShift(t.admin, eventId, { roleId, publish: false });
    const response = await t.admin.request('POST', claimUrl(draft));
    expect(response.json()).toEqual(conflict('INVALID_STATE', 'shift is not published'));
  });

  it('refuses an ended shift with INVALID_STATE', async () => {
    const { roleId, eventId } = await qualifiedSetup();
    const past = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2020-01-01T10:00:00Z',
      ends_at: '2020-01-01T12:00:00Z',
    });
    const response = await t.employee.request('POST', claimUrl(past));
    expect(response.json()).toEqual(conflict('INVALID_STATE', 'shift has ended'));
  });

  it('answers 404 for a draft shift, a shift of a draft event, a slot of another shift, and another tenant', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const draft = await newShift(t.admin, eventId, { roleId, publish: false });
    const draftEvent = await newEvent(t.admin, { publish: false });
    const ofDraftEvent = await newShift(t.admin, draftEvent, { roleId });
    const crossed = { id: shift.id, slots: draft.slots };
    for (const target of [draft, ofDraftEvent, crossed]) {
      const response = await t.employee.request('POST', claimUrl(target));
      expect(response.statusCode).toBe(404);
    }
    const theirs = await t.otherAdmin.request('POST', claimUrl(shift));
    expect(theirs.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'shift not found' } });
    expect(await fill(shift.id)).toEqual([0]);
    expect((await t.employee.request('POST', '/api/v1/shifts/nope/slots/nope/claim')).statusCode).toBe(404);
  });
});

describe('POST /api/v1/shifts/{shift_id}/slots/{slot_id}/assign', () => {
  it('places a qualified employee, also on a draft shift', async () => {
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const shift = await newShift(t.admin, await newEvent(t.admin, { publish: false }), {
      roleId,
      publish: false,
    });
    const response = await t.admin.request(
      'POST',
      `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`,
      {
        user_id: t.employee.userId,
      },
    );
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      user_id: t.employee.userId,
      source: 'assign',
      assigned_by: t.admin.userId,
    });
  });

  it.each([
    [
      'an unknown user',
      { user_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c' },
      'user_id: no such admin or employee in this tenant',
    ],
    ['a malformed user id', { user_id: 'bob' }, 'user_id: must match pattern "^[0-9a-f]{32}$"'],
    ['no body field', {}, 'user_id: is required'],
  ])('refuses %s with 422', async (_label, body, message) => {
    const { shift } = await qualifiedSetup();
    const response = await t.admin.request(
      'POST',
      `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`,
      body,
    );
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });

  it('refuses a customer as the user, and answers 403 to an employee and 404 to another tenant', async () => {
    const { shift } = await qualifiedSetup();
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), 'customer-1');
    const url = `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`;
    expect((await t.admin.request('POST', url, { user_id: customer.userId })).statusCode).toBe(422);
    expect((await t.employee.request('POST', url, { user_id: t.employee.userId })).json()).toEqual(
      FORBIDDEN_BODY,
    );
    expect((await t.otherAdmin.request('POST', url, { user_id: t.employee.userId })).statusCode).toBe(404);
    expect(await fill(shift.id)).toEqual([0]);
  });
});

describe('who is where', () => {
  it('lists the people on a shift to admins only', async () => {
    const { shift } = await qualifiedSetup();
    const seat = (await t.employee.request('POST', claimUrl(shift))).json();
    const url = `/api/v1/shifts/${shift.id}/assignments`;
    expect((await t.admin.request('GET', url)).json()).toEqual([seat]);
    expect((await t.employee.request('GET', url)).json()).toEqual(FORBIDDEN_BODY);
    expect((await t.otherAdmin.request('GET', url)).statusCode).toBe(404);
  });

  it('lists my assignments with shift and event, upcoming first, then past', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const later = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-05T10:00:00Z',
      ends_at: '2030-07-05T12:00:00Z',
    });
    const past = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2020-01-01T10:00:00Z',
      ends_at: '2020-01-01T12:00:00Z',
    });
    await created(t.admin, `/api/v1/shifts/${past.id}/slots/${past.slots[0]}/assign`, {
      user_id: t.employee.userId,
    });
    await created(t.employee, claimUrl(later), {});
    await created(t.employee, claimUrl(shift), {});
    const mine = (await t.employee.request('GET', '/api/v1/me/assignments')).json();
    expect(mine.map((a: { shift_id: string }) => a.shift_id)).toEqual([shift.id, later.id, past.id]);
    expect(mine[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: t.employee.tenantId,
      shift_id: shift.id,
      slot_id: shift.slots[0],
      user_id: t.employee.userId,
      source: 'claim',
      assigned_by: t.employee.userId,
      created_at: expect.stringMatching(/Z$/),
      shift: {
        id: shift.id,
        name: 'Bar',
        starts_at: '2030-07-02T10:00:00.000Z',
        ends_at: '2030-07-02T14:00:00.000Z',
        status: 'open',
      },
      event: {
        id: eventId,
        name: 'Festival',
        starts_at: '2030-07-01T00:00:00.000Z',
        ends_at: '2030-07-08T00:00:00.000Z',
      },
      role: { id: roleId, name: 'Cook' },
      location: null,
    });
    expect(mine[2].shift.status).toBe('completed');
    expect((await t.admin.request('GET', '/api/v1/me/assignments')).json()).toEqual([]);
  });
});

describe('GET /api/v1/me/assignments: role and location', () => {
  /** The statements one GET of the caller's assignments runs, and its answer. */
  async function myAssignmentsCounted() {
    const before = hooks.statements.length;
    const response = await t.employee.request('GET', '/api/v1/me/assignments');
    expect(response.statusCode, response.body).toBe(200);
    return { mine: response.json(), statements: hooks.statements.slice(before) };
  }

  it('carries the slot’s role and the shift’s place (address parts, coordinates when known), else the event’s, or null', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const medic = await newRole(t.admin, 'Medic');
    await qualify(t.admin, t.employee, medic);
    const hall = await created(t.admin, '/api/v1/locations', {
      name: 'Main hall',
      street: 'Pariser Platz 1',
      city: 'Berlin',
      postal_code: '10117',
      country: 'DE',
    });
    const tent = await created(t.admin, '/api/v1/locations', { name: 'Tent', city: 'Potsdam' });
    const yard = await created(t.admin, '/api/v1/locations', { name: 'Yard' });
    const at = (starts_at: string, role: string) =>
      newShift(t.admin, eventId, { roleId: role, starts_at, ends_at: starts_at.replace('T10', 'T12') });
    const medicShift = await at('2030-07-03T10:00:00Z', medic);
    const tentShift = await at('2030-07-04T10:00:00Z', roleId);
    const yardShift = await at('2030-07-05T10:00:00Z', roleId);
    const bare = await at('2030-07-06T10:00:00Z', roleId);
    for (const [staffed, location] of [
      [shift, hall],
      [medicShift, hall],
      [tentShift, tent],
      [yardShift, yard],
    ] as const) {
      const patched = await t.admin.request('PATCH', `/api/v1/shifts/${staffed.id}`, {
        location_id: location.id,
      });
      expect(patched.statusCode, patched.body).toBe(200);
    }
    for (const staffed of [shift, medicShift, tentShift, yardShift, bare]) {
      await created(t.employee, claimUrl(staffed), {});
    }
    const { mine } = await myAssignmentsCounted();
    expect(mine.map((a: { shift_id: string }) => a.shift_id)).toEqual([
      shift.id,
      medicShift.id,
      tentShift.id,
      yardShift.id,
      bare.id,
    ]);
    const hallOnWire = {
      id: hall.id,
      name: 'Main hall',
      street: 'Pariser Platz 1',
      postal_code: '10117',
      city: 'Berlin',
      country: 'DE',
      lat: 52.5162699,
      lng: 13.3777034,
    };
    const none = { street: null, postal_code: null, city: null, country: null, lat: null, lng: null };
    const tentOnWire = { ...none, id: tent.id, name: 'Tent', city: 'Potsdam' };
    expect(mine.map((a: { role: unknown; location: unknown }) => [a.role, a.location])).toEqual([
      [{ id: roleId, name: 'Cook' }, hallOnWire],
      [{ id: medic, name: 'Medic' }, hallOnWire],
      [{ id: roleId, name: 'Cook' }, tentOnWire],
      [
        { id: roleId, name: 'Cook' },
        { ...none, id: yard.id, name: 'Yard' },
      ],
      [{ id: roleId, name: 'Cook' }, null],
    ]);
    // A shift that names no place is at its event's.
    const moved = await t.admin.request('PATCH', `/api/v1/events/${eventId}`, { location_id: tent.id });
    expect(moved.statusCode, moved.body).toBe(200);
    const after = (await myAssignmentsCounted()).mine as { shift_id: string; location: unknown }[];
    expect(after.find((a) => a.shift_id === bare.id)?.location).toEqual(tentOnWire);
    expect(after.find((a) => a.shift_id === shift.id)?.location).toEqual(hallOnWire);
  });

  it('reads them in one statement, however many assignments there are (no query per shift)', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const hall = await created(t.admin, '/api/v1/locations', { name: 'Main hall' });
    await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { location_id: hall.id });
    await created(t.employee, claimUrl(shift), {});
    const one = await myAssignmentsCounted();
    expect(one.mine).toHaveLength(1);
    for (const day of ['03', '04', '05', '06']) {
      const more = await newShift(t.admin, eventId, {
        roleId,
        starts_at: `2030-07-${day}T10:00:00Z`,
        ends_at: `2030-07-${day}T12:00:00Z`,
      });
      await t.admin.request('PATCH', `/api/v1/shifts/${more.id}`, { location_id: hall.id });
      await created(t.employee, claimUrl(more), {});
    }
    const five = await myAssignmentsCounted();
    expect(five.mine).toHaveLength(5);
    expect(five.statements).toEqual(one.statements);
    const reads = five.statements.filter((statement) => statement.tables.includes('shift_assignments'));
    expect(reads).toHaveLength(1);
    expect(reads[0]?.tables).toEqual(
      expect.arrayContaining(['shift_assignments', 'shifts', 'events', 'shift_slots', 'roles', 'locations']),
    );
    for (const table of ['roles', 'locations', 'shift_slots']) {
      expect(five.statements.filter((statement) => statement.tables.includes(table))).toHaveLength(1);
    }
  });
});

describe('GET /api/v1/me/assignments and drafts', () => {
  it('shows employees no draft shift and no shift of a draft event, as every other route; admins see theirs', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const draftShift = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-03T10:00:00Z',
      ends_at: '2030-07-03T12:00:00Z',
      publish: false,
    });
    const draftEvent = await newEvent(t.admin, { publish: false });
    const shiftOfDraftEvent = await newShift(t.admin, draftEvent, {
      roleId,
      starts_at: '2030-07-04T10:00:00Z',
      ends_at: '2030-07-04T12:00:00Z',
    });
    for (const staffed of [shift, draftShift, shiftOfDraftEvent]) {
      await created(t.admin, `/api/v1/shifts/${staffed.id}/slots/${staffed.slots[0]}/assign`, {
        user_id: t.employee.userId,
      });
    }
    const mine = (await t.employee.request('GET', '/api/v1/me/assignments')).json();
    expect(mine.map((a: { shift_id: string }) => a.shift_id)).toEqual([shift.id]);
    // Each hidden one is 404 to the employee on its own route too.
    for (const hidden of [draftShift, shiftOfDraftEvent]) {
      expect((await t.employee.request('GET', `/api/v1/shifts/${hidden.id}`)).statusCode).toBe(404);
    }
    // An admin placed on drafts sees them: admins see drafts everywhere.
    await qualify(t.admin, t.admin, roleId);
    await created(t.admin, `/api/v1/shifts/${draftShift.id}/slots/${draftShift.slots[0]}/assign`, {
      user_id: t.admin.userId,
    });
    const admins = (await t.admin.request('GET', '/api/v1/me/assignments')).json();
    expect(admins.map((a: { shift_id: string }) => a.shift_id)).toEqual([draftShift.id]);
  });
});

describe('GET /api/v1/me/assignments?from=&to=', () => {
  it('keeps the assignments whose shift overlaps [from, to), in the same order', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const at = (starts_at: string, ends_at: string) =>
      newShift(t.admin, eventId, { roleId, starts_at, ends_at });
    const night = await at('2030-07-02T22:00:00Z', '2030-07-03T06:00:00Z');
    const later = await at('2030-07-05T10:00:00Z', '2030-07-05T12:00:00Z');
    const past = await at('2020-01-01T10:00:00Z', '2020-01-01T12:00:00Z');
    for (const staffed of [shift, night, later, past]) {
      await created(t.admin, `/api/v1/shifts/${staffed.id}/slots/${staffed.slots[0]}/assign`, {
        user_id: t.employee.userId,
      });
    }
    // A colleague's seat in the window is not the caller's.
    const colleague = await t.ctx.caller('employee', tenantOf(t.admin), 'employee-2');
    await qualify(t.admin, colleague, roleId);
    await created(colleague, claimUrl(later), {});
    const shifts = async (query: string) => {
      const response = await t.employee.request('GET', `/api/v1/me/assignments?${query}`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json().map((a: { shift_id: string }) => a.shift_id);
    };
    // shift: 2 July 10:00-14:00; night: 22:00-06:00; later: 5 July; past: 2020.
    expect(await shifts('from=2030-07-02T14:00:00Z&to=2030-07-05T10:00:00Z')).toEqual([night.id]);
    expect(await shifts('from=2030-07-02T13:59:00Z&to=2030-07-05T10:00:01Z')).toEqual([
      shift.id,
      night.id,
      later.id,
    ]);
    expect(await shifts('to=2030-01-01T00:00:00Z')).toEqual([past.id]);
    expect(await shifts('from=2030-07-03T00:00:00Z')).toEqual([night.id, later.id]);
    expect(await shifts('from=2031-01-01T00:00:00Z')).toEqual([]);
  });

  /** The tenant's time zone, and the caller's seats on shifts at these UTC times, by shift id. */
  async function seatsIn(zone: string, times: [string, string][]): Promise<string[]> {
    const settings = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      timezone: zone,
    });
    expect(settings.statusCode, settings.body).toBe(200);
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const eventId = await newEvent(t.admin);
    const ids: string[] = [];
    for (const [starts_at, ends_at] of times) {
      const shift = await newShift(t.admin, eventId, { roleId, starts_at, ends_at });
      await created(t.employee, claimUrl(shift), {});
      ids.push(shift.id);
    }
    return ids;
  }
  const mine = async (query: string) => {
    const response = await t.employee.request('GET', `/api/v1/me/assignments?${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().map((a: { shift_id: string }) => a.shift_id);
  };

  it('reads a date as that day’s 00:00 in the tenant’s time zone, far from UTC', async () => {
    // Kiritimati is UTC+14: 2 July there is 1 July 10:00 to 2 July 10:00 in UTC.
    const [lateFirst, earlySecond, third] = await seatsIn('Pacific/Kiritimati', [
      ['2030-07-01T09:00:00Z', '2030-07-01T11:00:00Z'], // 1 July 23:00 to 2 July 01:00 there
      ['2030-07-01T11:00:00Z', '2030-07-01T12:00:00Z'], // 2 July 01:00 to 02:00
      ['2030-07-02T10:00:00Z', '2030-07-02T11:00:00Z'], // 3 July 00:00 to 01:00
    ]);
    expect(await mine('from=2030-07-02&to=2030-07-03')).toEqual([lateFirst, earlySecond]);
    expect(await mine('from=2030-07-03')).toEqual([third]);
    expect(await mine('to=2030-07-02')).toEqual([lateFirst]);
    // A date and an instant together.
    expect(await mine('from=2030-07-02&to=2030-07-01T10:30:00Z')).toEqual([lateFirst]);
    expect(await mine('from=2030-07-01T11:30:00Z&to=2030-07-04')).toEqual([earlySecond, third]);
  });

  it('makes a day of 25 hours of the day the clocks go back', async () => {
    // Berlin falls back on 27 October 2030: that day is 26 October 22:00 to 27 October 23:00 in UTC.
    const [before, first, last] = await seatsIn('Europe/Berlin', [
      ['2030-10-26T21:30:00Z', '2030-10-26T22:00:00Z'], // 26 October 23:30 to 00:00 CEST
      ['2030-10-26T22:00:00Z', '2030-10-26T22:30:00Z'], // 27 October 00:00 CEST
      ['2030-10-27T22:30:00Z', '2030-10-27T23:00:00Z'], // 27 October 23:30 CET, its 25th hour
    ]);
    expect(await mine('from=2030-10-27&to=2030-10-28')).toEqual([first, last]);
    expect(await mine('from=2030-10-26&to=2030-10-27')).toEqual([before]);
  });

  it.each([
    ['to equal to from', 'from=2030-07-02T10:00:00Z&to=2030-07-02T10:00:00.000Z', 'to: must be after from'],
    ['to before from', 'from=2030-07-02T10:00:00Z&to=2030-07-02T09:00:00Z', 'to: must be after from'],
    ['a malformed time', 'from=yesterday', 'from: must match format "date-time" or "date"'],
    ['an impossible date', 'from=2026-02-30', 'from: must match format "date-time" or "date"'],
    ['a date without its day', 'to=2026-02', 'to: must match format "date-time" or "date"'],
    ['a day not after from', 'from=2026-12-02&to=2026-12-01', 'to: must be after from'],
    ['the same day as from', 'from=2026-12-01&to=2026-12-01', 'to: must be after from'],
    ['an offset of +16:00', 'to=2030-01-01T00:00:00%2B16:00', 'to: must match format "date-time" or "date"'],
    ['an unknown parameter', 'since=2030-07-02T10:00:00Z', 'since: is not an allowed field'],
  ])('refuses %s with 422', async (_label, query, message) => {
    const response = await t.employee.request('GET', `/api/v1/me/assignments?${query}`);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });
});

describe('GET /api/v1/users/{id}/assignments', () => {
  const theirs = (caller: Caller, userId: string, query = '') =>
    caller.request('GET', `/api/v1/users/${userId}/assignments${query}`);

  it('gives an admin exactly what the person reads on /me/assignments: shape, order, window', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const night = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-02T22:00:00Z',
      ends_at: '2030-07-03T06:00:00Z',
    });
    const past = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2020-01-01T10:00:00Z',
      ends_at: '2020-01-01T12:00:00Z',
    });
    for (const staffed of [past, night, shift]) {
      await created(t.admin, `/api/v1/shifts/${staffed.id}/slots/${staffed.slots[0]}/assign`, {
        user_id: t.employee.userId,
      });
    }
    // The admin's own seat is not the employee's.
    await qualify(t.admin, t.admin, roleId);
    await created(t.admin, `/api/v1/shifts/${night.id}/slots/${night.slots[0]}/assign`, {
      user_id: t.admin.userId,
    });
    for (const query of [
      '',
      '?from=2030-07-02T14:00:00Z',
      '?from=2030-07-02&to=2030-07-03',
      '?to=2030-01-01',
    ]) {
      const own = await t.employee.request('GET', `/api/v1/me/assignments${query}`);
      const read = await theirs(t.admin, t.employee.userId, query);
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json(), query).toEqual(own.json());
    }
    const all = (await theirs(t.admin, t.employee.userId)).json() as { shift_id: string }[];
    expect(all.map((a) => a.shift_id)).toEqual([shift.id, night.id, past.id]);
    expect(all[0]).toMatchObject({
      user_id: t.employee.userId,
      shift: { id: shift.id, name: 'Bar' },
      role: { id: roleId },
      event: { id: eventId },
    });
    // An admin's own seats, read as anyone else's.
    expect((await theirs(t.admin, t.admin.userId)).json()).toEqual(
      (await t.admin.request('GET', '/api/v1/me/assignments')).json(),
    );
  });

  it('shows an admin the person’s seats in drafts too, which the person does not see', async () => {
    const { roleId, eventId } = await qualifiedSetup();
    const draft = await newShift(t.admin, eventId, { roleId, publish: false });
    await created(t.admin, `/api/v1/shifts/${draft.id}/slots/${draft.slots[0]}/assign`, {
      user_id: t.employee.userId,
    });
    expect((await t.employee.request('GET', '/api/v1/me/assignments')).json()).toEqual([]);
    const read = (await theirs(t.admin, t.employee.userId)).json() as { shift_id: string }[];
    expect(read.map((a) => a.shift_id)).toEqual([draft.id]);
  });

  it('is 403 to an employee, for a colleague and for themselves', async () => {
    for (const userId of [t.employee.userId, t.admin.userId]) {
      const response = await theirs(t.employee, userId);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
  });

  it('is 404 for another tenant’s user, a customer, an unknown and a malformed id', async () => {
    const { roleId, shift } = await qualifiedSetup();
    // A subject only this tenant has, with a seat: ids derive from issuer and subject, not tenant.
    const worker = await newColleague(t.ctx, t.admin, roleId);
    await created(worker, claimUrl(shift), {});
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), uniqueName('customer'), {
      customer: 'c-1',
    });
    const stranger = await t.ctx.caller('employee', tenantOf(t.otherAdmin), uniqueName('stranger'));
    for (const [caller, userId] of [
      [t.otherAdmin, worker.userId],
      [t.admin, stranger.userId],
      [t.admin, customer.userId],
      [t.admin, '0193a1b2c3d47e8f9a0b1c2d3e4f5aff'],
      [t.admin, 'nope'],
    ] as const) {
      const response = await theirs(caller, userId);
      expect(response.statusCode, `${userId}: ${response.body}`).toBe(404);
      expect(response.json()).toEqual(conflict('NOT_FOUND', 'user not found'));
    }
  });

  it.each([
    ['to before from', '?from=2030-07-02T10:00:00Z&to=2030-07-02T09:00:00Z', 'to: must be after from'],
    ['the same day as from', '?from=2026-12-01&to=2026-12-01', 'to: must be after from'],
    ['an impossible date', '?from=2026-02-30', 'from: must match format "date-time" or "date"'],
    ['an unknown parameter', '?user_id=0193a1b2c3d47e8f9a0b1c2d3e4f5aff', 'user_id: is not an allowed field'],
  ])('refuses %s with 422', async (_label, query, message) => {
    const response = await theirs(t.admin, t.employee.userId, query);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });
});

describe('DELETE /api/v1/shifts/{shift_id}/assignments/{assignment_id}', () => {
  it("lets an employee withdraw an own claim before the start, and nobody else's", async () => {
    const { roleId, shift } = await qualifiedSetup();
    const colleague = await t.ctx.caller('employee', tenantOf(t.admin), 'employee-2');
    await qualify(t.admin, colleague, roleId);
    const mine = (await t.employee.request('POST', claimUrl(shift))).json();
    const theirs = (await colleague.request('POST', claimUrl(shift))).json();
    const url = (id: string) => `/api/v1/shifts/${shift.id}/assignments/${id}`;
    const notMine = await t.employee.request('DELETE', url(theirs.id));
    expect(notMine.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'assignment not found' } });
    expect((await t.otherAdmin.request('DELETE', url(mine.id))).statusCode).toBe(404);
    expect((await t.employee.request('DELETE', url(mine.id))).statusCode).toBe(204);
    expect((await t.admin.request('DELETE', url(theirs.id))).statusCode).toBe(204);
    expect((await t.admin.request('DELETE', url(theirs.id))).statusCode).toBe(404);
    expect(await fill(shift.id)).toEqual([0]);
  });

  it('refuses an employee a seat an admin gave them, and a shift that has started (409)', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const given = (
      await t.admin.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: t.employee.userId,
      })
    ).json();
    const byAdmin = await t.employee.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${given.id}`);
    expect(byAdmin.json()).toEqual(
      conflict('INVALID_STATE', 'an admin assigned this seat; only an admin can remove it'),
    );
    const running = await newShift(t.admin, eventId, {
      roleId,
      starts_at: new Date(Date.now() - 3600_000).toISOString(),
      ends_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    const seat = (await t.employee.request('POST', claimUrl(running))).json();
    const started = await t.employee.request('DELETE', `/api/v1/shifts/${running.id}/assignments/${seat.id}`);
    expect(started.json()).toEqual(conflict('INVALID_STATE', 'the shift has started; ask an admin'));
    expect(await fill(running.id)).toEqual([1]);
  });
});

describe('concurrent claims', () => {
  it('fills a slot of capacity 5 with exactly 5 of 200 parallel claims; every other answer is SLOT_FULL', async () => {
    const roleId = await newRole(t.admin);
    const tenant = tenantOf(t.admin);
    const staff = await Promise.all(
      Array.from({ length: 200 }, (_, i) => t.ctx.caller('employee', tenant, `crowd-${i}`)),
    );
    for (const person of staff) await qualify(t.admin, person, roleId);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId, capacities: [5] });
    const answers = await Promise.all(staff.map((person) => person.request('POST', claimUrl(shift))));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(195);
    for (const answer of answers.filter((a) => a.statusCode === 409)) {
      expect(answer.json()).toEqual(conflict('SLOT_FULL', 'the slot is full'));
    }
    expect(await fill(shift.id)).toEqual([5]);
    expect((await t.admin.request('GET', `/api/v1/shifts/${shift.id}/assignments`)).json()).toHaveLength(5);
  });

  it('gives one user one seat of 20 parallel claims on one shift', async () => {
    const { shift } = await qualifiedSetup([10, 10]);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.employee.request('POST', claimUrl(shift, i % 2))),
    );
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    for (const answer of answers.filter((a) => a.statusCode !== 201)) {
      expect(answer.json()).toEqual(
        conflict('ALREADY_ASSIGNED', 'the user already holds a seat in this shift'),
      );
    }
    expect((await fill(shift.id)).reduce((a, b) => a + b)).toBe(1);
  });

  it('gives one user one of two overlapping shifts claimed in parallel', async () => {
    const { roleId, eventId, shift } = await qualifiedSetup();
    const other = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-02T12:00:00Z',
      ends_at: '2030-07-02T16:00:00Z',
    });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.employee.request('POST', claimUrl(i % 2 ? other : shift))),
    );
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    const codes = new Set(answers.filter((a) => a.statusCode !== 201).map((a) => a.json().error.code));
    expect([...codes].every((c) => c === 'OVERLAPPING_ASSIGNMENT' || c === 'ALREADY_ASSIGNED')).toBe(true);
    expect([...(await fill(shift.id)), ...(await fill(other.id))].reduce((a, b) => a + b)).toBe(1);
  });

  it('keeps the count exact while seats are withdrawn and claimed in parallel', async () => {
    const roleId = await newRole(t.admin);
    const tenant = tenantOf(t.admin);
    const staff = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.ctx.caller('employee', tenant, `mix-${i}`)),
    );
    for (const person of staff) await qualify(t.admin, person, roleId);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId, capacities: [10] });
    const first = staff.slice(0, 10);
    const seats = await Promise.all(
      first.map(async (person) => (await person.request('POST', claimUrl(shift))).json()),
    );
    const answers = await Promise.all([
      ...first.map((person, i) =>
        person.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seats[i].id}`),
      ),
      ...staff.slice(10).map((person) => person.request('POST', claimUrl(shift))),
    ]);
    const withdrawn = answers.slice(0, 10).filter((a) => a.statusCode === 204).length;
    const claimed = answers.slice(10).filter((a) => a.statusCode === 201).length;
    expect(withdrawn).toBe(10);
    const held = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}/assignments`)).json().length;
    expect(held).toBe(claimed);
    expect(await fill(shift.id)).toEqual([held]);
    for (const answer of answers) expect(answer.statusCode).toBeLessThan(500);
  });
});

describe('GET /api/v1/shifts/{shift_id}/colleagues', () => {
  const colleaguesOf = (caller: Caller, shiftId: string) =>
    caller.request('GET', `/api/v1/shifts/${shiftId}/colleagues`);

  async function showColleagues(on: boolean) {
    const response = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      shift_colleagues_visible: on,
    });
    expect(response.statusCode, response.body).toBe(200);
  }

  /** Eve (employee) and Anna on a shift, Bob qualified but not on it. */
  async function crew() {
    const { roleId, eventId, shift } = await qualifiedSetup([3]);
    const tenant = tenantOf(t.admin);
    const anna = await t.ctx.caller('employee', tenant, uniqueName('anna'), { name: 'Anna' });
    const bob = await t.ctx.caller('employee', tenant, uniqueName('bob'), { name: 'Bob' });
    await qualify(t.admin, anna, roleId);
    await qualify(t.admin, bob, roleId);
    await created(t.employee, claimUrl(shift), {});
    await created(anna, claimUrl(shift), {});
    return { roleId, eventId, shift, anna, bob };
  }

  it('shows an employee on the shift the others on it, by name and role, when the tenant shows them', async () => {
    const { roleId, shift, anna } = await crew();
    await showColleagues(true);
    const role = (await t.admin.request('GET', '/api/v1/roles'))
      .json()
      .find((r: { id: string }) => r.id === roleId);
    const response = await colleaguesOf(t.employee, shift.id);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual([
      { id: anna.userId, name: 'Anna', role: { id: roleId, name: role.name } },
    ]);
    // Anna sees Eve; an admin, on it or not, sees both.
    const eve = (await t.employee.request('GET', '/api/v1/me')).json().display_name;
    expect((await colleaguesOf(anna, shift.id)).json()).toEqual([
      { id: t.employee.userId, name: eve, role: { id: roleId, name: role.name } },
    ]);
    expect(
      (await colleaguesOf(t.admin, shift.id))
        .json()
        .map((p: { id: string }) => p.id)
        .sort(),
    ).toEqual([anna.userId, t.employee.userId].sort());
  });

  it('is 403 to an employee while the tenant does not show colleagues, or who is not on the shift', async () => {
    const { shift, bob } = await crew();
    // Off by default; admins read it anyway.
    expect(await colleaguesOf(t.employee, shift.id)).toMatchObject({ statusCode: 403 });
    expect((await colleaguesOf(t.employee, shift.id)).json()).toEqual(FORBIDDEN_BODY);
    expect((await colleaguesOf(t.admin, shift.id)).statusCode).toBe(200);
    await showColleagues(true);
    const response = await colleaguesOf(bob, shift.id);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), uniqueName('customer'));
    expect((await colleaguesOf(customer, shift.id)).json()).toEqual(FORBIDDEN_BODY);
  });

  it('is 404 for a shift the employee may not see, another tenant’s, an unknown or malformed id', async () => {
    const { roleId, eventId, shift } = await crew();
    await showColleagues(true);
    const draft = await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-03T10:00:00Z',
      ends_at: '2030-07-03T14:00:00Z',
      publish: false,
    });
    await created(t.admin, `/api/v1/shifts/${draft.id}/slots/${draft.slots[0]}/assign`, {
      user_id: t.employee.userId,
    });
    for (const [caller, id] of [
      [t.employee, draft.id],
      [t.otherAdmin, shift.id],
      [t.admin, '0193a1b2c3d47e8f9a0b1c2d3e4f5aff'],
      [t.admin, 'not-an-id'],
    ] as const) {
      const response = await colleaguesOf(caller, id);
      expect(response.statusCode, id).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'shift not found' } });
    }
  });
});
