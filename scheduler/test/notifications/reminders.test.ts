import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ReminderSweep } from '../../src/notifications/reminders.ts';
import { parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { capturedLog } from '../support/captured-log.ts';
import { type Caller, createTestContext, type TestContext } from '../support/context.ts';
import { on, withDbHooks } from '../support/db-hooks.ts';
import { notificationSteps, notificationsOf } from '../support/notifications.ts';
import { type PushService, startPushService } from '../support/push-service.ts';
import { newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';
import { depsOver } from '../support/units.ts';

/**
 * Reminders before a shift (src/notifications/reminders.ts): off unless the tenant sets a
 * lead time; once per assignment, however many sweeps run; written in the tenant's time
 * zone and language; sent to the person's browsers like any notification.
 */
let ctx: TestContext;
let push: PushService;
let admin: Caller;
let employee: Caller;
/** The app's clock, which a test moves. */
let now = new Date('2030-07-01T20:00:00Z');

beforeAll(async () => {
  push = await startPushService();
  ctx = await createTestContext({
    clock: { now: () => now },
    push: { agent: push.agent, backoffMs: 5 },
    outboundAllowedHosts: parseAllowedHosts('127.0.0.1'),
  });
});
afterAll(async () => {
  await ctx?.close();
  await push?.close();
});
beforeEach(async () => {
  now = new Date('2030-07-01T20:00:00Z');
  ({ admin, employee } = await ctx.freshTenant());
});

const { subscribe } = notificationSteps(() => ({ admin, push }));

async function settings(body: Record<string, unknown>) {
  const response = await admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: false,
    ...body,
  });
  expect(response.statusCode, response.body).toBe(200);
}

/** The employee on a published shift of a published event, 18:00–02:00 Berlin on 2 July 2030. */
async function onShift(
  options: { publish?: boolean; starts_at?: string; ends_at?: string; role?: string } = {},
) {
  const role = options.role ?? (await newRole(admin));
  if (!options.role) await qualify(admin, employee, role);
  const event = await newEvent(admin);
  const shift = await newShift(admin, event, {
    roleId: role,
    starts_at: options.starts_at ?? '2030-07-02T16:00:00Z',
    ends_at: options.ends_at ?? '2030-07-03T00:00:00Z',
    publish: options.publish ?? true,
  });
  const seat = await admin.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
    user_id: employee.userId,
  });
  expect(seat.statusCode, seat.body).toBe(201);
  return { shift, role, assignment: seat.json().id as string };
}

const reminders = async (caller: Caller) =>
  (await notificationsOf(caller)).filter((n) => n.type === 'shift.reminder');

