import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, type TestContext, uniqueName } from '../support/context.ts';
import { type PushService, startPushService } from '../support/push-service.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * Push subscriptions through their routes, against a local push service that checks the
 * VAPID signature and decrypts every message, as a browser's push service does.
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
