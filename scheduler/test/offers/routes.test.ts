import { describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import { notificationsOf } from '../support/notifications.ts';
import {
  created,
  newColleague,
  newEvent,
  newRole,
  newShift,
  qualify,
  tenantOf,
} from '../support/scheduling.ts';
import { recordTimeOn } from '../support/time-tracking.ts';

/**
 * Offers and swaps through the API: who may offer, see, take, approve, reject and
 * withdraw; every refusal with its code. The clock is the test's, so an offer can be
 * watched expiring; the shifts lie in 2030 unless a test moves the clock past them.
 */
const start = new Date('2026-11-26T12:00:00Z');
let now = start;
const t = useRouteTests({ clock: { now: () => now } });

const error = (code: string, message: string) => ({ error: { code, message } });

interface World {
  role: string;
  shift: string;
  slot: string;
  /** The employee's seat in `shift`. */
  seat: string;
  /** A qualified colleague with no seat. */
  bob: Caller;
}

const colleague = (role?: string) => newColleague(t.ctx, t.admin, role);

async function world(capacity = 2): Promise<World> {
  now = start;
  const role = await newRole(t.admin, uniqueName('Cook'));
  await qualify(t.admin, t.employee, role);
  const event = await newEvent(t.admin);
  const shift = await newShift(t.admin, event, { roleId: role, capacities: [capacity] });
  const slot = shift.slots[0] as string;
  const seat = (await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${slot}/claim`, {})).id;
  return { role, shift: shift.id, slot, seat, bob: await colleague(role) };
}

const offer = (caller: Caller, seat: string, body: unknown = {}) =>
  caller.request('POST', `/api/v1/assignments/${seat}/offer`, body);

async function offered(caller: Caller, seat: string, body: unknown = {}) {
  const response = await offer(caller, seat, body);
  expect(response.statusCode, response.body).toBe(201);
  return response.json() as { id: string; status: string } & Record<string, unknown>;
}

const list = async (caller: Caller, query = '') => {
  const response = await caller.request('GET', `/api/v1/offers${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { id: string; status: string }[];
};
const ids = async (caller: Caller, query = '') => (await list(caller, query)).map((o) => o.id);

const holders = async (w: World) =>
  (
    (await t.admin.request('GET', `/api/v1/shifts/${w.shift}/assignments`)).json() as {
      id: string;
      user_id: string;
    }[]
  ).map((a) => [a.id, a.user_id]);

const filled = async (w: World) =>
  ((await t.admin.request('GET', `/api/v1/shifts/${w.shift}/slots`)).json() as { filled_count: number }[])[0]
    ?.filled_count;

async function approvalOn(on = true) {
  const response = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: false,
    offers_need_approval: on,
  });
  expect(response.statusCode, response.body).toBe(200);
}

describe('POST /api/v1/assignments/{id}/offer', () => {
  it('offers the employee’s own seat to everyone: 201 with the offer', async () => {
    const w = await world();
    const response = await offer(t.employee, w.seat);
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      assignment_id: w.seat,
      shift_id: w.shift,
      from_user_id: t.employee.userId,
      to_user_id: null,
      status: 'open',
      accepted_by: null,
      created_at: expect.any(String),
      expires_at: '2030-07-02T10:00:00.000Z',
      decided_at: null,
      decided_by: null,
      decision_reason: null,
    });
    expect(await list(t.admin)).toEqual([body]);
  });

  it('lets an admin offer anyone’s seat, directly to one colleague', async () => {
    const w = await world();
    const body = await offered(t.admin, w.seat, { to_user_id: w.bob.userId });
    expect(body).toMatchObject({ from_user_id: t.employee.userId, to_user_id: w.bob.userId, status: 'open' });
  });

  it('is 404 to an employee for a colleague’s seat, and to another tenant’s admin', async () => {
    const w = await world();
    expect((await offer(w.bob, w.seat)).json()).toEqual(error('NOT_FOUND', 'assignment not found'));
    const other = await offer(t.otherAdmin, w.seat);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(error('NOT_FOUND', 'assignment not found'));
    expect(await list(t.admin)).toEqual([]);
  });

  it('is 403 to a customer', async () => {
    const w = await world();
    const customer = await t.ctx.caller('customer', tenantOf(t.admin));
    const response = await offer(customer, w.seat);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it('answers 422 for bad input, never 500', async () => {
    const w = await world();
    // A subject only the other tenant has (ids derive from issuer and subject).
    const stranger = await t.ctx.caller('employee', tenantOf(t.otherAdmin), uniqueName('stranger'));
    for (const [body, message] of [
      [{ to_user_id: 'nobody' }, /^to_user_id: must match/],
      [{ extra: 1 }, /extra|additional/],
      [
        { to_user_id: '0123456789abcdef0123456789abcdef' },
        /^to_user_id: no such admin or employee in this tenant$/,
      ],
      [{ to_user_id: t.employee.userId }, /^to_user_id: the seat is already theirs$/],
      [{ to_user_id: stranger.userId }, /^to_user_id: no such admin or employee in this tenant$/],
    ] as [unknown, RegExp][]) {
      const response = await offer(t.employee, w.seat, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.json().error.code).toBe('VALIDATION_FAILED');
      expect(response.json().error.message).toMatch(message);
    }
  });

  it('allows one live offer per seat (409 DUPLICATE), and a new one once it is withdrawn', async () => {
    const w = await world();
    const first = await offered(t.employee, w.seat);
    const again = await offer(t.employee, w.seat, { to_user_id: w.bob.userId });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(error('DUPLICATE', 'this assignment already has an open offer'));
    expect((await t.employee.request('DELETE', `/api/v1/offers/${first.id}`)).statusCode).toBe(204);
    await offered(t.employee, w.seat);
  });

  it('decides two offers of one seat made at once: one 201, one 409 DUPLICATE', async () => {
    const w = await world();
    const answers = await Promise.all([offer(t.employee, w.seat), offer(t.admin, w.seat)]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409]);
    expect(await list(t.admin)).toHaveLength(1);
  });

  it('refuses a seat with recorded time: 409 INVALID_STATE', async () => {
    const w = await world();
    // A seat on offer lies ahead: its time is recorded before the shift ends.
    await recordTimeOn(t.admin, w.seat);
    const response = await offer(t.employee, w.seat);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(error('INVALID_STATE', 'time was recorded for this assignment'));
  });

  it('refuses once the shift has started, for admins too', async () => {
    const w = await world();
    now = new Date('2030-07-02T10:00:00Z');
    for (const caller of [t.employee, t.admin]) {
      const response = await offer(caller, w.seat);
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual(error('INVALID_STATE', 'the shift has started'));
    }
  });
});