describe('shift reminders', () => {
  it('are off by default: nothing is sent, however close the shift', async () => {
    await onShift();
    now = new Date('2030-07-02T15:00:00Z');
    await ctx.app.sweepReminders();
    expect(await reminders(employee)).toEqual([]);
  });

  it('remind the person once, the lead time before the start, in the tenant’s zone and language', async () => {
    await settings({ remind_minutes_before_shift: 720, timezone: 'Europe/Berlin', locale: 'en-GB' });
    const browser = await subscribe(employee);
    const { shift, assignment } = await onShift();
    // 12 h 1 min before: not yet.
    now = new Date('2030-07-02T03:59:00Z');
    expect(await ctx.app.sweepReminders()).toBe(0);
    // Within 12 h: now, and never again.
    now = new Date('2030-07-02T04:00:00Z');
    expect(await ctx.app.sweepReminders()).toBe(1);
    expect(await ctx.app.sweepReminders()).toBe(0);
    now = new Date('2030-07-02T15:00:00Z');
    expect(await ctx.app.sweepReminders()).toBe(0);
    await ctx.app.jobsIdle();
    const [reminder] = await reminders(employee);
    expect(await reminders(employee)).toHaveLength(1);
    expect(reminder).toMatchObject({
      type: 'shift.reminder',
      title: 'Reminder: Bar',
      body: 'Tue 2 Jul, 18:00–02:00',
      data: { shift_id: shift.id, assignment_id: assignment },
    });
    expect(push.received.filter((r) => r.subscription === browser.id).map((r) => r.payload)).toEqual([
      reminder,
    ]);
  });

  it('are written in the tenant’s language', async () => {
    await settings({ remind_minutes_before_shift: 60 * 24, timezone: 'Europe/Berlin', locale: 'de-DE' });
    await onShift();
    now = new Date('2030-07-02T00:00:00Z');
    await ctx.app.sweepReminders();
    expect((await reminders(employee)).map((n) => (n as unknown as { body: string }).body)).toEqual([
      'Di., 2. Juli, 18:00–02:00',
    ]);
  });

  it('are sent once per assignment when several sweeps run at the same moment', async () => {
    await settings({ remind_minutes_before_shift: 720 });
    await onShift();
    now = new Date('2030-07-02T10:00:00Z');
    const silent = pino({ level: 'silent' });
    const sweeps = Array.from(
      { length: 4 },
      () =>
        new ReminderSweep(depsOver(ctx.db.db, { clock: { now: () => now }, log: silent }), {
          intervalMs: 60_000,
          batch: 10,
        }),
    );
    const sent = await Promise.all(sweeps.map((sweep) => sweep.sweep()));
    expect(sent.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await reminders(employee)).toHaveLength(1);
  });

  it('skip drafts and shifts that have started; a draft published within the lead time is reminded then', async () => {
    await settings({ remind_minutes_before_shift: 720 });
    const { shift } = await onShift({ publish: false });
    now = new Date('2030-07-02T10:00:00Z');
    expect(await ctx.app.sweepReminders()).toBe(0);
    expect((await admin.request('POST', `/api/v1/shifts/${shift.id}/publish`)).statusCode).toBe(200);
    expect(await ctx.app.sweepReminders()).toBe(1);
    // Another person assigned after the start is not reminded of a shift under way.
    now = new Date('2030-07-02T17:00:00Z');
    expect(await ctx.app.sweepReminders()).toBe(0);
  });

  it('skip a deactivated user, for good: nothing stored, nothing pushed', async () => {
    await settings({ remind_minutes_before_shift: 720 });
    const browser = await subscribe(employee);
    await onShift();
    // A seat a deactivation keeps (deactivating frees upcoming seats, except those with
    // recorded time), as the database holds it: the user inactive, the seat still theirs.
    await ctx.db.owner
      .updateTable('users')
      .set({ active: false })
      .where('tenant_id', '=', employee.tenantId)
      .where('id', '=', employee.userId)
      .execute();
    now = new Date('2030-07-02T10:00:00Z');
    expect(await ctx.app.sweepReminders()).toBe(0);
    await ctx.app.jobsIdle();
    const stored = await ctx.db.owner
      .selectFrom('notifications')
      .select('type')
      .where('tenant_id', '=', employee.tenantId)
      .where('user_id', '=', employee.userId)
      .execute();
    expect(stored).toEqual([]);
    expect(push.received.filter((r) => r.subscription === browser.id)).toEqual([]);
    // Reactivated before the start: the reminder that fell due meanwhile is not sent late.
    await ctx.db.owner
      .updateTable('users')
      .set({ active: true })
      .where('tenant_id', '=', employee.tenantId)
      .where('id', '=', employee.userId)
      .execute();
    expect(await ctx.app.sweepReminders()).toBe(0);
  });

  it('never remind anyone of another tenant’s settings', async () => {
    await settings({ remind_minutes_before_shift: 720 });
    const other = await ctx.freshTenant();
    const ownAdmin = admin;
    ({ admin, employee } = other);
    await onShift();
    admin = ownAdmin;
    now = new Date('2030-07-02T10:00:00Z');
    expect(await ctx.app.sweepReminders()).toBe(0);
  });
});

