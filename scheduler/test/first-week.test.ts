import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { uniqueName, useTestContext } from './support/context.ts';
import { action, created } from './support/scheduling.ts';
import { setTimeTracking } from './support/time-tracking.ts';

/**
 * One realistic first week of a new tenant, through the API only, in the order an admin
 * and an employee meet it: the admin provisions Bob before he ever signs in, qualifies
 * him, plans the week with one bulk call and publishes it with another; Bob signs in,
 * finds the week, claims a shift; the admin records his time; Bob reads his timesheet and
 * ledger; payroll exports the week as CSV. Every step checks what the previous one left.
 */
const t = useTestContext();

describe('a first week of planning', () => {
  it('runs from pre-provisioning to the payroll export', async () => {
    const tenant = uniqueName('tenant');
    const admin = await t.ctx.caller('admin', tenant, 'admin-1');
    await setTimeTracking(admin, true, 'Europe/Berlin');

    // Monday: Bob is provisioned and qualified before his first sign-in.
    const bobRecord = await created(admin, '/api/v1/users', {
      subject: 'bob',
      name: 'Bob Builder',
      email: 'bob@example.com',
      role: 'employee',
    });
    expect(bobRecord).toMatchObject({
      display_name: 'Bob Builder',
      email: 'bob@example.com',
      role: 'employee',
      active: true,
    });
    const cook = (await created(admin, '/api/v1/roles', { name: 'Cook' })).id;
    const granted = await admin.request('POST', `/api/v1/users/${bobRecord.id}/qualifications/${cook}`);
    expect(granted.statusCode, granted.body).toBe(204);

    // The week: one event (Berlin days, 2030-03-04 to 2030-03-10), one draft shift a day.
    const event = await created(admin, '/api/v1/events', {
      name: 'Spring fair',
      starts_at: '2030-03-03T23:00:00Z',
      ends_at: '2030-03-10T23:00:00Z',
    });
    await action(admin, `/api/v1/events/${event.id}/publish`);
    const generated = await admin.request('POST', `/api/v1/events/${event.id}/shifts/bulk`, {
      start_time: '09:00',
      end_time: '17:00',
      name: 'Kitchen',
      slots: [{ role_id: cook, capacity: 2 }],
    });
    expect(generated.statusCode, generated.body).toBe(201);
    const shifts = generated.json() as { id: string; starts_at: string; status: string }[];
    expect(shifts).toHaveLength(7);
    expect(shifts.every((shift) => shift.status === 'draft')).toBe(true);

    // One call publishes the week.
    const published = await admin.request('POST', '/api/v1/shifts/publish', { event_id: event.id });
    expect(published.statusCode, published.body).toBe(200);
    expect(published.json()).toEqual({ published: 7, events_published: 0 });

    // Bob signs in for the first time: he lands on the record the admin made.
    const bob = await t.ctx.caller('employee', tenant, 'bob');
    expect(bob.userId).toBe(bobRecord.id);
    const me = await bob.request('GET', '/api/v1/me');
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({
      id: bobRecord.id,
      display_name: 'Bob Builder',
      email: 'bob@example.com',
      role: 'employee',
      qualifications: [expect.objectContaining({ id: cook, name: 'Cook' })],
    });

    // He finds Monday among the week's shifts and claims its slot.
    const week = await bob.request(
      'GET',
      `/api/v1/shifts?from=${encodeURIComponent('2030-03-04T00:00:00+01:00')}&to=${encodeURIComponent('2030-03-05T00:00:00+01:00')}`,
    );
    expect(week.statusCode, week.body).toBe(200);
    const monday = (week.json() as { id: string; starts_at: string }[]).filter((s) =>
      shifts.some((g) => g.id === s.id),
    );
    expect(monday.map((s) => s.starts_at)).toEqual(['2030-03-04T08:00:00.000Z']);
    const slots = (await bob.request('GET', `/api/v1/shifts/${monday[0]?.id}/slots`)).json() as {
      id: string;
    }[];
    const claim = await bob.request('POST', `/api/v1/shifts/${monday[0]?.id}/slots/${slots[0]?.id}/claim`);
    expect(claim.statusCode, claim.body).toBe(201);
    const assignment = claim.json() as { id: string };

    const mine = await bob.request('GET', '/api/v1/me/assignments');
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json()).toEqual([
      expect.objectContaining({
        id: assignment.id,
        event: {
          id: event.id,
          name: 'Spring fair',
          starts_at: '2030-03-03T23:00:00.000Z',
          ends_at: '2030-03-10T23:00:00.000Z',
        },
      }),
    ]);

    // Monday evening: he worked 08:55 to 17:55 Berlin with a 30-minute break: 30 minutes over.
    const entry = await created(admin, '/api/v1/time-tracking/entries', {
      shift_assignment_id: assignment.id,
      started_at: '2030-03-04T07:55:00Z',
      ended_at: '2030-03-04T16:55:00Z',
      break_minutes: 30,
    });
    expect(entry).toMatchObject({ worked_minutes: 510, scheduled_minutes: 480, overtime_minutes: 30 });

    // Bob reads his timesheet and his ledger back.
    const entries = await bob.request('GET', '/api/v1/time-tracking/entries');
    expect(entries.statusCode, entries.body).toBe(200);
    expect(entries.json()).toEqual([expect.objectContaining({ id: entry.id, overtime_minutes: 30 })]);
    const ledger = await bob.request('GET', '/api/v1/time-tracking/ledger');
    expect(ledger.statusCode, ledger.body).toBe(200);
    expect(
      (ledger.json() as { kind: string; delta_minutes: number }[]).map((r) => [r.kind, r.delta_minutes]),
    ).toEqual([['entry', 30]]);

    // Friday: payroll exports the week and the balances; a CSV parser reads them back.
    const range = `from=${encodeURIComponent('2030-03-04T00:00:00+01:00')}&to=${encodeURIComponent('2030-03-11T00:00:00+01:00')}`;
    const exported = await admin.request('GET', `/api/v1/time-tracking/export.csv?${range}`);
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^text\/csv; charset=utf-8/);
    const rows = parse(exported.body, { columns: true, bom: true }) as Record<string, string>[];
    expect(rows).toEqual([
      {
        user_id: bobRecord.id,
        user_name: 'Bob Builder',
        user_email: 'bob@example.com',
        event: 'Spring fair',
        shift: 'Kitchen',
        'started_at (Europe/Berlin)': '2030-03-04 08:55 +01:00',
        'ended_at (Europe/Berlin)': '2030-03-04 17:55 +01:00',
        break_minutes: '30',
        worked_minutes: '510',
        scheduled_minutes: '480',
        overtime_minutes: '30',
        entry_id: entry.id,
      },
    ]);
    const balances = await admin.request('GET', '/api/v1/time-tracking/balances.csv');
    expect(balances.statusCode, balances.body).toBe(200);
    const balanceRows = parse(balances.body, { columns: true, bom: true }) as Record<string, string>[];
    // One row per admin and employee: the admin, who worked nothing, and Bob.
    expect(balanceRows).toHaveLength(2);
    expect(balanceRows.find((row) => row.user_id === bobRecord.id)).toMatchObject({
      user_name: 'Bob Builder',
      user_email: 'bob@example.com',
      role: 'employee',
      credited_minutes: '30',
      paid_out_minutes: '0',
      balance_minutes: '30',
    });
  });
});
