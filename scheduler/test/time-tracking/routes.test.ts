import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { FORBIDDEN_BODY, uniqueName, useRouteTests } from '../support/context.ts';
import { appDbHooks } from '../support/db-hooks.ts';
import { asLegacyRows } from '../support/legacy-rows.ts';
import { created, tenantOf } from '../support/scheduling.ts';
import { assignedShift, ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';

/**
 * Time tracking: entries, overtime, payouts and the ledger, through the API, with the
 * books checked after every test (each stored balance equals its ledger's sum).
 */
/** The API's clock: the real one, unless a test sets it elsewhere (the database's stays real). */
let apiNow: Date | null = null;
const hooks = appDbHooks();
const t = useRouteTests({ clock: { now: () => apiNow ?? new Date() }, viewDb: hooks.viewDb });
afterEach(async () => {
  apiNow = null;
  expect(await ledgerMismatches(t.ctx.db.owner)).toEqual([]);
});

const hex32 = /^[0-9a-f]{32}$/;
const at = (hhmm: string, day = '2030-07-02') => `${day}T${hhmm}:00Z`;

/** The usual case: time tracking on, the employee assigned to 10:00-14:00 (240 minutes). */
async function world() {
  await setTimeTracking(t.admin, true);
  const assignment = await assignedShift(t.admin, t.employee);
  const record = (body: Record<string, unknown>) =>
    t.admin.request('POST', '/api/v1/time-tracking/entries', { shift_assignment_id: assignment, ...body });
  const balance = async () =>
    (await t.admin.request('GET', `/api/v1/time-tracking/balance/${t.employee.userId}`)).json()
      .balance_minutes;
  const ledger = async () =>
    (
      (await t.admin.request('GET', `/api/v1/time-tracking/ledger/${t.employee.userId}`)).json() as {
        kind: string;
        delta_minutes: number;
      }[]
    ).map((row) => [row.kind, row.delta_minutes]);
  return { assignment, record, balance, ledger };
}

describe('POST /time-tracking/entries before the shift ends', () => {
  const notEnded = {
    error: { code: 'SHIFT_NOT_ENDED', message: 'the shift has not ended; time is recorded once it has' },
  };
  const record = (assignment: string, ended_at = at('14:00')) =>
    t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: assignment,
      started_at: at('10:00'),
      ended_at,
    });
  const entries = async () => (await t.admin.request('GET', '/api/v1/time-tracking/entries')).json();

  it('refuses (409 SHIFT_NOT_ENDED) a shift that has not ended, storing nothing, while the tenant does not allow it', async () => {
    await setTimeTracking(t.admin, true, 'UTC', false);
    const upcoming = await assignedShift(t.admin, t.employee);
    const response = await record(upcoming);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(notEnded);
    expect(await entries()).toEqual([]);
    // A shift that has started but not ended is refused too.
    const now = Date.now();
    const running = await assignedShift(t.admin, t.employee, {
      starts_at: new Date(now - 3_600_000).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
    });
    const early = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: running,
      started_at: new Date(now - 3_600_000).toISOString(),
      ended_at: new Date(now).toISOString(),
    });
    expect(early.json()).toEqual(notEnded);
    // One that has ended is recorded.
    const past = await assignedShift(t.admin, t.employee, {
      starts_at: '2020-07-02T10:00:00Z',
      ends_at: '2020-07-02T14:00:00Z',
    });
    const recorded = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: past,
      started_at: '2020-07-02T10:00:00Z',
      ended_at: '2020-07-02T14:30:00Z',
    });
    expect(recorded.statusCode, recorded.body).toBe(201);
    expect(recorded.json().overtime_minutes).toBe(30);
  });

  it('records it when the tenant allows it, and corrects it once the setting is off again', async () => {
    await setTimeTracking(t.admin, true, 'UTC', true);
    const upcoming = await assignedShift(t.admin, t.employee);
    const first = await record(upcoming);
    expect(first.statusCode, first.body).toBe(201);
    await setTimeTracking(t.admin, true, 'UTC', false);
    // An admin's correction of a recorded seat is always taken; a re-post changes nothing.
    const corrected = await record(upcoming, at('14:45'));
    expect(corrected.statusCode, corrected.body).toBe(200);
    expect(corrected.json()).toMatchObject({
      id: first.json().id,
      worked_minutes: 285,
      overtime_minutes: 45,
    });
    expect((await record(upcoming, at('14:45'))).statusCode).toBe(200);
    // Another seat on an upcoming shift is still refused.
    expect((await record(await assignedShift(t.admin, t.admin))).json()).toEqual(notEnded);
  });

  it('answers SHIFT_NOT_ENDED when only the database’s clock says the shift has not ended', async () => {
    await setTimeTracking(t.admin, true, 'UTC', false);
    const upcoming = await assignedShift(t.admin, t.employee);
    // The API's clock runs ahead: it believes the shift of 2030 is over; the database's now() does not.
    apiNow = new Date('2031-01-01T00:00:00Z');
    const response = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: upcoming,
      started_at: at('10:00'),
      ended_at: at('14:00'),
    });
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toEqual(notEnded);
  });

  it('refuses employees (403), before anything is read', async () => {
    await setTimeTracking(t.admin, true, 'UTC', false);
    const upcoming = await assignedShift(t.admin, t.employee);
    const response = await t.employee.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: upcoming,
      started_at: at('10:00'),
      ended_at: at('14:00'),
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('POST /time-tracking/entries', () => {
  it('refuses (422) an entry on a shift too long to schedule, one that outlived the rule, instead of overflowing', async () => {
    await setTimeTracking(t.admin, true);
    // A shift of four thousand years, as a database written before shifts were bounded may hold.
    const owner = t.ctx.db.owner;
    const tenant = t.admin.tenantId;
    const id = () => randomUUID().replaceAll('-', '');
    const [role, event, shift, slot, assignment] = [id(), id(), id(), id(), id()];
    await owner.insertInto('roles').values({ tenant_id: tenant, id: role, name: 'Keeper' }).execute();
    await owner
      .insertInto('events')
      .values({
        tenant_id: tenant,
        id: event,
        name: 'Ages',
        starts_at: '2000-01-01T00:00:00Z',
        ends_at: '6000-01-01T00:00:00Z',
      })
      .execute();
    await asLegacyRows(owner, () =>
      owner
        .insertInto('shifts')
        .values({
          tenant_id: tenant,
          id: shift,
          event_id: event,
          name: 'Watch',
          starts_at: '2000-01-01T00:00:00Z',
          ends_at: '6000-01-01T00:00:00Z',
        })
        .execute(),
    );
    await owner
      .insertInto('shift_slots')
      .values({ tenant_id: tenant, id: slot, shift_id: shift, role_id: role, capacity: 1 })
      .execute();
    await owner
      .insertInto('shift_assignments')
      .values({
        tenant_id: tenant,
        id: assignment,
        shift_id: shift,
        slot_id: slot,
        user_id: t.employee.userId,
        source: 'assign',
        starts_at: '2000-01-01T00:00:00Z',
        ends_at: '6000-01-01T00:00:00Z',
      })
      .execute();
    const response = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: assignment,
      started_at: '2000-01-01T00:00:00Z',
      ended_at: '2000-01-01T08:00:00Z',
    });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json()).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: 'shift_assignment_id: its shift is longer than 7 days; no time can be recorded against it',
      },
    });
  });

  it('records an entry (201) with its arithmetic and credits the overtime in the ledger', async () => {
    const w = await world();
    const response = await w.record({ started_at: at('09:50'), ended_at: at('14:40'), break_minutes: 30 });
    expect(response.statusCode).toBe(201);
    const entry = response.json();
    expect(entry).toEqual({
      id: expect.stringMatching(hex32),
      tenant_id: t.employee.tenantId,
      shift_assignment_id: w.assignment,
      user_id: t.employee.userId,
      // An admin's recording is in the books at once.
      status: 'confirmed',
      started_at: '2030-07-02T09:50:00.000Z',
      ended_at: '2030-07-02T14:40:00.000Z',
      break_minutes: 30,
      worked_minutes: 260,
      scheduled_minutes: 240,
      overtime_minutes: 20,
      recorded_by: t.admin.userId,
      confirmed_at: entry.created_at,
      confirmed_by: t.admin.userId,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(await w.balance()).toBe(20);
    expect(await w.ledger()).toEqual([['entry', 20]]);
    const rows = (await t.admin.request('GET', `/api/v1/time-tracking/ledger/${t.employee.userId}`)).json();
    expect(rows[0]).toEqual({
      id: expect.stringMatching(hex32),
      tenant_id: t.employee.tenantId,
      user_id: t.employee.userId,
      kind: 'entry',
      delta_minutes: 20,
      time_entry_id: entry.id,
      payout_id: null,
      created_at: expect.any(String),
    });
  });

  it('returns the same entry (200) for a re-post of the same times, in any offset, crediting nothing', async () => {
    const w = await world();
    const first = (await w.record({ started_at: at('10:00'), ended_at: at('15:00') })).json();
    for (const body of [
      { started_at: at('10:00'), ended_at: at('15:00') },
      { started_at: '2030-07-02T12:00:00+02:00', ended_at: '2030-07-02T11:00:00-04:00', break_minutes: 0 },
    ]) {
      const again = await w.record(body);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first);
    }
    expect(await w.balance()).toBe(60);
    expect(await w.ledger()).toEqual([['entry', 60]]);
  });

  it('rewrites the entry (200) for other times and moves the balance by the difference only', async () => {
    const w = await world();
    const first = (await w.record({ started_at: at('10:00'), ended_at: at('15:00') })).json();
    const edited = await w.record({ started_at: at('10:00'), ended_at: at('13:00'), break_minutes: 15 });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({
      id: first.id,
      ended_at: '2030-07-02T13:00:00.000Z',
      break_minutes: 15,
      worked_minutes: 165,
      overtime_minutes: -75,
      created_at: first.created_at,
    });
    // Only the break changes: the times stay, the minutes move.
    const breakOnly = await w.record({ started_at: at('10:00'), ended_at: at('13:00'), break_minutes: 0 });
    expect(breakOnly.json().overtime_minutes).toBe(-60);
    expect(await w.balance()).toBe(-60);
    expect(await w.ledger()).toEqual([
      ['entry', 60],
      ['correction', -135],
      ['correction', 15],
    ]);
  });

  it('keeps negative overtime, counts whole minutes and allows a break as long as the span', async () => {
    const w = await world();
    const entry = await w.record({
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T11:00:59.999Z',
      break_minutes: 60,
    });
    expect(entry.statusCode).toBe(201);
    expect(entry.json()).toMatchObject({ worked_minutes: 0, overtime_minutes: -240 });
    expect(await w.balance()).toBe(-240);
  });

  it('counts the real minutes of an entry across midnight', async () => {
    await setTimeTracking(t.admin, true);
    const assignment = await assignedShift(t.admin, t.employee, {
      starts_at: '2030-07-02T22:00:00Z',
      ends_at: '2030-07-03T04:00:00Z',
    });
    const entry = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: assignment,
      started_at: '2030-07-02T21:30:00Z',
      ended_at: '2030-07-03T04:15:00Z',
    });
    expect(entry.json()).toMatchObject({ worked_minutes: 405, scheduled_minutes: 360, overtime_minutes: 45 });
  });

  it.each([
    // Europe/Berlin springs forward at 02:00 on 31 March 2030: 22:00 to 06:00 is 7 hours.
    ['spring', '2030-03-30', 7 * 60, '2030-03-30T22:00:00+01:00', '2030-03-31T06:30:00+02:00', 450],
    // ... and falls back at 03:00 on 27 October 2030: 22:00 to 06:00 is 9 hours.
    ['autumn', '2030-10-26', 9 * 60, '2030-10-26T22:00:00+02:00', '2030-10-27T06:30:00+01:00', 570],
  ])(
    'counts the %s daylight-saving night of the tenant zone as it passed',
    async (_season, day, scheduled, startedAt, endedAt, worked) => {
      await setTimeTracking(t.admin, true, 'Europe/Berlin');
      const role = (await created(t.admin, '/api/v1/roles', { name: uniqueName('Guard') })).id;
      await t.admin.request('POST', `/api/v1/users/${t.employee.userId}/qualifications/${role}`);
      const event = (
        await created(t.admin, '/api/v1/events', {
          name: 'Night watch',
          starts_at: `${day}T18:00:00Z`,
          ends_at: `${day}T23:59:00Z`,
        })
      ).id;
      // Bulk generation lays the night shift out in the tenant zone (22:00 to 06:00 local).
      const shifts = (
        await t.admin.request('POST', `/api/v1/events/${event}/shifts/bulk`, {
          start_time: '22:00',
          end_time: '06:00',
          slots: [{ role_id: role, capacity: 1 }],
        })
      ).json() as { id: string; starts_at: string; ends_at: string }[];
      const night = shifts.find((shift) => Date.parse(shift.starts_at) === Date.parse(startedAt));
      if (!night) throw new Error(`no shift at ${startedAt}: ${JSON.stringify(shifts)}`);
      expect((Date.parse(night.ends_at) - Date.parse(night.starts_at)) / 60_000).toBe(scheduled);
      const slot = (await t.admin.request('GET', `/api/v1/shifts/${night.id}/slots`)).json()[0].id;
      const assignment = (
        await created(t.admin, `/api/v1/shifts/${night.id}/slots/${slot}/assign`, {
          user_id: t.employee.userId,
        })
      ).id;
      const entry = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
        shift_assignment_id: assignment,
        started_at: startedAt,
        ended_at: endedAt,
      });
      expect(entry.statusCode, entry.body).toBe(201);
      expect(entry.json()).toMatchObject({
        worked_minutes: worked,
        scheduled_minutes: scheduled,
        overtime_minutes: 30,
      });
    },
  );

  it.each([
    [{ started_at: at('12:00'), ended_at: at('12:00') }, 'ended_at: must be after started_at'],
    [{ started_at: at('12:00'), ended_at: at('11:00') }, 'ended_at: must be after started_at'],
    [
      { started_at: at('10:00'), ended_at: at('12:00'), break_minutes: 121 },
      'break_minutes: must not be longer than the 120 minutes worked',
    ],
    [
      { started_at: '2030-07-01T10:00:00Z', ended_at: '2030-07-08T10:01:00Z' },
      'ended_at: an entry spans at most 10080 minutes (7 days)',
    ],
  ])('refuses %j with 422 naming the field, writing nothing', async (body, message) => {
    const w = await world();
    const response = await w.record(body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    expect(await w.ledger()).toEqual([]);
  });

  it.each([
    [{}, 'started_at'],
    [{ started_at: 'yesterday', ended_at: at('12:00') }, 'started_at'],
    [{ started_at: at('10:00'), ended_at: at('12:00'), break_minutes: -1 }, 'break_minutes'],
    [{ started_at: at('10:00'), ended_at: at('12:00'), break_minutes: 1.5 }, 'break_minutes'],
    [{ started_at: at('10:00'), ended_at: at('12:00'), break_minutes: '5' }, 'break_minutes'],
    [{ started_at: at('10:00'), ended_at: at('12:00'), overtime_minutes: 600 }, 'overtime_minutes'],
    [
      { shift_assignment_id: 'not-an-id', started_at: at('10:00'), ended_at: at('12:00') },
      'shift_assignment_id',
    ],
  ])('refuses the body %j with 422 naming %s', async (body, field) => {
    const w = await world();
    const response = await w.record(body);
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    expect(response.json().error.message).toContain(field);
    expect(await w.ledger()).toEqual([]);
  });

  it('refuses instants the database or the arithmetic cannot hold with 422, writing nothing', async () => {
    const w = await world();
    // Each passes a lenient RFC 3339 check: a leap second (Date cannot represent it), year 0
    // (PostgreSQL has none) and a local time that is year 10000 in UTC.
    for (const started_at of [
      '2030-06-30T23:59:60Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:00:00-23:59',
      '2030-07-02 10:00:00Z',
      '2030-02-30T10:00:00Z',
    ]) {
      const response = await w.record({ started_at, ended_at: at('14:00') });
      expect(response.statusCode, started_at).toBe(422);
      expect(response.json(), started_at).toEqual({
        error: { code: 'VALIDATION_FAILED', message: 'started_at: must match format "date-time"' },
      });
    }
    expect(await w.ledger()).toEqual([]);
  });

  it('answers 404 for an unknown assignment and for another tenant’s', async () => {
    const w = await world();
    const unknown = await w.record({
      shift_assignment_id: '0123456789abcdef0123456789abcdef',
      started_at: at('10:00'),
      ended_at: at('12:00'),
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'shift assignment not found' } });
    await setTimeTracking(t.otherAdmin, true);
    const foreign = await t.otherAdmin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: w.assignment,
      started_at: at('10:00'),
      ended_at: at('12:00'),
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'shift assignment not found' } });
    expect(await w.ledger()).toEqual([]);
  });

  it('is for admins: an employee gets the fixed 403 and nothing is written', async () => {
    const w = await world();
    const response = await t.employee.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: w.assignment,
      started_at: at('10:00'),
      ended_at: at('20:00'),
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    expect(await w.ledger()).toEqual([]);
  });

  it('keeps the recorded minutes: the assignment and its shift cannot be removed (409)', async () => {
    const w = await world();
    await w.record({ started_at: at('10:00'), ended_at: at('14:00') });
    const shiftId = (await t.admin.request('GET', '/api/v1/shifts')).json()[0].id as string;
    const unassign = await t.admin.request('DELETE', `/api/v1/shifts/${shiftId}/assignments/${w.assignment}`);
    expect(unassign.statusCode).toBe(409);
    expect(unassign.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'time was recorded for this assignment' },
    });
    const removeShift = await t.admin.request('DELETE', `/api/v1/shifts/${shiftId}`);
    expect(removeShift.statusCode).toBe(409);
    expect(removeShift.json().error.code).toBe('INVALID_STATE');
    expect(await w.ledger()).toEqual([['entry', 0]]);
  });
});

