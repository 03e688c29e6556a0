import { afterEach, describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { newColleague, tenantOf } from '../support/scheduling.ts';
import { assignedShift, ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';

/**
 * Clocking from the phone (`/me/assignments/{id}/clock-in`, `/clock-out`): a proposed
 * entry that stays out of the books until an admin confirms it
 * (`/time-tracking/entries/{id}/confirm`), as clocked or corrected. The API's clock is
 * set by each test; the database's stays real (2026), so the shifts of 2030 have not
 * ended for it, and the tenant does not allow early recordings: a clock-in is not one.
 */
let apiNow: Date | null = null;
const t = useRouteTests({ clock: { now: () => apiNow ?? new Date() } });
afterEach(async () => {
  apiNow = null;
  expect(await ledgerMismatches(t.ctx.db.owner)).toEqual([]);
});

const clock = (caller: Caller, step: 'in' | 'out', seat: string, at: string, body?: unknown) => {
  apiNow = new Date(at);
  return caller.request('POST', `/api/v1/me/assignments/${seat}/clock-${step}`, body);
};
const confirm = (caller: Caller, entryId: string, body?: unknown) =>
  caller.request('POST', `/api/v1/time-tracking/entries/${entryId}/confirm`, body);
const balance = async () =>
  (await t.admin.request('GET', `/api/v1/time-tracking/balance/${t.employee.userId}`)).json().balance_minutes;
const ledger = async () =>
  (
    (await t.admin.request('GET', `/api/v1/time-tracking/ledger/${t.employee.userId}`)).json() as {
      kind: string;
      delta_minutes: number;
    }[]
  ).map((row) => [row.kind, row.delta_minutes]);
const entries = async (query = '') =>
  (await t.admin.request('GET', `/api/v1/time-tracking/entries${query}`)).json() as { id: string }[];

/** Time tracking on in Berlin, early recordings not allowed; the employee on 10:00-14:00 UTC, 2 July 2030. */
async function seat(times?: { starts_at: string; ends_at: string }) {
  await setTimeTracking(t.admin, true, 'Europe/Berlin', false);
  return assignedShift(t.admin, t.employee, times);
}

const outside = (from: string, until: string) => ({
  error: { code: 'OUTSIDE_CLOCK_WINDOW', message: `this seat is clocked from ${from} until ${until}` },
});
const confirmedAlready = {
  error: { code: 'INVALID_STATE', message: 'the time entry is confirmed; an admin corrects it now' },
};

describe('clocking in and out', () => {
  it('proposes an entry (201, open), closes it (200), repeats as it stands, and books nothing until confirmed', async () => {
    const assignment = await seat();
    const clockedIn = await clock(t.employee, 'in', assignment, '2030-07-02T09:05:00Z');
    expect(clockedIn.statusCode, clockedIn.body).toBe(201);
    const entry = clockedIn.json();
    expect(entry).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: t.employee.tenantId,
      shift_assignment_id: assignment,
      user_id: t.employee.userId,
      status: 'proposed',
      started_at: '2030-07-02T09:05:00.000Z',
      ended_at: null,
      break_minutes: 0,
      worked_minutes: null,
      scheduled_minutes: 240,
      overtime_minutes: null,
      recorded_by: t.employee.userId,
      confirmed_at: null,
      confirmed_by: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // A second tap, later: the entry as it stands, its start kept.
    const again = await clock(t.employee, 'in', assignment, '2030-07-02T09:30:00Z');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(entry);
    // Open entries are listed (an open one runs on past any `from`), by status too.
    expect(await entries('?status=proposed&from=2030-07-02T13:00:00Z')).toEqual([entry]);
    expect(await entries('?status=confirmed')).toEqual([]);

    const out = await clock(t.employee, 'out', assignment, '2030-07-02T14:20:30Z');
    expect(out.statusCode, out.body).toBe(200);
    const closed = out.json();
    expect(closed).toEqual({
      ...entry,
      ended_at: '2030-07-02T14:20:30.000Z',
      // 09:05 to 14:20:30: 315 whole minutes, 75 more than the 240 planned.
      worked_minutes: 315,
      overtime_minutes: 75,
      updated_at: expect.any(String),
    });
    const outAgain = await clock(t.employee, 'out', assignment, '2030-07-02T14:25:00Z');
    expect(outAgain.statusCode).toBe(200);
    expect(outAgain.json()).toEqual(closed);
    expect(await balance()).toBe(0);
    expect(await ledger()).toEqual([]);
    // The employee reads their own proposed entry.
    expect((await t.employee.request('GET', `/api/v1/time-tracking/entries/${entry.id}`)).json()).toEqual(
      closed,
    );

    const confirmed = await confirm(t.admin, entry.id);
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json()).toEqual({
      ...closed,
      status: 'confirmed',
      confirmed_at: expect.any(String),
      confirmed_by: t.admin.userId,
      updated_at: expect.any(String),
    });
    expect(await balance()).toBe(75);
    expect(await ledger()).toEqual([['entry', 75]]);
    expect(await entries('?status=proposed')).toEqual([]);

    // Confirmed: a second confirmation and any clocking are refused, and the books stay.
    const twice = await confirm(t.admin, entry.id, {});
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toEqual(confirmedAlready);
    for (const step of ['in', 'out'] as const) {
      const late = await clock(t.employee, step, assignment, '2030-07-02T15:00:00Z');
      expect(late.statusCode, step).toBe(409);
      expect(late.json()).toEqual(confirmedAlready);
    }
    expect(await ledger()).toEqual([['entry', 75]]);
  });

  it('is refused (409) without a clock-in, and at the clock-in’s own instant', async () => {
    const assignment = await seat();
    const none = await clock(t.employee, 'out', assignment, '2030-07-02T14:00:00Z');
    expect(none.statusCode).toBe(409);
    expect(none.json()).toEqual({ error: { code: 'INVALID_STATE', message: 'not clocked in to this seat' } });
    expect(await entries()).toEqual([]);
    expect((await clock(t.employee, 'in', assignment, '2030-07-02T10:00:00Z')).statusCode).toBe(201);
    const same = await clock(t.employee, 'out', assignment, '2030-07-02T10:00:00Z');
    expect(same.statusCode).toBe(409);
    expect(same.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'a clock-out comes after the clock-in' },
    });
    expect(await entries()).toEqual([expect.objectContaining({ ended_at: null })]);
  });

  it('takes a seat from 1 hour before its shift until the end of the local day it ends on', async () => {
    // 12:00 to 16:00 in Berlin (CEST): clocked from 09:00 UTC until Berlin's midnight, 22:00 UTC.
    const assignment = await seat();
    const window = outside('2030-07-02T09:00:00.000Z', '2030-07-02T22:00:00.000Z');
    for (const step of ['in', 'out'] as const) {
      const early = await clock(t.employee, step, assignment, '2030-07-02T08:59:59.999Z');
      expect(early.statusCode, step).toBe(409);
      expect(early.json()).toEqual(window);
    }
    expect(await entries()).toEqual([]);
    expect((await clock(t.employee, 'in', assignment, '2030-07-02T09:00:00Z')).statusCode).toBe(201);
    const late = await clock(t.employee, 'out', assignment, '2030-07-02T22:00:00Z');
    expect(late.statusCode).toBe(409);
    expect(late.json()).toEqual(window);
    const last = await clock(t.employee, 'out', assignment, '2030-07-02T21:59:59.999Z');
    expect(last.statusCode).toBe(200);
    expect(last.json()).toMatchObject({ ended_at: '2030-07-02T21:59:59.999Z', worked_minutes: 779 });
  });

  it('lets an overnight seat be clocked out of the next morning, until that day ends', async () => {
    // 22:00 to 06:00 in Berlin: the day it ends on is 3 July, which ends at 22:00 UTC.
    const assignment = await seat({ starts_at: '2030-07-02T20:00:00Z', ends_at: '2030-07-03T04:00:00Z' });
    expect((await clock(t.employee, 'in', assignment, '2030-07-02T19:45:00Z')).statusCode).toBe(201);
    const out = await clock(t.employee, 'out', assignment, '2030-07-03T04:10:00Z');
    expect(out.statusCode).toBe(200);
    expect(out.json()).toMatchObject({ worked_minutes: 505, scheduled_minutes: 480, overtime_minutes: 25 });
    const tooLate = await clock(t.employee, 'in', assignment, '2030-07-03T22:00:00Z');
    expect(tooLate.json()).toEqual(outside('2030-07-02T19:00:00.000Z', '2030-07-03T22:00:00.000Z'));
  });

  it('answers 404 for someone else’s seat or another tenant’s, 403 to a customer, 422 to a body, changing nothing', async () => {
    const assignment = await seat();
    await setTimeTracking(t.otherAdmin, true);
    const colleague = await newColleague(t.ctx, t.admin);
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), 'customer-1', { customer: 'c-1' });
    const missing = { error: { code: 'NOT_FOUND', message: 'shift assignment not found' } };
    for (const step of ['in', 'out'] as const) {
      for (const caller of [colleague, t.admin, t.otherAdmin]) {
        const response = await clock(caller, step, assignment, '2030-07-02T10:00:00Z');
        expect(response.statusCode, step).toBe(404);
        expect(response.json()).toEqual(missing);
      }
      const unknown = await clock(
        t.employee,
        step,
        '0123456789abcdef0123456789abcdef',
        '2030-07-02T10:00:00Z',
      );
      expect(unknown.json()).toEqual(missing);
      expect((await clock(t.employee, step, 'not-an-id', '2030-07-02T10:00:00Z')).statusCode).toBe(404);
      const asCustomer = await clock(customer, step, assignment, '2030-07-02T10:00:00Z');
      expect(asCustomer.statusCode).toBe(403);
      expect(asCustomer.json()).toEqual(FORBIDDEN_BODY);
      const withBody = await clock(t.employee, step, assignment, '2030-07-02T10:00:00Z', {
        started_at: '2030-07-02T08:00:00Z',
      });
      expect(withBody.statusCode).toBe(422);
      expect(withBody.json()).toEqual({
        error: { code: 'VALIDATION_FAILED', message: 'started_at: is not an allowed field' },
      });
    }
    expect(await entries()).toEqual([]);
  });
});