describe('GET /api/v1/offers', () => {
  it('shows an employee their own offers and the open ones they could take, nothing else', async () => {
    const w = await world(3);
    const open = await offered(t.employee, w.seat);
    const unqualified = await colleague();
    const busy = await colleague(w.role);
    // Busy holds an assignment overlapping the offered shift.
    const event = await newEvent(t.admin);
    const other = await newShift(t.admin, event, {
      roleId: w.role,
      starts_at: '2030-07-02T12:00:00Z',
      ends_at: '2030-07-02T16:00:00Z',
    });
    await created(busy, `/api/v1/shifts/${other.id}/slots/${other.slots[0]}/claim`, {});
    const seated = await colleague(w.role);
    await created(seated, `/api/v1/shifts/${w.shift}/slots/${w.slot}/claim`, {});

    expect(await ids(t.employee)).toEqual([open.id]);
    expect(await ids(w.bob)).toEqual([open.id]);
    expect(await ids(unqualified)).toEqual([]);
    expect(await ids(busy)).toEqual([]);
    expect(await ids(seated)).toEqual([]);
    expect(await ids(t.admin)).toEqual([open.id]);
    expect(await ids(t.otherAdmin)).toEqual([]);
  });

  it('shows a direct offer only to its target among colleagues; a taken one stays with giver and taker', async () => {
    const w = await world();
    const carol = await colleague(w.role);
    const direct = await offered(t.employee, w.seat, { to_user_id: w.bob.userId });
    expect(await ids(carol)).toEqual([]);
    expect(await ids(w.bob)).toEqual([direct.id]);
    const accept = await w.bob.request('POST', `/api/v1/offers/${direct.id}/accept`);
    expect(accept.statusCode, accept.body).toBe(200);
    expect(await list(w.bob)).toMatchObject([{ id: direct.id, status: 'approved' }]);
    expect(await list(t.employee)).toMatchObject([{ id: direct.id, status: 'approved' }]);
    expect(await ids(carol)).toEqual([]);
  });

  it('filters by status, pages newest first, and answers 422 for bad parameters', async () => {
    const seats: string[] = [];
    const w = await world(3);
    seats.push(w.seat);
    for (const day of ['03', '04']) {
      const event = await newEvent(t.admin);
      const shift = await newShift(t.admin, event, {
        roleId: w.role,
        starts_at: `2030-07-${day}T10:00:00Z`,
        ends_at: `2030-07-${day}T14:00:00Z`,
      });
      seats.push(
        (await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {})).id,
      );
    }
    const made = [];
    for (const seat of seats) made.push((await offered(t.employee, seat)).id);
    await t.employee.request('DELETE', `/api/v1/offers/${made[0]}`);
    expect(await ids(t.admin)).toEqual([...made].reverse());
    expect(await ids(t.admin, '?status=cancelled')).toEqual([made[0]]);
    expect(await ids(t.employee, '?status=open')).toEqual([made[2], made[1]]);
    const page = await ids(t.admin, '?limit=2');
    expect(page).toEqual([made[2], made[1]]);
    expect(await ids(t.admin, `?limit=2&after=${page[1]}`)).toEqual([made[0]]);
    for (const query of [
      '?status=lost',
      '?limit=0',
      '?limit=501',
      '?after=x',
      '?foo=1',
      `?after=${'0'.repeat(32)}`,
    ]) {
      const response = await t.admin.request('GET', `/api/v1/offers${query}`);
      expect(response.statusCode, query).toBe(422);
      expect(response.json().error.code).toBe('VALIDATION_FAILED');
    }
    // A cursor is any offer of the tenant (one taken meanwhile leaves a list, and the next
    // page must still follow it); another tenant's is as unknown as none.
    const stranger = await colleague();
    const response = await stranger.request('GET', `/api/v1/offers?after=${made[1]}`);
    expect(response.statusCode, response.body).toBe(200);
    const foreign = await t.otherAdmin.request('GET', `/api/v1/offers?after=${made[1]}`);
    expect(foreign.json()).toEqual(error('VALIDATION_FAILED', 'after: no such offer'));
  });

  it('is 403 to a customer', async () => {
    await world();
    const customer = await t.ctx.caller('customer', tenantOf(t.admin));
    const response = await customer.request('GET', '/api/v1/offers');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('POST /api/v1/offers/{id}/accept', () => {
  it('moves the seat to the taker in its slot, capacity unchanged', async () => {
    const w = await world();
    const made = await offered(t.employee, w.seat);
    expect(await filled(w)).toBe(1);
    const response = await w.bob.request('POST', `/api/v1/offers/${made.id}/accept`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      ...made,
      status: 'approved',
      accepted_by: w.bob.userId,
      decided_by: w.bob.userId,
      decided_at: now.toISOString(),
    });
    expect(await holders(w)).toEqual([[w.seat, w.bob.userId]]);
    expect(await filled(w)).toBe(1);
    const again = await (await colleague(w.role)).request('POST', `/api/v1/offers/${made.id}/accept`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(error('INVALID_STATE', 'the offer is approved'));
  });

  it('names the rule a taker breaks, and moves nothing', async () => {
    const w = await world(3);
    const made = await offered(t.employee, w.seat);
    const accept = (caller: Caller) => caller.request('POST', `/api/v1/offers/${made.id}/accept`);

    const unqualified = await colleague();
    expect((await accept(unqualified)).json()).toEqual(
      error('NOT_QUALIFIED', 'the user does not hold the role this slot needs'),
    );
    const busy = await colleague(w.role);
    const event = await newEvent(t.admin);
    const other = await newShift(t.admin, event, {
      roleId: w.role,
      starts_at: '2030-07-02T13:00:00Z',
      ends_at: '2030-07-02T15:00:00Z',
    });
    await created(busy, `/api/v1/shifts/${other.id}/slots/${other.slots[0]}/claim`, {});
    expect((await accept(busy)).json()).toEqual(
      error('OVERLAPPING_ASSIGNMENT', 'the user is assigned to an overlapping shift'),
    );
    const seated = await colleague(w.role);
    await created(seated, `/api/v1/shifts/${w.shift}/slots/${w.slot}/claim`, {});
    expect((await accept(seated)).json()).toEqual(
      error('ALREADY_ASSIGNED', 'the user already holds a seat in this shift'),
    );
    expect((await accept(t.employee)).json()).toEqual(error('INVALID_STATE', 'this is your own offer'));
    expect((await accept(t.otherAdmin)).json()).toEqual(error('NOT_FOUND', 'offer not found'));
    expect((await list(t.admin))[0]?.status).toBe('open');
    expect((await holders(w)).find(([id]) => id === w.seat)).toEqual([w.seat, t.employee.userId]);
  });

  it('lets only the target take a direct offer (404 to other employees, 409 to admins)', async () => {
    const w = await world();
    const made = await offered(t.employee, w.seat, { to_user_id: w.bob.userId });
    const carol = await colleague(w.role);
    const notFound = await carol.request('POST', `/api/v1/offers/${made.id}/accept`);
    expect(notFound.statusCode).toBe(404);
    expect(notFound.json()).toEqual(error('NOT_FOUND', 'offer not found'));
    const admin = await t.admin.request('POST', `/api/v1/offers/${made.id}/accept`);
    expect(admin.json()).toEqual(error('INVALID_STATE', 'the offer is made to someone else'));
    expect((await w.bob.request('POST', `/api/v1/offers/${made.id}/accept`)).statusCode).toBe(200);
  });

  it('cannot take an expired offer; the list shows it expired', async () => {
    const w = await world();
    const made = await offered(t.employee, w.seat);
    now = new Date('2030-07-02T10:00:00Z');
    const response = await w.bob.request('POST', `/api/v1/offers/${made.id}/accept`);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(error('INVALID_STATE', 'the offer is expired'));
    expect(await list(t.admin)).toMatchObject([{ id: made.id, status: 'expired' }]);
    expect(await ids(t.admin, '?status=expired')).toEqual([made.id]);
    expect(await ids(t.admin, '?status=open')).toEqual([]);
    expect(await ids(w.bob)).toEqual([]);
    const cancel = await t.employee.request('DELETE', `/api/v1/offers/${made.id}`);
    expect(cancel.json()).toEqual(error('INVALID_STATE', 'the offer is expired'));
  });

  it('stays expired, a record, when an admin removes its seat after the shift started', async () => {
    const w = await world();
    const made = await offered(t.employee, w.seat);
    now = new Date('2030-07-02T11:00:00Z');
    const removed = await t.admin.request('DELETE', `/api/v1/shifts/${w.shift}/assignments/${w.seat}`);
    expect(removed.statusCode, removed.body).toBe(204);
    // A month later it still reads expired: the seat it was derived from is gone.
    now = new Date('2030-08-02T11:00:00Z');
    expect(await list(t.admin)).toEqual([
      expect.objectContaining({ id: made.id, status: 'expired', assignment_id: null, decided_at: null }),
    ]);
    expect(await ids(t.admin, '?status=expired')).toEqual([made.id]);
    expect(await ids(t.employee)).toEqual([made.id]);
  });

  it('lets exactly one of many concurrent takers win', async () => {
    const w = await world();
    const made = await offered(t.employee, w.seat);
    const takers = await Promise.all([1, 2, 3, 4, 5].map(() => colleague(w.role)));
    const answers = await Promise.all(
      takers.map((c) => c.request('POST', `/api/v1/offers/${made.id}/accept`)),
    );
    const won = answers.filter((a) => a.statusCode === 200);
    expect(won).toHaveLength(1);
    for (const answer of answers.filter((a) => a.statusCode !== 200)) {
      expect(answer.statusCode).toBe(409);
      expect(answer.json()).toEqual(error('INVALID_STATE', 'the offer is approved'));
    }
    const winner = won[0]?.json().accepted_by;
    expect(takers.map((c) => c.userId)).toContain(winner);
    expect(await holders(w)).toEqual([[w.seat, winner]]);
    expect(await filled(w)).toBe(1);
  });

  it('answers 404 for an unknown or malformed id', async () => {
    await world();
    for (const id of ['0123456789abcdef0123456789abcdef', 'nope']) {
      const response = await t.employee.request('POST', `/api/v1/offers/${id}/accept`);
      expect(response.json()).toEqual(error('NOT_FOUND', 'offer not found'));
    }
  });
});

describe('with offers_need_approval on', () => {
  async function accepted() {
    const w = await world();
    await approvalOn();
    const made = await offered(t.employee, w.seat);
    const response = await w.bob.request('POST', `/api/v1/offers/${made.id}/accept`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'accepted',
      accepted_by: w.bob.userId,
      decided_at: null,
    });
    expect(await holders(w)).toEqual([[w.seat, t.employee.userId]]);
    return { w, id: made.id };
  }

  it('moves the seat when an admin approves, once', async () => {
    const { w, id } = await accepted();
    const response = await t.admin.request('POST', `/api/v1/offers/${id}/approve`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'approved',
      accepted_by: w.bob.userId,
      decided_by: t.admin.userId,
      decided_at: now.toISOString(),
    });
    expect(await holders(w)).toEqual([[w.seat, w.bob.userId]]);
    const again = await t.admin.request('POST', `/api/v1/offers/${id}/approve`);
    expect(again.json()).toEqual(error('INVALID_STATE', 'the offer is approved, not accepted'));
  });

  it('keeps the seat with the giver when an admin rejects; final', async () => {
    const { w, id } = await accepted();
    const response = await t.admin.request('POST', `/api/v1/offers/${id}/reject`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ status: 'rejected', decided_by: t.admin.userId });
    expect(await holders(w)).toEqual([[w.seat, t.employee.userId]]);
    for (const action of ['approve', 'reject']) {
      const again = await t.admin.request('POST', `/api/v1/offers/${id}/${action}`);
      expect(again.json()).toEqual(error('INVALID_STATE', 'the offer is rejected, not accepted'));
    }
    expect((await w.bob.request('POST', `/api/v1/offers/${id}/accept`)).json()).toEqual(
      error('INVALID_STATE', 'the offer is rejected'),
    );
    await offered(t.employee, w.seat);
  });

  it('refuses to approve or reject an offer not yet taken', async () => {
    const w = await world();
    await approvalOn();
    const made = await offered(t.employee, w.seat);
    for (const action of ['approve', 'reject']) {
      const response = await t.admin.request('POST', `/api/v1/offers/${made.id}/${action}`);
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual(error('INVALID_STATE', 'the offer is open, not accepted'));
    }
  });

  it('lets the database refuse a move that became impossible: overlap, qualification', async () => {
    const { w, id } = await accepted();
    const event = await newEvent(t.admin);
    const other = await newShift(t.admin, event, {
      roleId: w.role,
      starts_at: '2030-07-02T13:00:00Z',
      ends_at: '2030-07-02T15:00:00Z',
    });
    const seat = await created(t.admin, `/api/v1/shifts/${other.id}/slots/${other.slots[0]}/assign`, {
      user_id: w.bob.userId,
    });
    const overlap = await t.admin.request('POST', `/api/v1/offers/${id}/approve`);
    expect(overlap.statusCode).toBe(409);
    expect(overlap.json()).toEqual(
      error('OVERLAPPING_ASSIGNMENT', 'the user is assigned to an overlapping shift'),
    );
    await t.admin.request('DELETE', `/api/v1/shifts/${other.id}/assignments/${seat.id}`);
    const revoke = await t.admin.request('DELETE', `/api/v1/users/${w.bob.userId}/qualifications/${w.role}`);
    expect(revoke.statusCode).toBe(204);
    const unqualified = await t.admin.request('POST', `/api/v1/offers/${id}/approve`);
    expect(unqualified.json()).toEqual(
      error('NOT_QUALIFIED', 'the user does not hold the role this slot needs'),
    );
    expect(await holders(w)).toEqual([[w.seat, t.employee.userId]]);
    expect((await list(t.admin))[0]?.status).toBe('accepted');
  });

  it('maps a seat taken in the shift meanwhile to ALREADY_ASSIGNED at approval', async () => {
    const { w, id } = await accepted();
    await created(t.admin, `/api/v1/shifts/${w.shift}/slots/${w.slot}/assign`, { user_id: w.bob.userId });
    expect((await t.admin.request('POST', `/api/v1/offers/${id}/approve`)).json()).toEqual(
      error('ALREADY_ASSIGNED', 'the user already holds a seat in this shift'),
    );
  });

  it('maps a taker deactivated meanwhile to INVALID_STATE at approval', async () => {
    const { w, id } = await accepted();
    const off = await t.admin.request('PATCH', `/api/v1/users/${w.bob.userId}`, { active: false });
    expect(off.statusCode, off.body).toBe(200);
    expect((await t.admin.request('POST', `/api/v1/offers/${id}/approve`)).json()).toEqual(
      error('INVALID_STATE', 'the user is deactivated'),
    );
  });

  it('maps time recorded meanwhile to INVALID_STATE at approval', async () => {
    const { w, id } = await accepted();
    const on = { time_tracking_enabled: true, offers_need_approval: true, time_entries_before_end: true };
    expect((await t.admin.request('PATCH', '/api/v1/tenant/settings', on)).statusCode).toBe(200);
    await created(t.admin, '/api/v1/time-tracking/entries', {
      shift_assignment_id: w.seat,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T14:00:00Z',
    });
    expect((await t.admin.request('POST', `/api/v1/offers/${id}/approve`)).json()).toEqual(
      error('INVALID_STATE', 'time was recorded for this assignment'),
    );
  });

  const both = { time_tracking_enabled: false, notify_on_assignment: true, offers_need_approval: true };
  const notes = async (caller: Caller) =>
    (await notificationsOf(caller)).map((n) => ({ type: n.type, title: (n as { title?: string }).title }));

  it('tells giver and taker of an approval', async () => {
    const { w, id } = await accepted();
    expect((await t.admin.request('PATCH', '/api/v1/tenant/settings', both)).statusCode).toBe(200);
    expect((await t.admin.request('POST', `/api/v1/offers/${id}/approve`)).statusCode).toBe(200);
    expect(await notes(t.employee)).toEqual([{ type: 'offer.taken', title: 'Your shift was taken: Bar' }]);
    expect(await notes(w.bob)).toEqual([{ type: 'offer.approved', title: 'You are on Bar' }]);
  });

  it('tells giver and taker of a rejection', async () => {
    const { w, id } = await accepted();
    expect((await t.admin.request('PATCH', '/api/v1/tenant/settings', both)).statusCode).toBe(200);
    expect((await t.admin.request('POST', `/api/v1/offers/${id}/reject`)).statusCode).toBe(200);
    const rejected = [{ type: 'offer.rejected', title: 'The swap was not approved: Bar' }];
    expect(await notes(w.bob)).toEqual(rejected);
    expect(await notes(t.employee)).toEqual(rejected);
  });

  it('is 403 to employees and 404 to another tenant, with a reason or without', async () => {
    const { id } = await accepted();
    for (const action of ['approve', 'reject']) {
      for (const body of [undefined, { reason: 'Not mine to decide' }]) {
        const forbidden = await t.employee.request('POST', `/api/v1/offers/${id}/${action}`, body);
        expect(forbidden.statusCode).toBe(403);
        expect(forbidden.json()).toEqual(FORBIDDEN_BODY);
        const other = await t.otherAdmin.request('POST', `/api/v1/offers/${id}/${action}`, body);
        expect(other.statusCode).toBe(404);
        expect(other.json()).toEqual(error('NOT_FOUND', 'offer not found'));
      }
    }
    expect((await list(t.admin, '?status=accepted')).map((o) => o.id)).toEqual([id]);
  });

  it('stores an admin’s reason with an approval or a rejection, trimmed, and lists it', async () => {
    const approval = await accepted();
    const approved = await t.admin.request('POST', `/api/v1/offers/${approval.id}/approve`, {
      reason: '  Bob knows the till  ',
    });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'approved', decision_reason: 'Bob knows the till' });
    const rejection = await accepted();
    const rejected = await t.admin.request('POST', `/api/v1/offers/${rejection.id}/reject`, {
      reason: 'Two cooks are away that week',
    });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toMatchObject({
      status: 'rejected',
      decision_reason: 'Two cooks are away that week',
    });
    const listed = await list(t.admin);
    expect(listed.find((o) => o.id === approval.id)).toMatchObject({ decision_reason: 'Bob knows the till' });
    // The giver reads the reason on their own offer.
    expect((await list(t.employee)).find((o) => o.id === rejection.id)).toMatchObject({
      decision_reason: 'Two cooks are away that week',
    });
  });

  it('decides as before with no body, {} or null: no reason', async () => {
    // Approved, so the employee is free for the next seat of the same hours.
    for (const body of [undefined, {}, null]) {
      const { id } = await accepted();
      const response = await t.ctx.request('POST', `/api/v1/offers/${id}/approve`, {
        token: t.admin.token,
        ...(body === undefined ? {} : { rawBody: JSON.stringify(body) }),
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ status: 'approved', decision_reason: null });
    }
  });

  it('refuses (422) a reason too long, of two lines, blank or not text, and an unknown field; nothing changes', async () => {
    const { w, id } = await accepted();
    for (const action of ['approve', 'reject']) {
      for (const [body, message] of [
        [{ reason: 'x'.repeat(501) }, 'reason: must NOT have more than 500 characters'],
        [
          { reason: 'Too few cooks\nthat week' },
          'reason: must be one line of text, without control characters',
        ],
        [{ reason: '' }, 'reason: must NOT have fewer than 1 characters'],
        [{ reason: '   ' }, 'reason: must not be blank'],
        [{ reason: 42 }, 'reason: must be string'],
        [{ reason: 'ok', notify: false }, 'notify: is not an allowed field'],
      ] as const) {
        const response = await t.admin.request('POST', `/api/v1/offers/${id}/${action}`, body);
        expect(response.statusCode, JSON.stringify(body)).toBe(422);
        expect(response.json()).toEqual(error('VALIDATION_FAILED', message));
      }
    }
    expect((await list(t.admin, '?status=accepted')).map((o) => o.id)).toEqual([id]);
    expect(await holders(w)).toEqual([[w.seat, t.employee.userId]]);
    // 500 characters exactly is a reason.
    const response = await t.admin.request('POST', `/api/v1/offers/${id}/reject`, {
      reason: 'x'.repeat(500),
    });
    expect(response.statusCode, response.body).toBe(200);
  });

  it('tells giver and taker the admin’s reason, on a line after the shift’s time', async () => {
    const approval = await accepted();
    expect((await t.admin.request('PATCH', '/api/v1/tenant/settings', both)).statusCode).toBe(200);
    const body = (caller: Caller) =>
      notificationsOf(caller).then((all) => all.map((n) => (n as { body?: string }).body));
    expect(
      (
        await t.admin.request('POST', `/api/v1/offers/${approval.id}/approve`, {
          reason: 'Bob knows the till',
        })
      ).statusCode,
    ).toBe(200);
    const window = 'Tue 2 Jul, 10:00–14:00';
    expect(await body(approval.w.bob)).toEqual([`${window}\nReason: Bob knows the till`]);
    expect(await body(t.employee)).toEqual([`${window}\nReason: Bob knows the till`]);
    const rejection = await accepted();
    expect((await t.admin.request('PATCH', '/api/v1/tenant/settings', both)).statusCode).toBe(200);
    expect((await t.admin.request('POST', `/api/v1/offers/${rejection.id}/reject`)).statusCode).toBe(200);
    expect(await body(rejection.w.bob)).toEqual([window]);
  });
});