describe('POST /time-tracking/payouts', () => {
  async function credited(minutes: number) {
    const w = await world();
    await w.record({ started_at: at('10:00'), ended_at: at('14:00'), break_minutes: 0 });
    if (minutes !== 0) {
      const end = new Date(Date.parse(at('14:00')) + minutes * 60_000).toISOString();
      await w.record({ started_at: at('10:00'), ended_at: end });
    }
    return w;
  }
  const pay = (body: Record<string, unknown>) =>
    t.admin.request('POST', '/api/v1/time-tracking/payouts', body);

  it('pays out (201), keeping who paid, when and the note, and takes the minutes off the balance', async () => {
    const w = await credited(90);
    const response = await pay({ user_id: t.employee.userId, minutes: 60, note: '  July salary  ' });
    expect(response.statusCode).toBe(201);
    const payout = response.json();
    expect(payout).toEqual({
      id: expect.stringMatching(hex32),
      tenant_id: t.employee.tenantId,
      user_id: t.employee.userId,
      minutes: 60,
      note: 'July salary',
      paid_by: t.admin.userId,
      created_at: expect.any(String),
    });
    expect(await w.balance()).toBe(30);
    const rows = (await t.admin.request('GET', `/api/v1/time-tracking/ledger/${t.employee.userId}`)).json();
    expect(rows.at(-1)).toMatchObject({
      kind: 'payout',
      delta_minutes: -60,
      payout_id: payout.id,
      time_entry_id: null,
    });
    // The whole rest, exactly.
    expect((await pay({ user_id: t.employee.userId, minutes: 30, note: '   ' })).json().note).toBeNull();
    expect(await w.balance()).toBe(0);
  });

  it('refuses more than the balance with 409 INSUFFICIENT_BALANCE, writing nothing', async () => {
    const w = await credited(90);
    const response = await pay({ user_id: t.employee.userId, minutes: 91 });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'INSUFFICIENT_BALANCE', message: 'the balance is 90 minutes; cannot pay out 91' },
    });
    expect(await w.balance()).toBe(90);
    expect(
      (await t.admin.request('GET', `/api/v1/time-tracking/payouts/${t.employee.userId}`)).json(),
    ).toEqual([]);
  });

  it('refuses any payout from a zero or negative balance', async () => {
    await setTimeTracking(t.admin, true);
    const none = await pay({ user_id: t.employee.userId, minutes: 1 });
    expect(none.json()).toEqual({
      error: { code: 'INSUFFICIENT_BALANCE', message: 'the balance is 0 minutes; cannot pay out 1' },
    });
    const w = await credited(-30);
    expect(await w.balance()).toBe(-30);
    expect((await pay({ user_id: t.employee.userId, minutes: 1 })).statusCode).toBe(409);
  });

  it.each([
    [{ minutes: 0 }, 'minutes'],
    [{ minutes: -5 }, 'minutes'],
    [{ minutes: 2.5 }, 'minutes'],
    [{ minutes: 2 ** 31 }, 'minutes'],
    [{}, 'minutes'],
    [{ minutes: 5, note: 'x'.repeat(2001) }, 'note'],
    [{ minutes: 5, extra: true }, 'extra'],
  ])('refuses %j with 422 naming %s', async (body, field) => {
    await credited(90);
    const response = await pay({ user_id: t.employee.userId, ...body });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.message).toContain(field);
  });

  it('answers 404 for an unknown user and for another tenant’s user; 403 for an employee', async () => {
    const w = await credited(90);
    const unknown = await pay({ user_id: '0123456789abcdef0123456789abcdef', minutes: 5 });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'user not found' } });
    // A subject only this tenant has (user ids derive from issuer and subject).
    const onlyHere = await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('worker'));
    await setTimeTracking(t.otherAdmin, true);
    const foreign = await t.otherAdmin.request('POST', '/api/v1/time-tracking/payouts', {
      user_id: onlyHere.userId,
      minutes: 5,
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'user not found' } });
    const employee = await t.employee.request('POST', '/api/v1/time-tracking/payouts', {
      user_id: t.employee.userId,
      minutes: 5,
    });
    expect(employee.statusCode).toBe(403);
    expect(employee.json()).toEqual(FORBIDDEN_BODY);
    expect(await w.balance()).toBe(90);
  });
});