describe('the sweep of a process', () => {
  /** A sweep of its own on `db`, logging to `log`, waking `queued` after each reminder it commits. */
  const sweepOn = (db: TestContext['db']['db'], queued: () => void, log = capturedLog().log) =>
    new ReminderSweep(depsOver(db, { clock: { now: () => now }, jobs: { kick: queued }, log }), {
      intervalMs: 1000,
      batch: 10,
    });
  const storedReminders = () =>
    ctx.db.owner
      .selectFrom('shift_reminders')
      .select('assignment_id')
      .where('tenant_id', '=', employee.tenantId)
      .execute();

  describe('started', () => {
    // Only the interval is faked: the sweep's statements run as ever.
    beforeEach(async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      await settings({ remind_minutes_before_shift: 720 });
    });
    afterEach(() => {
      vi.useRealTimers();
    });
    /** One interval of a started sweep; stop() waits for the look it began. */
    const oneInterval = async (sweep: ReminderSweep) => {
      sweep.start();
      vi.advanceTimersByTime(1000);
      await sweep.stop();
    };
    const counter = () => {
      const wakes = { count: 0, wake: () => void wakes.count++ };
      return wakes;
    };

    it('looks once an interval, wakes the queue only for what it queued, and not after stop', async () => {
      const { assignment } = await onShift();
      now = new Date('2030-07-02T10:00:00Z');
      const wakes = counter();
      const sweep = sweepOn(ctx.db.db, wakes.wake);
      sweep.start();
      sweep.start();
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(1000);
      await sweep.stop();
      expect(vi.getTimerCount()).toBe(0);
      expect([wakes.count, await storedReminders()]).toEqual([1, [{ assignment_id: assignment }]]);
      // Started again, a look that finds nothing due wakes nobody.
      await oneInterval(sweep);
      expect(wakes.count).toBe(1);
    });

    it('logs a look that failed, and looks again at the next interval', async () => {
      await onShift();
      now = new Date('2030-07-02T10:00:00Z');
      const hooks = withDbHooks(ctx.db.db);
      hooks.failNext(on('select', 'due_shift_reminders'), new Error('connection reset'));
      const { log, lines } = capturedLog();
      const wakes = counter();
      const sweep = sweepOn(hooks.db, wakes.wake, log);
      await oneInterval(sweep);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 50,
          msg: 'shift reminders not sent',
          err: expect.objectContaining({ message: 'connection reset' }),
        }),
      ]);
      expect(wakes.count).toBe(0);
      await oneInterval(sweep);
      expect(wakes.count).toBe(1);
    });
  });

  it('sends the other reminders of a look when one fails, and logs the one', async () => {
    await settings({ remind_minutes_before_shift: 720 });
    const late = await onShift();
    const early = await onShift({
      role: late.role,
      starts_at: '2030-07-02T12:00:00Z',
      ends_at: '2030-07-02T14:00:00Z',
    });
    now = new Date('2030-07-02T10:00:00Z');
    const hooks = withDbHooks(ctx.db.db);
    hooks.failNext(on('insert', 'shift_reminders'), new Error('assignment removed'));
    const { log, lines } = capturedLog();
    expect(await sweepOn(hooks.db, () => {}, log).sweep()).toBe(1);
    const [sent] = await storedReminders();
    const failed = sent?.assignment_id === late.assignment ? early.assignment : late.assignment;
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'shift reminder not sent',
        assignment: failed,
        err: expect.objectContaining({ message: 'assignment removed' }),
      }),
    ]);
    // The failed one is still due: the next look sends it.
    expect(await sweepOn(ctx.db.db, () => {}).sweep()).toBe(1);
    expect((await storedReminders()).map((r) => r.assignment_id).sort()).toEqual(
      [late.assignment, early.assignment].sort(),
    );
  });
});
