import { describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import {
  action,
  created,
  newColleague,
  newEvent,
  newRole,
  qualify,
  tenantOf,
} from '../support/scheduling.ts';

/**
 * GET /me/open-shifts against the claim route it stands for: in a tenant holding every
 * reason a claim is refused, each listed slot is claimed (201) and each slot left out is
 * refused, with the code the claim gives. The clock is the test's: 2030-07-02 11:00, so a
 * shift of that morning is under way and one of the day before has ended.
 */
let now = new Date('2030-07-02T11:00:00Z');
const t = useRouteTests({ clock: { now: () => now } });

interface OpenShiftItem {
  shift: { id: string; name: string; starts_at: string; ends_at: string; status: string };
  event: { id: string; name: string; description: string | null };
  location: Record<string, unknown> | null;
  slots: { id: string; role: { id: string; name: string }; capacity: number; filled_count: number }[];
}

const openShifts = async (caller: Caller, query = ''): Promise<OpenShiftItem[]> => {
  const response = await caller.request('GET', `/api/v1/me/open-shifts${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
};

const day = (date: string, from: number, to: number) => ({
  starts_at: `2030-07-${date}T${String(from).padStart(2, '0')}:00:00Z`,
  ends_at: `2030-07-${date}T${String(to).padStart(2, '0')}:00:00Z`,
});

interface Built {
  id: string;
  slots: string[];
}

/** A shift with one slot per [role, capacity], published unless told otherwise. */
async function shift(
  eventId: string,
  name: string,
  span: { starts_at: string; ends_at: string },
  slots: [string, number][],
  options: { publish?: boolean; location_id?: string } = {},
): Promise<Built> {
  const made = await created(t.admin, '/api/v1/shifts', {
    event_id: eventId,
    name,
    ...span,
    ...(options.location_id ? { location_id: options.location_id } : {}),
    slots: slots.map(([role_id, capacity]) => ({ role_id, capacity })),
  });
  if (options.publish ?? true) await action(t.admin, `/api/v1/shifts/${made.id}/publish`);
  const listed = (await t.admin.request('GET', `/api/v1/shifts/${made.id}/slots`)).json() as { id: string }[];
  return { id: made.id, slots: listed.map((slot) => slot.id) };
}

const claim = (caller: Caller, shiftId: string, slotId: string) =>
  caller.request('POST', `/api/v1/shifts/${shiftId}/slots/${slotId}/claim`);

const colleague = (role?: string) => newColleague(t.ctx, t.admin, role);

/** Every reason a claim is refused, in one tenant, for the employee (Eve). */
async function variedTenant() {
  now = new Date('2030-07-02T11:00:00Z');
  const cook = await newRole(t.admin, uniqueName('Cook'));
  const medic = await newRole(t.admin, uniqueName('Medic'));
  await qualify(t.admin, t.employee, cook);
  const other = await colleague(cook);
  const hall = await created(t.admin, '/api/v1/locations', {
    name: 'Main hall',
    street: 'Pariser Platz 1',
    city: 'Berlin',
    postal_code: '10117',
    country: 'DE',
  });
  const tent = await created(t.admin, '/api/v1/locations', { name: 'Tent' });
  const festival = await created(t.admin, '/api/v1/events', {
    name: 'Festival',
    description: 'By the river',
    location_id: hall.id,
    ...day('01', 0, 0),
    ends_at: '2030-07-08T00:00:00Z',
  });
  await action(t.admin, `/api/v1/events/${festival.id}/publish`);
  const draftEvent = await newEvent(t.admin, { publish: false });

  const s = {
    // Two claimable cook slots, a medic slot and a cook slot a colleague filled.
    mixed: await shift(festival.id, 'Mixed', day('03', 10, 14), [
      [cook, 2],
      [medic, 1],
      [cook, 1],
      [cook, 3],
    ]),
    mine: await shift(festival.id, 'Mine', day('04', 10, 14), [
      [cook, 2],
      [cook, 1],
    ]),
    overlapping: await shift(festival.id, 'Overlapping', day('04', 13, 16), [[cook, 1]]),
    touching: await shift(festival.id, 'Touching', day('04', 14, 18), [[cook, 1]], {
      location_id: tent.id,
    }),
    draft: await shift(festival.id, 'Draft', day('05', 10, 14), [[cook, 1]], { publish: false }),
    ofDraftEvent: await shift(draftEvent, 'Of a draft event', day('05', 15, 18), [[cook, 1]]),
    started: await shift(festival.id, 'Started', day('02', 10, 14), [[cook, 1]]),
    ended: await shift(festival.id, 'Ended', day('01', 10, 14), [[cook, 1]]),
    approvedOff: await shift(festival.id, 'Approved time off', day('06', 10, 14), [[cook, 1]]),
    pendingOff: await shift(festival.id, 'Pending time off', day('07', 10, 14), [[cook, 1]]),
    full: await shift(festival.id, 'Full', day('05', 20, 22), [[cook, 1]]),
    medicOnly: await shift(festival.id, 'Medics', day('03', 18, 20), [[medic, 2]]),
  };
  // A colleague fills Mixed's third slot and Full's only one (before time off and seats of Eve).
  expect((await claim(other, s.mixed.id, s.mixed.slots[2] as string)).statusCode).toBe(201);
  expect((await claim(other, s.full.id, s.full.slots[0] as string)).statusCode).toBe(201);
  expect((await claim(t.employee, s.mine.id, s.mine.slots[0] as string)).statusCode).toBe(201);
  const approved = await created(t.employee, '/api/v1/me/time-off', day('06', 0, 23));
  await action(t.admin, `/api/v1/time-off/${approved.id}/approve`);
  await created(t.employee, '/api/v1/me/time-off', day('07', 0, 23));
  return { s, cook, medic, festival, hall, tent, other };
}

type Shifts = Awaited<ReturnType<typeof variedTenant>>['s'];

/** Why a claim of each slot left out is refused, for the employee. */
function refusals(s: Shifts): Map<string, [string, number, string]> {
  const conflict = (code: string): [number, string] => [409, code];
  const entries: [Built, number, [number, string]][] = [
    [s.mixed, 1, conflict('NOT_QUALIFIED')],
    [s.mixed, 2, conflict('SLOT_FULL')],
    [s.mine, 0, conflict('ALREADY_ASSIGNED')],
    [s.mine, 1, conflict('ALREADY_ASSIGNED')],
    [s.overlapping, 0, conflict('OVERLAPPING_ASSIGNMENT')],
    [s.draft, 0, [404, 'NOT_FOUND']],
    [s.ofDraftEvent, 0, [404, 'NOT_FOUND']],
    [s.ended, 0, conflict('INVALID_STATE')],
    [s.approvedOff, 0, conflict('UNAVAILABLE')],
    [s.full, 0, conflict('SLOT_FULL')],
    [s.medicOnly, 0, conflict('NOT_QUALIFIED')],
  ];
  return new Map(
    entries.map(([built, index, [status, code]]) => [
      built.slots[index] as string,
      [built.id, status, code] as [string, number, string],
    ]),
  );
}

/**
 * Each slot of `s` left out of `listed` is refused to `caller` as `expected` says (status
 * and code); then each listed slot is claimed (201), and withdrawn again unless the shift
 * is under way (an employee cannot withdraw then; nothing listed later overlaps it).
 */
async function agreesWithClaims(
  caller: Caller,
  s: Shifts,
  listed: OpenShiftItem[],
  expected: ReadonlyMap<string, readonly [string, number, string]>,
): Promise<void> {
  const listedSlots = new Set(listed.flatMap((item) => item.slots.map((slot) => slot.id)));
  const all = Object.values(s).flatMap((built) => built.slots.map((slot) => [built.id, slot] as const));
  const unlisted = all.filter(([, slot]) => !listedSlots.has(slot));
  expect(unlisted.map(([, slot]) => slot).sort()).toEqual([...expected.keys()].sort());
  for (const [shiftId, slot] of unlisted) {
    const response = await claim(caller, shiftId, slot);
    const [, status, code] = expected.get(slot) as readonly [string, number, string];
    expect([response.statusCode, response.json().error.code], `${shiftId}/${slot}`).toEqual([status, code]);
  }
  for (const item of listed) {
    for (const slot of item.slots) {
      const response = await claim(caller, item.shift.id, slot.id);
      expect(response.statusCode, `${item.shift.name}: ${response.body}`).toBe(201);
      if (item.shift.name === 'Started') continue;
      const withdrawn = await caller.request(
        'DELETE',
        `/api/v1/shifts/${item.shift.id}/assignments/${response.json().id}`,
      );
      expect(withdrawn.statusCode).toBe(204);
    }
  }
}

describe('GET /api/v1/me/open-shifts', () => {
  it('lists exactly the slots a claim gives: each listed one is claimed, each other refused', async () => {
    const { s, cook, festival, hall, tent } = await variedTenant();
    const listed = await openShifts(t.employee);
    expect(listed.map((item) => item.shift.name)).toEqual([
      'Started',
      'Mixed',
      'Touching',
      'Pending time off',
    ]);
    const mixed = listed[1] as OpenShiftItem;
    expect(mixed).toEqual({
      shift: { id: s.mixed.id, name: 'Mixed', ...iso(day('03', 10, 14)), status: 'open' },
      event: { id: festival.id, name: 'Festival', description: 'By the river' },
      location: {
        id: hall.id,
        name: 'Main hall',
        street: 'Pariser Platz 1',
        postal_code: '10117',
        city: 'Berlin',
        country: 'DE',
        lat: null,
        lng: null,
      },
      slots: [
        {
          id: s.mixed.slots[0],
          role: { id: cook, name: expect.stringMatching(/^Cook-/) },
          capacity: 2,
          filled_count: 0,
        },
        {
          id: s.mixed.slots[3],
          role: { id: cook, name: expect.stringMatching(/^Cook-/) },
          capacity: 3,
          filled_count: 0,
        },
      ],
    });
    // The shift's own location wins over its event's.
    expect(listed[2]?.location).toMatchObject({ id: tent.id, name: 'Tent', street: null });

    await agreesWithClaims(t.employee, s, listed, refusals(s));
    // Claimed, the started shift leaves the list.
    expect((await openShifts(t.employee)).map((item) => item.shift.name)).not.toContain('Started');
  });

  it('agrees with the claim for an admin too: drafts are never claimable', async () => {
    const { s, cook } = await variedTenant();
    await qualify(t.admin, t.admin, cook);
    const listed = await openShifts(t.admin);
    expect(listed.map((item) => item.shift.name)).toEqual([
      'Started',
      'Mixed',
      'Mine',
      'Overlapping',
      'Touching',
      'Approved time off',
      'Pending time off',
    ]);
    const refused = (built: Built, index: number, status: number, code: string) =>
      [built.slots[index] as string, [built.id, status, code]] as const;
    await agreesWithClaims(
      t.admin,
      s,
      listed,
      new Map([
        refused(s.mixed, 1, 409, 'NOT_QUALIFIED'),
        refused(s.mixed, 2, 409, 'SLOT_FULL'),
        refused(s.draft, 0, 409, 'INVALID_STATE'),
        refused(s.ofDraftEvent, 0, 409, 'INVALID_STATE'),
        refused(s.ended, 0, 409, 'INVALID_STATE'),
        refused(s.full, 0, 409, 'SLOT_FULL'),
        refused(s.medicOnly, 0, 409, 'NOT_QUALIFIED'),
      ]),
    );
  });

  it('leaves out a deactivated user (403, as their claim is) and a customer (403)', async () => {
    const { s, cook } = await variedTenant();
    const dora = await colleague(cook);
    expect((await openShifts(dora)).length).toBeGreaterThan(0);
    const off = await t.admin.request('PATCH', `/api/v1/users/${dora.userId}`, { active: false });
    expect(off.statusCode).toBe(200);
    for (const response of [
      await dora.request('GET', '/api/v1/me/open-shifts'),
      await claim(dora, s.touching.id, s.touching.slots[0] as string),
    ]) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), uniqueName('customer'));
    const response = await customer.request('GET', '/api/v1/me/open-shifts');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it('never lists another tenant’s shifts', async () => {
    await variedTenant();
    const theirRole = await newRole(t.otherAdmin, 'Cook');
    await qualify(t.otherAdmin, t.otherAdmin, theirRole);
    const theirEvent = await newEvent(t.otherAdmin);
    await created(t.otherAdmin, '/api/v1/shifts', {
      event_id: theirEvent,
      name: 'Theirs',
      ...day('03', 10, 14),
      slots: [{ role_id: theirRole, capacity: 5 }],
    });
    const theirs = await openShifts(t.otherAdmin);
    expect(theirs).toEqual([]);
    const ours = await openShifts(t.employee);
    expect(ours.map((item) => item.shift.name)).not.toContain('Theirs');
  });

  it('keeps the shifts overlapping [from, to) and the earliest `limit` of them', async () => {
    await variedTenant();
    const names = async (query: string) =>
      (await openShifts(t.employee, query)).map((item) => item.shift.name);
    expect(await names('?from=2030-07-03T12:00:00Z&to=2030-07-04T14:00:01Z')).toEqual(['Mixed', 'Touching']);
    expect(await names('?to=2030-07-03T10:00:00Z')).toEqual(['Started']);
    // A window reaching into the past still leaves out what has ended.
    expect(await names('?from=2030-06-01T00:00:00Z&limit=2')).toEqual(['Started', 'Mixed']);
    expect(await names('?limit=1')).toEqual(['Started']);
    expect(await names('?limit=100')).toHaveLength(4);
    // A date is that day's start in the tenant's zone (UTC here), as in every window.
    expect(await names('?from=2030-07-03&to=2030-07-05')).toEqual(
      await names('?from=2030-07-03T00:00:00Z&to=2030-07-05T00:00:00Z'),
    );
    // The clock moves: what started is over, what was later is under way.
    now = new Date('2030-07-03T12:00:00Z');
    expect(await names('')).toEqual(['Mixed', 'Touching', 'Pending time off']);
  });

  it.each([
    [
      'to equal to from',
      'from=2030-07-02T10:00:00Z&to=2030-07-02T12:00:00%2B02:00',
      'to: must be after from',
    ],
    ['an impossible date', 'from=2030-02-30', 'from: must match format "date-time" or "date"'],
    ['a limit of 0', 'limit=0', 'limit: must match pattern "^([1-9][0-9]?|100)$"'],
    ['a limit above 100', 'limit=101', 'limit: must match pattern "^([1-9][0-9]?|100)$"'],
    ['a limit that is no number', 'limit=ten', 'limit: must match pattern "^([1-9][0-9]?|100)$"'],
    ['an unknown parameter', 'status=open', 'status: is not an allowed field'],
  ])('refuses %s with 422', async (_label, query, message) => {
    const response = await t.employee.request('GET', `/api/v1/me/open-shifts?${query}`);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });
});

/** A span as the API writes instants. */
function iso(span: { starts_at: string; ends_at: string }) {
  return {
    starts_at: span.starts_at.replace('Z', '.000Z'),
    ends_at: span.ends_at.replace('Z', '.000Z'),
  };
}