describe('DELETE /api/v1/offers/{id}', () => {
  it('lets the giver withdraw an open offer (204), and then says it is cancelled', async () => {
    const w = await world();
    const made = await offered(t.employee, w.seat);
    const response = await t.employee.request('DELETE', `/api/v1/offers/${made.id}`);
    expect(response.statusCode).toBe(204);
    expect(await list(t.employee)).toMatchObject([
      { id: made.id, status: 'cancelled', decided_by: t.employee.userId, decided_at: now.toISOString() },
    ]);
    const again = await t.employee.request('DELETE', `/api/v1/offers/${made.id}`);
    expect(again.json()).toEqual(error('INVALID_STATE', 'the offer is cancelled'));
  });

  it('lets an admin withdraw an accepted offer; a colleague and another tenant get 404', async () => {
    const w = await world();
    await approvalOn();
    const made = await offered(t.employee, w.seat);
    expect((await w.bob.request('POST', `/api/v1/offers/${made.id}/accept`)).statusCode).toBe(200);
    expect((await w.bob.request('DELETE', `/api/v1/offers/${made.id}`)).json()).toEqual(
      error('NOT_FOUND', 'offer not found'),
    );
    expect((await t.otherAdmin.request('DELETE', `/api/v1/offers/${made.id}`)).json()).toEqual(
      error('NOT_FOUND', 'offer not found'),
    );
    expect((await t.admin.request('DELETE', `/api/v1/offers/${made.id}`)).statusCode).toBe(204);
    expect(await holders(w)).toEqual([[w.seat, t.employee.userId]]);
  });

  it('is 403 to a customer', async () => {
    const w = await world();
    const made = await offered(t.employee, w.seat);
    const customer = await t.ctx.caller('customer', tenantOf(t.admin));
    const response = await customer.request('DELETE', `/api/v1/offers/${made.id}`);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('notifications', () => {
  async function notify(on: boolean) {
    const response = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      notify_on_assignment: on,
    });
    expect(response.statusCode, response.body).toBe(200);
  }
  const types = async (caller: Caller) => (await notificationsOf(caller)).map((n) => n.type);

  it('tells the target of a direct offer, the giver when it is taken, the admins when approval is needed', async () => {
    const w = await world();
    await notify(true);
    const direct = await offered(t.employee, w.seat, { to_user_id: w.bob.userId });
    expect(await types(w.bob)).toEqual(['offer.created']);
    expect((await w.bob.request('POST', `/api/v1/offers/${direct.id}/accept`)).statusCode).toBe(200);
    expect(await types(t.employee)).toEqual(['offer.taken']);

    const w2 = await world();
    // The settings are written whole: both switches at once.
    const both = { time_tracking_enabled: false, notify_on_assignment: true, offers_need_approval: true };
    expect((await t.admin.request('PATCH', '/api/v1/tenant/settings', both)).statusCode).toBe(200);
    const made = await offered(t.employee, w2.seat);
    expect(await types(w2.bob)).toEqual([]);
    expect((await w2.bob.request('POST', `/api/v1/offers/${made.id}/accept`)).statusCode).toBe(200);
    expect(await types(t.admin)).toEqual(['offer.accepted']);
  });

  it('tells nobody while the tenant’s notifications are off', async () => {
    const w = await world();
    await notify(false);
    await approvalOn();
    const direct = await offered(t.employee, w.seat, { to_user_id: w.bob.userId });
    expect((await w.bob.request('POST', `/api/v1/offers/${direct.id}/accept`)).statusCode).toBe(200);
    expect((await t.admin.request('POST', `/api/v1/offers/${direct.id}/approve`)).statusCode).toBe(200);
    for (const caller of [t.admin, t.employee, w.bob]) expect(await types(caller)).toEqual([]);
  });
});

describe('offers meet time off, the audit log and reminders', () => {
  /** Bob's approved time off over the whole shift day. */
  async function bobAway(w: World) {
    const { id } = await created(w.bob, '/api/v1/me/time-off', {
      starts_at: '2030-07-02T00:00:00Z',
      ends_at: '2030-07-03T00:00:00Z',
    });
    const approved = await t.admin.request('POST', `/api/v1/time-off/${id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
  }

  it('refuses a taker away on approved time off: 409 UNAVAILABLE, the seat stays', async () => {
    const w = await world();
    const { id } = await offered(t.employee, w.seat);
    await bobAway(w);
    const response = await w.bob.request('POST', `/api/v1/offers/${id}/accept`);
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toEqual(error('UNAVAILABLE', 'the user has approved time off then'));
    expect(await holders(w)).toEqual([[w.seat, t.employee.userId]]);
    expect((await list(t.admin))[0]?.status).toBe('open');
  });

  it('refuses the approval of a swap whose taker went on time off meanwhile', async () => {
    const w = await world();
    await approvalOn();
    const { id } = await offered(t.employee, w.seat);
    const accepted = await w.bob.request('POST', `/api/v1/offers/${id}/accept`);
    expect(accepted.json()).toMatchObject({ status: 'accepted' });
    await bobAway(w);
    const response = await t.admin.request('POST', `/api/v1/offers/${id}/approve`);
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toEqual(error('UNAVAILABLE', 'the user has approved time off then'));
    expect(await holders(w)).toEqual([[w.seat, t.employee.userId]]);
  });

  it('records each step in the audit log under its name, with the seat that moved', async () => {
    const w = await world();
    await approvalOn();
    const { id } = await offered(t.employee, w.seat);
    await w.bob.request('POST', `/api/v1/offers/${id}/accept`);
    await t.admin.request('POST', `/api/v1/offers/${id}/approve`);
    const entries = async (target: string) =>
      (
        (await t.admin.request('GET', `/api/v1/audit-log?target_id=${target}`)).json() as {
          action: string;
          actor_user_id: string;
          changes: { before: Record<string, unknown>; after: Record<string, unknown> };
        }[]
      ).reverse();
    expect((await entries(id)).map((e) => [e.action, e.actor_user_id])).toEqual([
      ['offer.created', t.employee.userId],
      ['offer.accepted', w.bob.userId],
      ['offer.approved', t.admin.userId],
    ]);
    const seat = await entries(w.seat);
    expect(seat.map((e) => e.action)).toEqual(['assignment.claimed', 'assignment.updated']);
    expect(seat[1]).toMatchObject({
      actor_user_id: t.admin.userId,
      changes: { before: { user_id: t.employee.userId }, after: { user_id: w.bob.userId } },
    });
  });

  it('leaves the taker to be reminded of a seat its giver was reminded of', async () => {
    const w = await world();
    const { id } = await offered(t.employee, w.seat);
    // The giver's reminder was written (migration 0008 keeps one per seat).
    await t.ctx.db.owner
      .insertInto('shift_reminders')
      .values({ tenant_id: t.employee.tenantId, assignment_id: w.seat })
      .execute();
    const taken = await w.bob.request('POST', `/api/v1/offers/${id}/accept`);
    expect(taken.statusCode, taken.body).toBe(200);
    const left = await t.ctx.db.owner
      .selectFrom('shift_reminders')
      .select('assignment_id')
      .where('assignment_id', '=', w.seat)
      .execute();
    expect(left).toEqual([]);
  });
});
