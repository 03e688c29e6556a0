import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type Caller,
  createTestContext,
  FORBIDDEN_BODY,
  type TestContext,
  uniqueName,
} from './support/context.ts';
import { on, withDbHooks } from './support/db-hooks.ts';
import { type PushService, startPushService } from './support/push-service.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from './support/scheduling.ts';

/**
 * Notifications and Web Push, delivered to a local push service that checks the VAPID
 * signature and decrypts every message, as a browser's push service does.
 */
let ctx: TestContext;
let push: PushService;
let admin: Caller;
let employee: Caller;

beforeAll(async () => {
  push = await startPushService();
  ctx = await createTestContext({ push: { agent: push.agent, backoffMs: 5, attempts: 3 } });
});
afterAll(async () => {
  await ctx?.close();
  await push?.close();
});
beforeEach(async () => {
  ({ admin, employee } = await ctx.freshTenant());
});

const settle = () => ctx.app.notificationsIdle();

async function notifyOn(enabled = true) {
  const response = await admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: false,
    notify_on_assignment: enabled,
  });
  expect(response.statusCode, response.body).toBe(200);
}

/** A published shift the employee may hold, and a function assigning them to it. */
async function shiftFor(worker: Caller, start = '2030-07-02T10:00:00Z', end = '2030-07-02T14:00:00Z') {
  const role = await newRole(admin, uniqueName('Cook'));
  await qualify(admin, worker, role);
  const event = await newEvent(admin);
  const shift = await newShift(admin, event, {
    roleId: role,
    capacities: [2],
    starts_at: start,
    ends_at: end,
  });
  const assign = () =>
    created(admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, { user_id: worker.userId });
  return { shift, assign };
}

async function subscribe(caller: Caller) {
  const subscription = push.subscribe();
  const response = await caller.request('POST', '/api/v1/push-subscriptions', subscription.body);
  expect(response.statusCode, response.body).toBe(201);
  return { ...subscription, apiId: response.json().id as string };
}

const notificationsOf = async (caller: Caller) =>
  (await caller.request('GET', '/api/v1/notifications')).json() as {
    id: string;
    type: string;
    read_at: string | null;
  }[];

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
      body: '2030-07-04T10:00:00.000Z to 2030-07-04T12:00:00.000Z',
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

describe('push subscriptions', () => {
  it('registers (201), re-registers the same endpoint (200, same id) and deletes only the caller’s own', async () => {
    const subscription = push.subscribe();
    const first = await employee.request('POST', '/api/v1/push-subscriptions', subscription.body);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: employee.tenantId,
      user_id: employee.userId,
      endpoint: subscription.body.endpoint,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const again = await employee.request('POST', '/api/v1/push-subscriptions', subscription.body);
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    // The same browser signed in as someone else now belongs to them.
    const moved = await admin.request('POST', '/api/v1/push-subscriptions', subscription.body);
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ id: first.json().id, user_id: admin.userId });
    const notTheirs = await employee.request('DELETE', `/api/v1/push-subscriptions/${first.json().id}`);
    expect(notTheirs.statusCode).toBe(404);
    expect(notTheirs.json()).toEqual({
      error: { code: 'NOT_FOUND', message: 'push subscription not found' },
    });
    expect((await admin.request('DELETE', `/api/v1/push-subscriptions/${first.json().id}`)).statusCode).toBe(
      204,
    );
    expect((await admin.request('DELETE', `/api/v1/push-subscriptions/${first.json().id}`)).statusCode).toBe(
      404,
    );
  });

  it.each([
    [{ endpoint: 'http://127.0.0.1:9/push/x' }, 'endpoint: must be an https URL'],
    [{ endpoint: 'http://push.example.net/x' }, 'endpoint: must be an https URL'],
    [{ endpoint: 'not a url' }, 'endpoint'],
    [
      { keys: { p256dh: 'A'.repeat(87), auth: 'A'.repeat(22) } },
      'keys.p256dh: must be an uncompressed P-256 public key',
    ],
    [{ keys: { p256dh: 'short', auth: 'A'.repeat(22) } }, 'keys.p256dh'],
    [{ keys: { auth: 'A'.repeat(22) } }, 'keys.p256dh'],
    [{ extra: 1 }, 'extra'],
  ])('refuses %j with 422 and stores nothing', async (change, message) => {
    const body = { ...push.subscribe().body, ...change };
    const response = await employee.request('POST', '/api/v1/push-subscriptions', body);
    expect(response.statusCode).toBe(422);
    expect(response.json().error.message).toContain(message);
  });

  it('accepts a plain-http loopback endpoint only where the deployment allows it, and delivers there', async () => {
    const plain = await startPushService({ plain: true });
    const loose = await createTestContext({ push: { allowLoopbackHttp: true } });
    try {
      const { admin: boss, employee: someone } = await loose.freshTenant();
      const subscription = plain.subscribe();
      expect(subscription.body.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:/);
      const registered = await someone.request('POST', '/api/v1/push-subscriptions', subscription.body);
      expect(registered.statusCode).toBe(201);
      const remote = { ...subscription.body, endpoint: 'http://push.example.net/x' };
      expect((await someone.request('POST', '/api/v1/push-subscriptions', remote)).statusCode).toBe(422);

      await boss.request('PATCH', '/api/v1/tenant/settings', {
        time_tracking_enabled: false,
        notify_on_assignment: true,
      });
      const role = await newRole(boss, uniqueName('Cook'));
      await qualify(boss, someone, role);
      const shift = await newShift(boss, await newEvent(boss), { roleId: role });
      await created(boss, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: someone.userId,
      });
      await loose.app.notificationsIdle();
      const [stored] = (await someone.request('GET', '/api/v1/notifications')).json();
      expect(plain.refused).toEqual([]);
      expect(plain.received.map((r) => r.payload)).toEqual([stored]);
    } finally {
      await loose.close();
      await plain.close();
    }
  });

  it('gives the tenant’s VAPID public key: an uncompressed P-256 point, one per tenant', async () => {
    const mine = (await employee.request('GET', '/api/v1/push-subscriptions/vapid-public-key')).json();
    const raw = Buffer.from(mine.public_key, 'base64url');
    expect(raw.length).toBe(65);
    expect(raw[0]).toBe(4);
    expect((await admin.request('GET', '/api/v1/push-subscriptions/vapid-public-key')).json()).toEqual(mine);
    const other = (await ctx.freshTenant()).admin;
    expect((await other.request('GET', '/api/v1/push-subscriptions/vapid-public-key')).json()).not.toEqual(
      mine,
    );
  });
});

