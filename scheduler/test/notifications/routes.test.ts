import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseAllowedHosts } from '../../src/outbound/destinations.ts';
import {
  type Caller,
  createTestContext,
  FORBIDDEN_BODY,
  type TestContext,
  uniqueName,
} from '../support/context.ts';
import { notificationSteps, notificationsOf } from '../support/notifications.ts';
import { type PushService, startPushService } from '../support/push-service.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';

/**
 * Notifications through their routes: which operations make them, the caller's list,
 * read marks, and who may read them. Their delivery by Web Push:
 * test/notifications/fan-out.test.ts.
 */
let ctx: TestContext;
let push: PushService;
let admin: Caller;
let employee: Caller;

beforeAll(async () => {
  push = await startPushService();
  ctx = await createTestContext({
    push: { agent: push.agent, backoffMs: 5, attempts: 3 },
    outboundAllowedHosts: parseAllowedHosts(new URL(push.origin).host),
  });
});
afterAll(async () => {
  await ctx?.close();
  await push?.close();
});
beforeEach(async () => {
  ({ admin, employee } = await ctx.freshTenant());
});

const settle = () => ctx.app.jobsIdle();
const { notifyOn, shiftFor, subscribe } = notificationSteps(() => ({ admin, push }));

describe('notifications', () => {
  it('are created by no endpoint while notify_on_assignment is off (the default)', async () => {
    const settings = (await admin.request('GET', '/api/v1/tenant/settings')).json();
    expect(settings.notify_on_assignment).toBe(false);
    await subscribe(employee);
    const { assign } = await shiftFor(employee);
    await assign();
    await settle();
    expect(await notificationsOf(employee)).toEqual([]);
  });

  it('lists the caller’s own, newest first; marks one read (204) and all read, counting only unread', async () => {
    await notifyOn();
    for (const start of ['2030-07-02T10:00:00Z', '2030-07-03T10:00:00Z', '2030-07-04T10:00:00Z']) {
      const { assign } = await shiftFor(employee, start, start.replace('T10', 'T12'));
      await assign();
    }
    const list = await notificationsOf(employee);
    expect(list).toHaveLength(3);
    expect(list[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: employee.tenantId,
      user_id: employee.userId,
      type: 'assignment.created',
      title: 'You are on Bar',
      // In the tenant's time zone (UTC here) and language (en-GB by default).
      body: 'Thu 4 Jul, 10:00–12:00',
      data: { shift_id: expect.any(String), slot_id: expect.any(String), assignment_id: expect.any(String) },
      read_at: null,
      created_at: expect.any(String),
    });
    const times = list.map((n) => (n as unknown as { created_at: string }).created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(await notificationsOf(admin)).toEqual([]);

    const first = list[2]?.id ?? '';
    expect((await employee.request('POST', `/api/v1/notifications/${first}/read`)).statusCode).toBe(204);
    expect((await employee.request('POST', `/api/v1/notifications/${first}/read`)).statusCode).toBe(204);
    // Someone else's notification is missing to them, and stays unread.
    const foreign = await admin.request('POST', `/api/v1/notifications/${list[0]?.id}/read`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'notification not found' } });
    expect((await employee.request('POST', '/api/v1/notifications/nope/read')).statusCode).toBe(404);

    const all = await employee.request('POST', '/api/v1/notifications/read-all');
    expect(all.statusCode).toBe(200);
    expect(all.json()).toEqual({ marked: 2 });
    expect((await employee.request('POST', '/api/v1/notifications/read-all')).json()).toEqual({ marked: 0 });
    expect((await notificationsOf(employee)).every((n) => n.read_at !== null)).toBe(true);
  });

  it('tells assignees of an unassignment and of a shift renamed, never the admin who did it', async () => {
    await notifyOn();
    const { shift, assign } = await shiftFor(employee);
    const assignment = await assign();
    // The admin assigning themselves is not told.
    await qualify(
      admin,
      admin,
      (await admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()[0].role_id,
    );
    await created(admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
      user_id: admin.userId,
    });
    await admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Bar, late' });
    await admin.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${assignment.id}`);
    expect((await notificationsOf(employee)).map((n) => n.type)).toEqual([
      'assignment.removed',
      'shift.changed',
      'assignment.created',
    ]);
    expect(await notificationsOf(admin)).toEqual([]);
  });

  it('tell nobody of a shift they may not see: assigned to, renamed or taken off a draft', async () => {
    await notifyOn();
    const role = await newRole(admin, uniqueName('Cook'));
    await qualify(admin, employee, role);
    const draftEvent = await newEvent(admin, { publish: false });
    const ofDraftEvent = await newShift(admin, draftEvent, { roleId: role });
    const draftShift = await newShift(admin, await newEvent(admin), {
      roleId: role,
      starts_at: '2030-07-03T10:00:00Z',
      ends_at: '2030-07-03T12:00:00Z',
      publish: false,
    });
    for (const hidden of [ofDraftEvent, draftShift]) {
      const seat = await created(admin, `/api/v1/shifts/${hidden.id}/slots/${hidden.slots[0]}/assign`, {
        user_id: employee.userId,
      });
      await admin.request('PATCH', `/api/v1/shifts/${hidden.id}`, { name: 'Secret bar' });
      await admin.request('DELETE', `/api/v1/shifts/${hidden.id}/assignments/${seat.id}`);
    }
    await settle();
    expect(await notificationsOf(employee)).toEqual([]);
  });

  it('tell assignees of a change only when something changed', async () => {
    await notifyOn();
    const { shift, assign } = await shiftFor(employee);
    await assign();
    await admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Bar' });
    await admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { location_id: null });
    expect((await notificationsOf(employee)).map((n) => n.type)).toEqual(['assignment.created']);
  });

  it('are for admins and employees; customers get the fixed 403', async () => {
    const customer = await ctx.caller('customer', tenantOf(admin), 'cust-1', { customer: 'c-1' });
    for (const [method, url] of [
      ['GET', '/api/v1/notifications'],
      ['POST', '/api/v1/notifications/read-all'],
      ['GET', '/api/v1/push-subscriptions/vapid-public-key'],
    ] as const) {
      expect((await customer.request(method, url)).json()).toEqual(FORBIDDEN_BODY);
    }
  });
});
