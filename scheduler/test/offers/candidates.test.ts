import { describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import { action, created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';

/**
 * GET /assignments/{id}/offer-candidates against the offer it prepares: every candidate
 * takes a direct offer of the seat (and gives it back), and colleagues left out for each
 * reason are refused with the code the offer or its accept gives. The clock is the
 * test's; the shifts lie in 2030.
 */
let now = new Date('2026-11-26T12:00:00Z');
const t = useRouteTests({ clock: { now: () => now } });

const candidatesOf = (caller: Caller, seat: string) =>
  caller.request('GET', `/api/v1/assignments/${seat}/offer-candidates`);

async function candidates(caller: Caller, seat: string): Promise<{ id: string; name: string | null }[]> {
  const response = await candidatesOf(caller, seat);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

async function person(name: string, role?: string): Promise<Caller> {
  const made = await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('colleague'), { name });
  if (role) await qualify(t.admin, made, role);
  return made;
}

const claimed = async (caller: Caller, shift: { id: string; slots: string[] }) =>
  (await created(caller, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {})).id;

/** Eve's seat, and a colleague for every reason to be, or not to be, a candidate. */
async function world() {
  now = new Date('2026-11-26T12:00:00Z');
  const cook = await newRole(t.admin, uniqueName('Cook'));
  await qualify(t.admin, t.employee, cook);
  await qualify(t.admin, t.admin, cook);
  const event = await newEvent(t.admin);
  const shift = await newShift(t.admin, event, { roleId: cook, capacities: [3] });
  const seat = await claimed(t.employee, shift);
  const people = {
    anna: await person('Anna', cook),
    fay: await person('Fay', cook),
    ben: await person('Ben'),
    cara: await person('Cara', cook),
    dan: await person('Dan', cook),
    eli: await person('Eli', cook),
    gus: await person('Gus', cook),
  };
  // Cara holds a seat in the same shift, Dan one overlapping it.
  await claimed(people.cara, shift);
  const overlapping = await newShift(t.admin, event, {
    roleId: cook,
    starts_at: '2030-07-02T13:00:00Z',
    ends_at: '2030-07-02T16:00:00Z',
  });
  await claimed(people.dan, overlapping);
  // Eli is away (approved); Fay asked to be (requested: it blocks nothing).
  const away = await created(people.eli, '/api/v1/me/time-off', {
    starts_at: '2030-07-02T00:00:00Z',
    ends_at: '2030-07-03T00:00:00Z',
  });
  await action(t.admin, `/api/v1/time-off/${away.id}/approve`);
  await created(people.fay, '/api/v1/me/time-off', {
    starts_at: '2030-07-02T00:00:00Z',
    ends_at: '2030-07-03T00:00:00Z',
  });
  const off = await t.admin.request('PATCH', `/api/v1/users/${people.gus.userId}`, { active: false });
  expect(off.statusCode).toBe(200);
  return { cook, event, shift, seat, people };
}

const error = (code: string, message: string) => ({ error: { code, message } });

describe('GET /api/v1/assignments/{id}/offer-candidates', () => {
  it('names exactly who could take a direct offer: each candidate takes it, others are refused', async () => {
    const { seat, people } = await world();
    const listed = await candidates(t.employee, seat);
    const me = (await t.admin.request('GET', '/api/v1/me')).json() as { display_name: string | null };
    const expected = [
      { id: people.anna.userId, name: 'Anna' },
      { id: people.fay.userId, name: 'Fay' },
      { id: t.admin.userId, name: me.display_name },
    ].sort((a, b) => (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff'));
    expect(listed).toEqual(expected);
    // An admin reading it gets the same list.
    expect(await candidates(t.admin, seat)).toEqual(listed);

    // Each candidate takes the seat offered to them alone, and gives it back.
    const callers = new Map([
      [people.anna.userId, people.anna],
      [people.fay.userId, people.fay],
      [t.admin.userId, t.admin],
    ]);
    for (const candidate of listed) {
      const taker = callers.get(candidate.id) as Caller;
      const offer = await created(t.employee, `/api/v1/assignments/${seat}/offer`, {
        to_user_id: candidate.id,
      });
      const taken = await taker.request('POST', `/api/v1/offers/${offer.id}/accept`);
      expect(taken.statusCode, taken.body).toBe(200);
      expect(taken.json().status).toBe('approved');
      const back = await created(taker, `/api/v1/assignments/${seat}/offer`, {
        to_user_id: t.employee.userId,
      });
      expect((await t.employee.request('POST', `/api/v1/offers/${back.id}/accept`)).statusCode).toBe(200);
    }

    // Those left out: the accept refuses each, with the claim's code.
    for (const [who, code, message] of [
      [people.ben, 'NOT_QUALIFIED', 'the user does not hold the role this slot needs'],
      [people.cara, 'ALREADY_ASSIGNED', 'the user already holds a seat in this shift'],
      [people.dan, 'OVERLAPPING_ASSIGNMENT', 'the user is assigned to an overlapping shift'],
      [people.eli, 'UNAVAILABLE', 'the user has approved time off then'],
    ] as const) {
      const offer = await created(t.employee, `/api/v1/assignments/${seat}/offer`, {
        to_user_id: who.userId,
      });
      const refused = await who.request('POST', `/api/v1/offers/${offer.id}/accept`);
      expect(refused.statusCode, code).toBe(409);
      expect(refused.json()).toEqual(error(code, message));
      expect((await t.employee.request('DELETE', `/api/v1/offers/${offer.id}`)).statusCode).toBe(204);
    }
    // Gus is deactivated: no offer is made to him at all; the holder is no candidate either.
    const toGus = await t.employee.request('POST', `/api/v1/assignments/${seat}/offer`, {
      to_user_id: people.gus.userId,
    });
    expect(toGus.statusCode).toBe(409);
    expect(toGus.json()).toEqual(error('INVALID_STATE', 'the user is deactivated'));
    const toSelf = await t.employee.request('POST', `/api/v1/assignments/${seat}/offer`, {
      to_user_id: t.employee.userId,
    });
    expect(toSelf.statusCode).toBe(422);
  });

  it('offers a seat of a draft shift to admins only (an employee could not see it)', async () => {
    const { cook, event, people } = await world();
    const draft = await newShift(t.admin, event, {
      roleId: cook,
      starts_at: '2030-07-04T10:00:00Z',
      ends_at: '2030-07-04T14:00:00Z',
      publish: false,
    });
    const seat = await created(t.admin, `/api/v1/shifts/${draft.id}/slots/${draft.slots[0]}/assign`, {
      user_id: people.anna.userId,
    });
    const other = await t.ctx.caller('admin', tenantOf(t.admin), uniqueName('admin'), { name: 'Otto' });
    await qualify(t.admin, other, cook);
    expect(await candidates(t.admin, seat.id)).toEqual(
      expect.arrayContaining([{ id: other.userId, name: 'Otto' }]),
    );
    expect((await candidates(t.admin, seat.id)).map((c) => c.id).sort()).toEqual(
      [other.userId, t.admin.userId].sort(),
    );
    // Anna cannot see her own seat there.
    const hidden = await candidatesOf(people.anna, seat.id);
    expect(hidden.statusCode).toBe(404);
  });

  it('is 404 for someone else’s seat (employee), another tenant’s, an unknown or malformed id', async () => {
    const { seat, people } = await world();
    for (const [caller, id] of [
      [people.anna, seat],
      [t.otherAdmin, seat],
      [t.admin, '0193a1b2c3d47e8f9a0b1c2d3e4f5aff'],
      [t.admin, 'not-an-id'],
    ] as const) {
      const response = await candidatesOf(caller, id);
      expect(response.statusCode, id).toBe(404);
      expect(response.json()).toEqual(error('NOT_FOUND', 'assignment not found'));
    }
  });

  it('is 403 to a customer and to a deactivated holder', async () => {
    const { seat, people } = await world();
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), uniqueName('customer'));
    for (const caller of [customer, people.gus]) {
      const response = await candidatesOf(caller, seat);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
  });

  it('is 409 once the shift has started, as the offer is', async () => {
    const { seat } = await world();
    now = new Date('2030-07-02T10:00:00Z');
    for (const caller of [t.employee, t.admin]) {
      const response = await candidatesOf(caller, seat);
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual(error('INVALID_STATE', 'the shift has started'));
    }
  });
});
