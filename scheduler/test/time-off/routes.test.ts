import { describe, expect, it } from 'vitest';
import { MAX_OPEN_TIME_OFF } from '../../src/time-off/schemas.ts';
import { type Caller, FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/** Time off through the API: requests, decisions, the list, removal, and what approval blocks. */
const t = useRouteTests();

const hex32 = /^[0-9a-f]{32}$/;
/** The employee's shift is 10:00-14:00 on 2 July 2030; this span covers it. */
const overShift = { starts_at: '2030-07-02T00:00:00Z', ends_at: '2030-07-03T00:00:00Z' };
const elsewhen = { starts_at: '2030-08-01T00:00:00Z', ends_at: '2030-08-15T00:00:00Z' };

const request = (caller: Caller, body: Record<string, unknown>) =>
  caller.request('POST', '/api/v1/me/time-off', body);
const ask = (caller: Caller, body: Record<string, unknown>) => created(caller, '/api/v1/me/time-off', body);
const approve = (caller: Caller, id: string, body?: unknown) =>
  caller.request('POST', `/api/v1/time-off/${id}/approve`, body);
const reject = (caller: Caller, id: string, body?: unknown) =>
  caller.request('POST', `/api/v1/time-off/${id}/reject`, body);
const list = async (caller: Caller, query = '') => {
  const response = await caller.request('GET', `/api/v1/time-off${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { id: string }[]).map((row) => row.id);
};
const error = (code: string, message: string) => ({ error: { code, message } });

async function setApproval(admin: Caller, needed: boolean) {
  const settings = (await admin.request('GET', '/api/v1/tenant/settings')).json();
  const { tenant_id: _, created_at: __, updated_at: ___, ...writable } = settings;
  const response = await admin.request('PATCH', '/api/v1/tenant/settings', {
    ...writable,
    time_off_needs_approval: needed,
  });
  expect(response.statusCode, response.body).toBe(200);
}

/** A published shift 10:00-14:00 on 2 July 2030 with a free seat the employee may take. */
async function openShift() {
  const roleId = await newRole(t.admin);
  await qualify(t.admin, t.employee, roleId);
  await qualify(t.admin, t.admin, roleId);
  const shift = await newShift(t.admin, await newEvent(t.admin), { roleId, capacities: [3] });
  return { shiftId: shift.id, slotId: shift.slots[0] as string };
}

/** A name only admins may read: what no answer to an employee may carry. */
const CONFIDENTIAL = 'Layoff briefing (confidential)';

/**
 * Two seats an admin gave the employee in shifts they cannot see: a draft shift of a
 * published event (2 July 2030, 16:00-18:00) and a published shift of a draft event
 * (3 July 2030, 10:00-14:00), both named CONFIDENTIAL. Answers the ids an employee must
 * never read, and the seats as an admin's refusal names them, earliest first.
 */
async function hiddenSeats() {
  const roleId = await newRole(t.admin, uniqueName('Cook'));
  await qualify(t.admin, t.employee, roleId);
  const ids: string[] = [];
  const named: string[] = [];
  for (const [eventPublished, shiftPublished, day, hours] of [
    [true, false, '02', ['16', '18']],
    [false, true, '03', ['10', '14']],
  ] as const) {
    const event = await created(t.admin, '/api/v1/events', {
      name: CONFIDENTIAL,
      starts_at: '2030-07-01T00:00:00Z',
      ends_at: '2030-07-08T00:00:00Z',
    });
    if (eventPublished) await t.admin.request('POST', `/api/v1/events/${event.id}/publish`);
    const shift = await created(t.admin, '/api/v1/shifts', {
      event_id: event.id,
      name: CONFIDENTIAL,
      starts_at: `2030-07-${day}T${hours[0]}:00:00Z`,
      ends_at: `2030-07-${day}T${hours[1]}:00:00Z`,
      slots: [{ role_id: roleId, capacity: 1 }],
    });
    if (shiftPublished) {
      const published = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/publish`);
      expect(published.statusCode, published.body).toBe(200);
    }
    const slot = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()[0].id as string;
    const seat = await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${slot}/assign`, {
      user_id: t.employee.userId,
    });
    ids.push(event.id, shift.id, slot, seat.id);
    named.push(`${seat.id} (shift "${CONFIDENTIAL}", ${shift.id})`);
  }
  return { ids, named };
}

describe('POST /me/time-off', () => {
  it('records a request for the caller (201 requested), reason trimmed', async () => {
    const response = await request(t.employee, { ...elsewhen, reason: '  Summer\nholiday ' });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json();
    expect(body).toEqual({
      id: expect.stringMatching(hex32),
      tenant_id: t.employee.tenantId,
      user_id: t.employee.userId,
      starts_at: '2030-08-01T00:00:00.000Z',
      ends_at: '2030-08-15T00:00:00.000Z',
      reason: 'Summer\nholiday',
      status: 'requested',
      decided_by: null,
      decided_at: null,
      created_at: expect.any(String),
      decision_reason: null,
    });
    expect(await list(t.employee)).toEqual([body.id]);
  });

  it('lets admins ask for their own, and stores a blank reason as null', async () => {
    const body = await ask(t.admin, { ...elsewhen, reason: '   ' });
    expect(body).toMatchObject({ user_id: t.admin.userId, reason: null, status: 'requested' });
  });

  it('approves at once when the tenant needs no approval (decided_by null)', async () => {
    await setApproval(t.admin, false);
    const body = await ask(t.employee, elsewhen);
    expect(body).toMatchObject({ status: 'approved', decided_by: null, decided_at: expect.any(String) });
  });

  it('refuses (409) approved-at-once time off overlapping the caller’s assignments, storing nothing', async () => {
    const { shiftId, slotId } = await openShift();
    const seat = await created(t.employee, `/api/v1/shifts/${shiftId}/slots/${slotId}/claim`, {});
    await setApproval(t.admin, false);
    const response = await request(t.employee, overShift);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(
      error(
        'OVERLAPPING_ASSIGNMENT',
        `the time off overlaps assignments of the user: ${seat.id} (shift "Bar", ${shiftId})`,
      ),
    );
    expect(await list(t.employee)).toEqual([]);
  });

  it('names to an employee only the assignments they may see, and counts the others', async () => {
    const { shiftId, slotId } = await openShift();
    const seat = await created(t.employee, `/api/v1/shifts/${shiftId}/slots/${slotId}/claim`, {});
    const hidden = await hiddenSeats();
    await setApproval(t.admin, false);
    const response = await request(t.employee, {
      starts_at: '2030-07-02T00:00:00Z',
      ends_at: '2030-07-04T00:00:00Z',
    });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(
      error(
        'OVERLAPPING_ASSIGNMENT',
        `the time off overlaps assignments of the user: ${seat.id} (shift "Bar", ${shiftId}) and 2 assignments you cannot see`,
      ),
    );
    for (const secret of [CONFIDENTIAL, ...hidden.ids]) expect(response.body).not.toContain(secret);
    // Only hidden ones: counted, nothing named.
    const alone = await request(t.employee, {
      starts_at: '2030-07-03T00:00:00Z',
      ends_at: '2030-07-04T00:00:00Z',
    });
    expect(alone.json()).toEqual(
      error(
        'OVERLAPPING_ASSIGNMENT',
        'the time off overlaps assignments of the user: 1 assignment you cannot see',
      ),
    );
    expect(await list(t.employee)).toEqual([]);
  });

  it('names every overlapping assignment to an admin, drafts included', async () => {
    const hidden = await hiddenSeats();
    const off = await ask(t.employee, { starts_at: '2030-07-02T00:00:00Z', ends_at: '2030-07-04T00:00:00Z' });
    const response = await approve(t.admin, off.id);
    expect(response.json()).toEqual(
      error(
        'OVERLAPPING_ASSIGNMENT',
        `the time off overlaps assignments of the user: ${hidden.named.join(', ')}`,
      ),
    );
  });

  it('refuses (409 DUPLICATE) time off overlapping the caller’s requested or approved one, storing nothing', async () => {
    const first = await ask(t.employee, elsewhen);
    const overlapping = { starts_at: '2030-08-14T00:00:00Z', ends_at: '2030-08-20T00:00:00Z' };
    const refused = await request(t.employee, overlapping);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual(
      error('DUPLICATE', `the time off overlaps time off of the user: ${first.id} (requested)`),
    );
    expect((await approve(t.admin, first.id)).statusCode).toBe(200);
    expect((await request(t.employee, elsewhen)).json()).toEqual(
      error('DUPLICATE', `the time off overlaps time off of the user: ${first.id} (approved)`),
    );
    expect(await list(t.employee)).toEqual([first.id]);
    // Touching end to start is no overlap; a colleague's time off is theirs.
    await ask(t.employee, { starts_at: elsewhen.ends_at, ends_at: '2030-08-16T00:00:00Z' });
    await ask(t.admin, overlapping);
  });

  it('lets a rejected time off be asked for again', async () => {
    const first = await ask(t.employee, elsewhen);
    expect((await reject(t.admin, first.id)).statusCode).toBe(200);
    await ask(t.employee, elsewhen);
  });

  it(`holds at most ${MAX_OPEN_TIME_OFF} open time off per user (409 INVALID_STATE); past approved ones are not open`, async () => {
    const day = (n: number) => new Date(Date.UTC(2031, 0, 1 + n)).toISOString();
    const made: string[] = [];
    for (let n = 0; n < MAX_OPEN_TIME_OFF; n += 1) {
      made.push((await ask(t.employee, { starts_at: day(n), ends_at: day(n + 1) })).id);
    }
    // Approved and not over still counts.
    expect((await approve(t.admin, made[0] as string)).statusCode).toBe(200);
    const next = { starts_at: day(MAX_OPEN_TIME_OFF), ends_at: day(MAX_OPEN_TIME_OFF + 1) };
    const refused = await request(t.employee, next);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual(
      error(
        'INVALID_STATE',
        `the user has ${MAX_OPEN_TIME_OFF} open time off (requested, or approved and not over); remove one or wait for a decision`,
      ),
    );
    // Another user's count is their own.
    await ask(t.admin, next);
    // A decided request is no longer open: it frees a place.
    expect((await reject(t.admin, made[1] as string)).statusCode).toBe(200);
    await ask(t.employee, next);
    expect((await request(t.employee, { starts_at: day(60), ends_at: day(61) })).statusCode).toBe(409);
    // Sick leave entered afterwards, approved as entered, is over already: not open.
    await setApproval(t.admin, false);
    const past = await ask(t.employee, {
      starts_at: '2026-01-05T00:00:00Z',
      ends_at: '2026-01-07T00:00:00Z',
    });
    expect(past.status).toBe('approved');
  });

  it.each([
    [{ ...elsewhen, ends_at: elsewhen.starts_at }, 'ends_at: must be after starts_at'],
    [{ starts_at: elsewhen.ends_at, ends_at: elsewhen.starts_at }, 'ends_at: must be after starts_at'],
    [
      { starts_at: '2030-01-01T00:00:00Z', ends_at: '2031-01-02T00:00:01Z' },
      'ends_at: time off lasts at most 366 days',
    ],
  ])('refuses (422) the window %j', async (body, message) => {
    const response = await request(t.employee, body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual(error('VALIDATION_FAILED', message));
  });

  it('takes 366 days exactly', async () => {
    await ask(t.employee, { starts_at: '2030-01-01T00:00:00Z', ends_at: '2031-01-02T00:00:00Z' });
  });

  it.each([
    [{ starts_at: elsewhen.starts_at }, 'VALIDATION_FAILED'],
    [{ ...elsewhen, reason: 'x'.repeat(501) }, 'VALIDATION_FAILED'],
    [{ ...elsewhen, reason: 'bad\u202Etext' }, 'VALIDATION_FAILED'],
    [{ ...elsewhen, user_id: '3f2504e04f8941d39a0c0305e82c3301' }, 'VALIDATION_FAILED'],
    [{ ...elsewhen, starts_at: 'tomorrow' }, 'VALIDATION_FAILED'],
  ])('refuses (422) the body %j', async (body, code) => {
    const response = await request(t.employee, body);
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe(code);
  });

  it('refuses customers (403)', async () => {
    const customer = await t.ctx.caller('customer', tenantName(t.admin));
    const response = await request(customer, elsewhen);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

function tenantName(caller: Caller): string {
  const payload = JSON.parse(Buffer.from(caller.token.split('.')[1] ?? '', 'base64url').toString());
  return String(payload.tenant_id);
}

describe('POST /time-off/{id}/approve and /reject', () => {
  it('approves a request (200), naming the admin, and then refuses a second decision (409)', async () => {
    const off = await ask(t.employee, elsewhen);
    const response = await approve(t.admin, off.id);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      id: off.id,
      status: 'approved',
      decided_by: t.admin.userId,
      decided_at: expect.any(String),
    });
    for (const decide of [approve, reject]) {
      const again = await decide(t.admin, off.id);
      expect(again.statusCode).toBe(409);
      expect(again.json()).toEqual(
        error('INVALID_STATE', 'the time off is approved; only a requested one can be decided'),
      );
    }
  });

  it('rejects a request (200); a rejected one cannot be approved (409)', async () => {
    const off = await ask(t.employee, elsewhen);
    const response = await reject(t.admin, off.id);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ status: 'rejected', decided_by: t.admin.userId });
    const again = await approve(t.admin, off.id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(
      error('INVALID_STATE', 'the time off is rejected; only a requested one can be decided'),
    );
  });

  it('refuses (409) approving time off overlapping assignments, naming them, and changes nothing', async () => {
    const { shiftId, slotId } = await openShift();
    const seat = await created(t.employee, `/api/v1/shifts/${shiftId}/slots/${slotId}/claim`, {});
    const off = await ask(t.employee, overShift);
    const response = await approve(t.admin, off.id);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(
      error(
        'OVERLAPPING_ASSIGNMENT',
        `the time off overlaps assignments of the user: ${seat.id} (shift "Bar", ${shiftId})`,
      ),
    );
    expect(await list(t.admin, '?status=requested')).toEqual([off.id]);
    const seats = (await t.admin.request('GET', `/api/v1/shifts/${shiftId}/assignments`)).json();
    expect(seats.map((s: { id: string }) => s.id)).toEqual([seat.id]);
    // Once the seat is freed, the approval goes through.
    expect(
      (await t.admin.request('DELETE', `/api/v1/shifts/${shiftId}/assignments/${seat.id}`)).statusCode,
    ).toBe(204);
    expect((await approve(t.admin, off.id)).statusCode).toBe(200);
  });

  it('names at most 10 overlapping assignments, earliest first, and says when there are more', async () => {
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const eventId = await newEvent(t.admin);
    const seats: { id: string; shift: string }[] = [];
    const seatAt = async (hour: number) => {
      const hh = String(hour * 2).padStart(2, '0');
      const shift = await newShift(t.admin, eventId, {
        roleId,
        starts_at: `2030-07-04T${hh}:00:00Z`,
        ends_at: `2030-07-04T${hh}:30:00Z`,
      });
      const seat = await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
      seats.push({ id: seat.id, shift: shift.id });
    };
    for (let hour = 0; hour < 10; hour += 1) await seatAt(hour);
    const off = await ask(t.employee, { starts_at: '2030-07-04T00:00:00Z', ends_at: '2030-07-05T00:00:00Z' });
    const named = (list: typeof seats) => list.map((s) => `${s.id} (shift "Bar", ${s.shift})`).join(', ');
    const ten = await approve(t.admin, off.id);
    expect(ten.statusCode).toBe(409);
    expect(ten.json()).toEqual(
      error('OVERLAPPING_ASSIGNMENT', `the time off overlaps assignments of the user: ${named(seats)}`),
    );
    await seatAt(10);
    const eleven = await approve(t.admin, off.id);
    expect(eleven.json()).toEqual(
      error(
        'OVERLAPPING_ASSIGNMENT',
        `the time off overlaps assignments of the user: ${named(seats.slice(0, 10))} and more`,
      ),
    );
  });

  it('refuses employees (403), with a reason or without', async () => {
    const off = await ask(t.employee, elsewhen);
    for (const decide of [approve, reject]) {
      for (const body of [undefined, { reason: 'Approving my own' }]) {
        const response = await decide(t.employee, off.id, body);
        expect(response.statusCode).toBe(403);
        expect(response.json()).toEqual(FORBIDDEN_BODY);
      }
    }
    expect(await list(t.admin, '?status=requested')).toEqual([off.id]);
  });

  it('answers 404 for another tenant’s time off, an unknown id and a malformed one', async () => {
    const off = await ask(t.employee, elsewhen);
    for (const decide of [approve, reject]) {
      for (const [caller, id] of [
        [t.otherAdmin, off.id],
        [t.admin, '0193a1b2c3d47e8f9a0b1c2d3e4f5aff'],
        [t.admin, 'nope'],
      ] as const) {
        for (const body of [undefined, { reason: 'Enjoy' }]) {
          const response = await decide(caller, id, body);
          expect(response.statusCode).toBe(404);
          expect(response.json()).toEqual(error('NOT_FOUND', 'time off not found'));
        }
      }
    }
    expect(await list(t.admin, '?status=requested')).toEqual([off.id]);
  });

  it('stores the admin’s reason, trimmed, as decision_reason, which the requester reads', async () => {
    const first = await ask(t.employee, elsewhen);
    const approved = await approve(t.admin, first.id, { reason: '  Enjoy the summer ' });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'approved', decision_reason: 'Enjoy the summer' });
    const second = await ask(t.employee, {
      starts_at: '2030-09-01T00:00:00Z',
      ends_at: '2030-09-02T00:00:00Z',
    });
    const rejected = await reject(t.admin, second.id, { reason: 'Inventory day: everyone is needed' });
    expect(rejected.json()).toMatchObject({
      status: 'rejected',
      decision_reason: 'Inventory day: everyone is needed',
    });
    const own = (await t.employee.request('GET', '/api/v1/time-off')).json() as Record<string, unknown>[];
    expect(own.map((row) => [row.id, row.decision_reason])).toEqual([
      [first.id, 'Enjoy the summer'],
      [second.id, 'Inventory day: everyone is needed'],
    ]);
  });

  it('decides as before with no body, an empty one, {} or null: no reason', async () => {
    const days = ['01', '03', '05', '07'];
    for (const [i, sent] of [undefined, '', '{}', 'null'].entries()) {
      const day = days[i] as string;
      const off = await ask(t.employee, {
        starts_at: `2030-10-${day}T00:00:00Z`,
        ends_at: `2030-10-${day}T12:00:00Z`,
      });
      const response = await t.ctx.request(
        'POST',
        `/api/v1/time-off/${off.id}/${i % 2 ? 'reject' : 'approve'}`,
        {
          token: t.admin.token,
          ...(sent === undefined ? {} : { rawBody: sent }),
        },
      );
      expect(response.statusCode, `${sent}: ${response.body}`).toBe(200);
      expect(response.json()).toMatchObject({ decided_by: t.admin.userId, decision_reason: null });
    }
  });

  it('refuses (422) a reason too long, of two lines, blank or not text, and an unknown field; nothing changes', async () => {
    const off = await ask(t.employee, elsewhen);
    for (const decide of [approve, reject]) {
      for (const [body, message] of [
        [{ reason: 'x'.repeat(501) }, 'reason: must NOT have more than 500 characters'],
        [{ reason: 'Busy week\r\nsorry' }, 'reason: must be one line of text, without control characters'],
        [{ reason: 'Busy week\u2028sorry' }, 'reason: must be one line of text, without control characters'],
        [{ reason: '' }, 'reason: must NOT have fewer than 1 characters'],
        [{ reason: ' \t ' }, 'reason: must not be blank'],
        [{ reason: null }, 'reason: must be string'],
        [{ reason: 'ok', status: 'approved' }, 'status: is not an allowed field'],
      ] as const) {
        const response = await decide(t.admin, off.id, body);
        expect(response.statusCode, JSON.stringify(body)).toBe(422);
        expect(response.json()).toEqual(error('VALIDATION_FAILED', message));
      }
    }
    expect(await list(t.admin, '?status=requested')).toEqual([off.id]);
    // 500 characters, astral ones counted as one each as the database counts them, is a reason.
    const longest = `${'x'.repeat(499)}🏖`;
    const response = await approve(t.admin, off.id, { reason: longest });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ decision_reason: longest });
  });
});

describe('approved time off blocks seats', () => {
  it('refuses (409 UNAVAILABLE) a claim and an assignment overlapping it; requested or rejected ones block nothing', async () => {
    const { shiftId, slotId } = await openShift();
    const claim = () => t.employee.request('POST', `/api/v1/shifts/${shiftId}/slots/${slotId}/claim`, {});
    const assign = () =>
      t.admin.request('POST', `/api/v1/shifts/${shiftId}/slots/${slotId}/assign`, {
        user_id: t.employee.userId,
      });
    const rejected = await ask(t.employee, overShift);
    expect((await reject(t.admin, rejected.id)).statusCode).toBe(200);
    const off = await ask(t.employee, overShift);
    // Requested: nothing blocked yet.
    const seat = await claim();
    expect(seat.statusCode, seat.body).toBe(201);
    expect(
      (await t.admin.request('DELETE', `/api/v1/shifts/${shiftId}/assignments/${seat.json().id}`)).statusCode,
    ).toBe(204);
    expect((await approve(t.admin, off.id)).statusCode).toBe(200);
    for (const take of [claim, assign]) {
      const response = await take();
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual(error('UNAVAILABLE', 'the user has approved time off then'));
    }
    // Someone else still takes the seat; and once the time off is removed, so does the employee.
    expect(
      (await t.admin.request('POST', `/api/v1/shifts/${shiftId}/slots/${slotId}/claim`, {})).statusCode,
    ).toBe(201);
    expect((await t.admin.request('DELETE', `/api/v1/time-off/${off.id}`)).statusCode).toBe(204);
    expect((await claim()).statusCode).toBe(201);
  });

  it('blocks only overlapping shifts: one ending as the time off starts is taken', async () => {
    const { shiftId, slotId } = await openShift();
    await setApproval(t.admin, false);
    await ask(t.employee, { starts_at: '2030-07-02T14:00:00Z', ends_at: '2030-07-03T00:00:00Z' });
    const response = await t.employee.request('POST', `/api/v1/shifts/${shiftId}/slots/${slotId}/claim`, {});
    expect(response.statusCode, response.body).toBe(201);
  });
});

describe('GET /time-off', () => {
  async function three() {
    const mine = await ask(t.employee, elsewhen);
    const later = await ask(t.employee, {
      starts_at: '2030-09-01T00:00:00Z',
      ends_at: '2030-09-02T00:00:00Z',
    });
    const admins = await ask(t.admin, { starts_at: '2030-08-10T00:00:00Z', ends_at: '2030-08-11T00:00:00Z' });
    await approve(t.admin, later.id);
    return { mine: mine.id, later: later.id, admins: admins.id };
  }

  it('shows admins all, by start; employees their own', async () => {
    const { mine, later, admins } = await three();
    expect(await list(t.admin)).toEqual([mine, admins, later]);
    expect(await list(t.employee)).toEqual([mine, later]);
    expect(await list(t.otherAdmin)).toEqual([]);
  });

  it('filters by user, status and window (overlap, either end open)', async () => {
    const { mine, later, admins } = await three();
    expect(await list(t.admin, `?user_id=${t.admin.userId}`)).toEqual([admins]);
    expect(await list(t.admin, '?status=approved')).toEqual([later]);
    expect(await list(t.admin, '?status=requested')).toEqual([mine, admins]);
    expect(await list(t.admin, '?from=2030-08-11T00:00:00Z')).toEqual([mine, later]);
    expect(await list(t.admin, '?to=2030-08-10T00:00:01Z')).toEqual([mine, admins]);
    expect(await list(t.admin, '?from=2030-08-15T00:00:00Z&to=2030-09-01T00:00:00Z')).toEqual([]);
    expect(await list(t.employee, `?user_id=${t.employee.userId}&status=approved`)).toEqual([later]);
  });

  it('pages with limit and after', async () => {
    const { mine, later, admins } = await three();
    expect(await list(t.admin, '?limit=2')).toEqual([mine, admins]);
    expect(await list(t.admin, `?limit=2&after=${admins}`)).toEqual([later]);
    expect(await list(t.admin, `?after=${later}`)).toEqual([]);
  });

  it('refuses (403) an employee naming another user, whether or not they exist', async () => {
    for (const id of [t.admin.userId, '0193a1b2c3d47e8f9a0b1c2d3e4f5aff']) {
      const response = await t.employee.request('GET', `/api/v1/time-off?user_id=${id}`);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
  });

  it('answers 404 for a user of another tenant, and 422 for a cursor the caller may not read', async () => {
    const { admins } = await three();
    const stranger = await t.ctx.caller('employee', tenantName(t.otherAdmin), uniqueName('stranger'));
    const response = await t.admin.request('GET', `/api/v1/time-off?user_id=${stranger.userId}`);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual(error('NOT_FOUND', 'user not found'));
    for (const caller of [t.employee, t.otherAdmin]) {
      const page = await caller.request('GET', `/api/v1/time-off?after=${admins}`);
      expect(page.statusCode).toBe(422);
      expect(page.json()).toEqual(error('VALIDATION_FAILED', 'after: no such time off'));
    }
  });

  it.each([
    ['?from=2030-08-02T00:00:00Z&to=2030-08-01T00:00:00Z', 'to: must be after from'],
    ['?from=2030-08-01T00:00:00Z&to=2030-08-01T00:00:00Z', 'to: must be after from'],
    ['?status=pending', undefined],
    ['?limit=0', undefined],
    ['?limit=501', undefined],
    ['?from=yesterday', undefined],
    ['?user_id=nope', undefined],
    ['?colour=red', undefined],
  ])('refuses (422) %s', async (query, message) => {
    const response = await t.admin.request('GET', `/api/v1/time-off${query}`);
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    if (message) expect(response.json().error.message).toBe(message);
  });

  it('refuses customers (403)', async () => {
    const customer = await t.ctx.caller('customer', tenantName(t.admin));
    expect((await customer.request('GET', '/api/v1/time-off')).statusCode).toBe(403);
  });
});

describe('DELETE /time-off/{id}', () => {
  const remove = (caller: Caller, id: string) => caller.request('DELETE', `/api/v1/time-off/${id}`);

  it('lets the owner remove a request (204)', async () => {
    const off = await ask(t.employee, elsewhen);
    const response = await remove(t.employee, off.id);
    expect(response.statusCode).toBe(204);
    expect(await list(t.admin)).toEqual([]);
  });

  it('refuses (409) the owner removing a decided one; admins remove it (204)', async () => {
    const approved = await ask(t.employee, elsewhen);
    const rejected = await ask(t.employee, overShift);
    await approve(t.admin, approved.id);
    await reject(t.admin, rejected.id);
    for (const [off, status] of [
      [approved, 'approved'],
      [rejected, 'rejected'],
    ] as const) {
      const response = await remove(t.employee, off.id);
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual(
        error('INVALID_STATE', `the time off is ${status}; ask an admin to remove it`),
      );
      expect((await remove(t.admin, off.id)).statusCode).toBe(204);
    }
    expect(await list(t.admin)).toEqual([]);
  });

  it('answers 404 for someone else’s (to an employee), another tenant’s, and one already gone', async () => {
    const admins = await ask(t.admin, elsewhen);
    const mine = await ask(t.employee, elsewhen);
    for (const [caller, id] of [
      [t.employee, admins.id],
      [t.otherAdmin, mine.id],
      [t.admin, 'nope'],
    ] as const) {
      const response = await remove(caller, id);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(error('NOT_FOUND', 'time off not found'));
    }
    expect((await list(t.admin)).sort()).toEqual([mine.id, admins.id].sort());
    expect((await remove(t.employee, mine.id)).statusCode).toBe(204);
    expect((await remove(t.employee, mine.id)).statusCode).toBe(404);
  });
});
