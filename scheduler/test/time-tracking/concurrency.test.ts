import { afterEach, describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { created } from '../support/scheduling.ts';
import { assignedShift, ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';

/**
 * Concurrent writes to one balance. The races are real on PostgreSQL (TEST_DB=postgres,
 * a pool of 20 connections); PGlite has one connection and runs the same requests one
 * after another, which must give the same books.
 */
/** The API's clock, set where a test clocks in (the database's stays real). */
let apiNow: Date | null = null;
const t = useRouteTests({ clock: { now: () => apiNow ?? new Date() } });
afterEach(async () => {
  apiNow = null;
  expect(await ledgerMismatches(t.ctx.db.owner)).toEqual([]);
});

const entries = '/api/v1/time-tracking/entries';
const ledgerOf = async (userId: string) =>
  (await t.admin.request('GET', `/api/v1/time-tracking/ledger/${userId}`)).json() as {
    kind: string;
    delta_minutes: number;
  }[];
const balanceOf = async (userId: string) =>
  (await t.admin.request('GET', `/api/v1/time-tracking/balance/${userId}`)).json().balance_minutes as number;

describe('concurrent time entries and payouts', () => {
  it('turns 50 identical concurrent posts into one entry and one credit', async () => {
    await setTimeTracking(t.admin, true);
    const assignment = await assignedShift(t.admin, t.employee);
    const body = {
      shift_assignment_id: assignment,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T14:45:00Z',
    };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => t.admin.request('POST', entries, body)),
    );
    const statuses = responses.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([...Array(49).fill(200), 201]);
    expect(new Set(responses.map((r) => r.json().id)).size).toBe(1);
    expect(await ledgerOf(t.employee.userId)).toMatchObject([{ kind: 'entry', delta_minutes: 45 }]);
    expect(await balanceOf(t.employee.userId)).toBe(45);
  });

  it('leaves the balance at the last stored entry after 20 concurrent edits with different bodies', async () => {
    await setTimeTracking(t.admin, true);
    const assignment = await assignedShift(t.admin, t.employee);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.admin.request('POST', entries, {
          shift_assignment_id: assignment,
          started_at: '2030-07-02T10:00:00Z',
          // 4 hours planned; 7·(i+1) minutes more (or fewer, for odd i) worked.
          ended_at: new Date(
            Date.parse('2030-07-02T14:00:00Z') + (i % 2 ? -7 : 7) * (i + 1) * 60_000,
          ).toISOString(),
          break_minutes: 0,
        }),
      ),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([...Array(19).fill(200), 201]);
    const stored = await t.ctx.db.owner
      .selectFrom('time_entries')
      .select('overtime_minutes')
      .where('shift_assignment_id', '=', assignment)
      .executeTakeFirstOrThrow();
    expect(stored.overtime_minutes).not.toBeNull();
    expect(Math.abs(stored.overtime_minutes ?? 1) % 7).toBe(0);
    expect(await balanceOf(t.employee.userId)).toBe(stored.overtime_minutes);
    // One credit; every other row books the difference to the version it replaced.
    const ledger = await ledgerOf(t.employee.userId);
    expect(ledger.filter((row) => row.kind === 'entry')).toHaveLength(1);
    expect(ledger.every((row) => row.kind !== 'payout')).toBe(true);
    expect(ledger.reduce((sum, row) => sum + row.delta_minutes, 0)).toBe(stored.overtime_minutes);
  });

  it('turns 20 concurrent confirmations of one clocked entry into one confirmation and one credit', async () => {
    await setTimeTracking(t.admin, true);
    const assignment = await assignedShift(t.admin, t.employee);
    apiNow = new Date('2030-07-02T10:00:00Z');
    const clockedIn = await t.employee.request('POST', `/api/v1/me/assignments/${assignment}/clock-in`);
    expect(clockedIn.statusCode).toBe(201);
    const id = clockedIn.json().id as string;
    // Each with other corrections: whichever wins, the others must not add or correct anything.
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.admin.request('POST', `/api/v1/time-tracking/entries/${id}/confirm`, {
          ended_at: new Date(Date.parse('2030-07-02T14:00:00Z') + i * 60_000).toISOString(),
        }),
      ),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, ...Array(19).fill(409)]);
    const winner = responses.find((r) => r.statusCode === 200)?.json();
    for (const lost of responses.filter((r) => r.statusCode === 409)) {
      expect(lost.json()).toEqual({
        error: { code: 'INVALID_STATE', message: 'the time entry is confirmed; an admin corrects it now' },
      });
    }
    expect(await ledgerOf(t.employee.userId)).toMatchObject([
      { kind: 'entry', delta_minutes: winner.overtime_minutes },
    ]);
    expect(await balanceOf(t.employee.userId)).toBe(winner.overtime_minutes);
    const stored = (await t.admin.request('GET', `/api/v1/time-tracking/entries/${id}`)).json();
    expect(stored).toEqual(winner);
  });

  it('never lets 20 concurrent payouts that together exceed the balance take it below zero', async () => {
    await setTimeTracking(t.admin, true);
    const assignment = await assignedShift(t.admin, t.employee);
    // 4 hours planned, 9 hours 5 minutes worked: 305 minutes of overtime.
    await created(t.admin, entries, {
      shift_assignment_id: assignment,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T19:05:00Z',
    });
    const asked = Array.from({ length: 20 }, (_, i) => 10 + (i % 5) * 5);
    const responses = await Promise.all(
      asked.map((minutes) =>
        t.admin.request('POST', '/api/v1/time-tracking/payouts', { user_id: t.employee.userId, minutes }),
      ),
    );
    const accepted = responses.filter((r) => r.statusCode === 201).map((r) => r.json().minutes as number);
    const refused = responses.filter((r) => r.statusCode !== 201);
    expect(refused.length).toBeGreaterThan(0);
    for (const response of refused) {
      expect(response.statusCode).toBe(409);
      expect(response.json().error.code).toBe('INSUFFICIENT_BALANCE');
    }
    const paid = accepted.reduce((sum, minutes) => sum + minutes, 0);
    const balance = await balanceOf(t.employee.userId);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(paid).toBe(305 - balance);
    // Whatever is left is less than every refused payout asked for.
    asked.forEach((minutes, i) => {
      if (responses[i]?.statusCode === 409) expect(minutes).toBeGreaterThan(balance);
    });
  });
});