describe('POST /time-tracking/entries/{id}/confirm', () => {
  async function clockedIn() {
    const assignment = await seat();
    const response = await clock(t.employee, 'in', assignment, '2030-07-02T10:00:00Z');
    expect(response.statusCode).toBe(201);
    return { assignment, entry: response.json() as { id: string } };
  }

  it('confirms with corrections, an open entry only with ended_at, and refuses bad ones (422) changing nothing', async () => {
    const { entry } = await clockedIn();
    for (const [body, message] of [
      [undefined, 'ended_at: required: the employee has not clocked out'],
      [{}, 'ended_at: required: the employee has not clocked out'],
      [{ ended_at: '2030-07-02T09:00:00Z' }, 'ended_at: must be after started_at'],
      [
        { ended_at: '2030-07-02T14:00:00Z', break_minutes: 241 },
        'break_minutes: must not be longer than the 240 minutes worked',
      ],
      [{ ended_at: '2030-07-02T14:00:00Z', break_minutes: -1 }, 'break_minutes: must be >= 0'],
      [{ ended_at: 'tomorrow' }, 'ended_at: must match format "date-time"'],
      [{ ended_at: '2030-07-02T14:00:00Z', status: 'confirmed' }, 'status: is not an allowed field'],
    ] as const) {
      const response = await confirm(t.admin, entry.id, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.json().error.code).toBe('VALIDATION_FAILED');
      expect(response.json().error.message, JSON.stringify(body)).toMatch(
        new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      );
    }
    expect(await entries('?status=proposed')).toEqual([
      expect.objectContaining({ id: entry.id, ended_at: null }),
    ]);
    expect(await ledger()).toEqual([]);

    const response = await confirm(t.admin, entry.id, {
      started_at: '2030-07-02T09:50:00Z',
      ended_at: '2030-07-02T14:00:00Z',
      break_minutes: 30,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'confirmed',
      started_at: '2030-07-02T09:50:00.000Z',
      ended_at: '2030-07-02T14:00:00.000Z',
      break_minutes: 30,
      worked_minutes: 220,
      overtime_minutes: -20,
      recorded_by: t.employee.userId,
      confirmed_by: t.admin.userId,
    });
    expect(await balance()).toBe(-20);
    expect(await ledger()).toEqual([['entry', -20]]);
  });

  it('is for admins: 403 to the employee; 404 for another tenant’s entry or none', async () => {
    const { entry } = await clockedIn();
    await setTimeTracking(t.otherAdmin, true);
    const own = await confirm(t.employee, entry.id, { ended_at: '2030-07-02T14:00:00Z' });
    expect(own.statusCode).toBe(403);
    expect(own.json()).toEqual(FORBIDDEN_BODY);
    const missing = { error: { code: 'NOT_FOUND', message: 'time entry not found' } };
    for (const [caller, id] of [
      [t.otherAdmin, entry.id],
      [t.admin, '0123456789abcdef0123456789abcdef'],
    ] as const) {
      const response = await confirm(caller, id, { ended_at: '2030-07-02T14:00:00Z' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(missing);
    }
    expect((await confirm(t.admin, 'not-an-id')).statusCode).toBe(404);
    expect(await entries('?status=proposed')).toHaveLength(1);
    expect(await ledger()).toEqual([]);
  });

  it('lets an admin’s recording over a clocked entry confirm it with the admin’s times, crediting once', async () => {
    const { assignment, entry } = await clockedIn();
    expect((await clock(t.employee, 'out', assignment, '2030-07-02T15:00:00Z')).statusCode).toBe(200);
    const recorded = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: assignment,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T14:30:00Z',
    });
    expect(recorded.statusCode, recorded.body).toBe(200);
    expect(recorded.json()).toMatchObject({
      id: entry.id,
      status: 'confirmed',
      ended_at: '2030-07-02T14:30:00.000Z',
      overtime_minutes: 30,
      recorded_by: t.admin.userId,
      confirmed_by: t.admin.userId,
    });
    // The same post again: unchanged, nothing booked twice.
    const again = await t.admin.request('POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: assignment,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T14:30:00Z',
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(recorded.json());
    expect(await ledger()).toEqual([['entry', 30]]);
    expect((await confirm(t.admin, entry.id)).json()).toEqual(confirmedAlready);
  });
});