describe('balance, payout and ledger reads', () => {
  it('shows a user with no activity a balance of 0, never changed', async () => {
    await setTimeTracking(t.admin, true);
    const own = await t.employee.request('GET', '/api/v1/time-tracking/balance');
    expect(own.statusCode).toBe(200);
    expect(own.json()).toEqual({
      tenant_id: t.employee.tenantId,
      user_id: t.employee.userId,
      balance_minutes: 0,
      updated_at: null,
    });
    expect((await t.employee.request('GET', '/api/v1/time-tracking/payouts/me')).json()).toEqual([]);
    expect(
      (await t.admin.request('GET', `/api/v1/time-tracking/ledger/${t.employee.userId}`)).json(),
    ).toEqual([]);
  });

  it('lets everyone read their own balance and payouts, newest first, and admins anyone’s', async () => {
    const w = await world();
    await w.record({ started_at: at('10:00'), ended_at: at('17:00') });
    for (const minutes of [10, 20, 30]) {
      await created(t.admin, '/api/v1/time-tracking/payouts', { user_id: t.employee.userId, minutes });
    }
    const own = (await t.employee.request('GET', '/api/v1/time-tracking/balance')).json();
    expect(own).toMatchObject({ user_id: t.employee.userId, balance_minutes: 120 });
    expect(own.updated_at).toEqual(expect.any(String));
    const payouts = (await t.employee.request('GET', '/api/v1/time-tracking/payouts/me')).json();
    expect(payouts.map((p: { minutes: number }) => p.minutes)).toEqual([30, 20, 10]);
    expect(
      (await t.admin.request('GET', `/api/v1/time-tracking/payouts/${t.employee.userId}`)).json(),
    ).toEqual(payouts);
    expect((await t.admin.request('GET', '/api/v1/time-tracking/payouts/me')).json()).toEqual([]);
    const all = (await t.admin.request('GET', '/api/v1/time-tracking/balances')).json();
    expect(all).toHaveLength(2);
    expect(all).toEqual(
      expect.arrayContaining([
        {
          tenant_id: t.admin.tenantId,
          user_id: t.admin.userId,
          balance_minutes: 0,
          updated_at: null,
          name: null,
        },
        { ...own, name: null },
      ]),
    );
    expect(await w.ledger()).toEqual([
      ['entry', 180],
      ['payout', -10],
      ['payout', -20],
      ['payout', -30],
    ]);
  });

  it('names everyone on the balances list, by name, as the users list has them', async () => {
    await setTimeTracking(t.admin, true);
    const tenant = tenantOf(t.admin);
    const zoe = await t.ctx.caller('employee', tenant, uniqueName('zoe'), { name: 'Zoë Müller' });
    const ada = await t.ctx.caller('employee', tenant, uniqueName('ada'), { name: 'Ada Lovelace' });
    hooks.statements.length = 0;
    const all = (await t.admin.request('GET', '/api/v1/time-tracking/balances')).json() as {
      user_id: string;
      name: string | null;
    }[];
    // Names and balances come from one statement: a rename cannot fall between them.
    const reads = hooks.statements.filter((s) => s.tables.includes('overtime_balances'));
    expect(reads).toEqual([
      expect.objectContaining({
        kind: 'select',
        tables: expect.arrayContaining(['users', 'overtime_balances']),
      }),
    ]);
    // By display name; those without one (the test's admin and employee) after, by id.
    expect(all.slice(0, 2)).toEqual([
      {
        tenant_id: t.admin.tenantId,
        user_id: ada.userId,
        name: 'Ada Lovelace',
        balance_minutes: 0,
        updated_at: null,
      },
      {
        tenant_id: t.admin.tenantId,
        user_id: zoe.userId,
        name: 'Zoë Müller',
        balance_minutes: 0,
        updated_at: null,
      },
    ]);
    expect(all.slice(2).map((b) => [b.user_id, b.name])).toEqual(
      [t.admin.userId, t.employee.userId].sort().map((id) => [id, null]),
    );
  });

  it('answers 404 for an unknown user and another tenant’s, 403 to an employee on admin reads', async () => {
    await setTimeTracking(t.admin, true);
    await setTimeTracking(t.otherAdmin, true);
    const onlyHere = await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('worker'));
    for (const path of ['balance', 'payouts', 'ledger']) {
      const unknown = await t.admin.request(
        'GET',
        `/api/v1/time-tracking/${path}/0123456789abcdef0123456789abcdef`,
      );
      expect(unknown.statusCode, path).toBe(404);
      expect(unknown.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'user not found' } });
      expect((await t.admin.request('GET', `/api/v1/time-tracking/${path}/not-an-id`)).statusCode).toBe(404);
      const foreign = await t.otherAdmin.request('GET', `/api/v1/time-tracking/${path}/${onlyHere.userId}`);
      expect(foreign.statusCode, path).toBe(404);
      const employee = await t.employee.request('GET', `/api/v1/time-tracking/${path}/${t.employee.userId}`);
      expect(employee.statusCode, path).toBe(403);
      expect(employee.json()).toEqual(FORBIDDEN_BODY);
    }
    const list = await t.employee.request('GET', '/api/v1/time-tracking/balances');
    expect(list.statusCode).toBe(403);
  });

  it('keeps each tenant’s books apart, also for a subject known in both', async () => {
    const w = await world();
    await w.record({ started_at: at('10:00'), ended_at: at('15:00') });
    await setTimeTracking(t.otherAdmin, true);
    // Same issuer and subject in the other tenant: the same user id, other books.
    const theirs = (await t.otherAdmin.request('GET', '/api/v1/time-tracking/balances')).json();
    expect(theirs).toEqual(
      expect.arrayContaining([
        {
          tenant_id: t.otherAdmin.tenantId,
          user_id: t.employee.userId,
          balance_minutes: 0,
          updated_at: null,
          name: null,
        },
      ]),
    );
    expect(theirs.every((b: { tenant_id: string }) => b.tenant_id === t.otherAdmin.tenantId)).toBe(true);
    expect(await w.balance()).toBe(60);
  });
});