describe('Web Push fan-out', () => {
  it('sends each of the user’s browsers the stored notification, signed with the tenant’s key', async () => {
    await notifyOn();
    const phone = await subscribe(employee);
    const laptop = await subscribe(employee);
    const { assign } = await shiftFor(employee);
    await assign();
    await settle();
    const [notification] = await notificationsOf(employee);
    const tenantKey = (await employee.request('GET', '/api/v1/push-subscriptions/vapid-public-key')).json()
      .public_key;
    const mine = push.received.filter((r) => r.subscription === phone.id || r.subscription === laptop.id);
    expect(mine.map((r) => r.subscription).sort()).toEqual([phone.id, laptop.id].sort());
    for (const message of mine) {
      expect(message.payload).toEqual(notification);
      expect(message.vapidKey).toBe(tenantKey);
      expect(message.claims.aud).toBe(push.origin);
    }
    expect(push.refused).toEqual([]);
  });

  it('removes a subscription the push service calls gone (410, 404) and keeps the others', async () => {
    await notifyOn();
    const gone = await subscribe(employee);
    const missing = await subscribe(employee);
    const kept = await subscribe(employee);
    push.answer(gone.id, 410);
    push.answer(missing.id, 404);
    const { assign } = await shiftFor(employee);
    await assign();
    await settle();
    expect((await employee.request('DELETE', `/api/v1/push-subscriptions/${gone.apiId}`)).statusCode).toBe(
      404,
    );
    expect((await employee.request('DELETE', `/api/v1/push-subscriptions/${missing.apiId}`)).statusCode).toBe(
      404,
    );
    expect((await employee.request('DELETE', `/api/v1/push-subscriptions/${kept.apiId}`)).statusCode).toBe(
      204,
    );
  });

  it('retries transient failures a bounded number of times', async () => {
    await notifyOn();
    const flaky = await subscribe(employee);
    const broken = await subscribe(employee);
    push.answer(flaky.id, 503, 429);
    push.answer(broken.id, 500, 500, 500, 500, 500);
    const { assign } = await shiftFor(employee);
    await assign();
    await settle();
    expect(push.attempts.get(flaky.id)).toBe(3);
    expect(push.received.filter((r) => r.subscription === flaky.id)).toHaveLength(1);
    expect(push.attempts.get(broken.id)).toBe(3);
    expect(push.received.filter((r) => r.subscription === broken.id)).toHaveLength(0);
    // A failing browser is kept: only the push service's "gone" removes one.
    expect((await employee.request('DELETE', `/api/v1/push-subscriptions/${broken.apiId}`)).statusCode).toBe(
      204,
    );
  });

  it('never holds up or fails the operation that caused it', async () => {
    await notifyOn();
    const slow = await subscribe(employee);
    const release = push.hold();
    try {
      const { assign } = await shiftFor(employee);
      const assignment = await assign();
      expect(assignment.user_id).toBe(employee.userId);
      // The request answered while the push service still holds the message.
      expect(push.received.filter((r) => r.subscription === slow.id)).toHaveLength(0);
      expect(await notificationsOf(employee)).toHaveLength(1);
    } finally {
      release();
    }
    await settle();
    expect(push.received.filter((r) => r.subscription === slow.id)).toHaveLength(1);
  });

  it('never fails an operation that has committed, whatever fails after it', async () => {
    let hooks = withDbHooks(ctx.db.db);
    const fragile = await createTestContext({
      push: { agent: push.agent, backoffMs: 5 },
      viewDb: (db) => {
        hooks = withDbHooks(db);
        return hooks.db;
      },
    });
    try {
      ({ admin, employee } = await fragile.freshTenant());
      await notifyOn();
      const { shift, assign } = await shiftFor(employee);
      // The notification's row cannot be written: the assignment stands all the same.
      hooks.failNext(on('insert', 'notifications'), new Error('disk full'));
      const assignment = await assign();
      // Reading who is on the renamed shift fails: the rename stands all the same.
      hooks.failNext(on('select', 'shift_assignments'), new Error('connection lost'));
      const renamed = await admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Bar, late' });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json().name).toBe('Bar, late');
      await fragile.app.notificationsIdle();
      expect(await notificationsOf(employee)).toEqual([]);
      const staff = (await admin.request('GET', `/api/v1/shifts/${shift.id}/assignments`)).json();
      expect(staff.map((a: { id: string }) => a.id)).toEqual([assignment.id]);
    } finally {
      await fragile.close();
    }
  });

  it('keeps the notification and the operation when the push service cannot be reached', async () => {
    await notifyOn();
    const body = { ...push.subscribe().body, endpoint: 'https://127.0.0.1:9/push/unreachable' };
    expect((await employee.request('POST', '/api/v1/push-subscriptions', body)).statusCode).toBe(201);
    const { assign } = await shiftFor(employee);
    await assign();
    await settle();
    expect(await notificationsOf(employee)).toHaveLength(1);
  });
});
