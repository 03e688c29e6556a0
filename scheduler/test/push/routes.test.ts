import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { type Caller, createTestContext, type TestContext, uniqueName } from '../support/context.ts';
import { type PushService, startPushService } from '../support/push-service.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * Push subscriptions through their routes, against a local push service that checks the
 * VAPID signature and decrypts every message, as a browser's push service does.
 */
let ctx: TestContext;

/**
 * A browser's P-256 public key, uncompressed (prefix 4), base64url: a fixed one, so that
 * the names of the tests below are the same at every run (mutation testing selects tests
 * by name).
 */
const validPoint = () =>
  'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM';
/** The same key in the hybrid encoding (prefix 6 or 7 by the parity of y). */
const hybridPoint = () => {
  const point = Buffer.from(validPoint(), 'base64url');
  point[0] = 6 | ((point[64] ?? 0) & 1);
  return point.toString('base64url');
};
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

/** The ids of a user's stored push subscriptions, read past the API. */
const browsersOf = async (caller: Caller) =>
  (
    await ctx.db.owner
      .selectFrom('push_subscriptions')
      .select('id')
      .where('tenant_id', '=', caller.tenantId)
      .where('user_id', '=', caller.userId)
      .execute()
  ).map((row) => row.id);

describe('telling browsers apart: label and user_agent', () => {
  const register = (caller: Caller, body: unknown, userAgent?: string) =>
    ctx.request('POST', '/api/v1/push-subscriptions', {
      token: caller.token,
      body,
      headers: userAgent === undefined ? {} : { 'user-agent': userAgent },
    });
  const firefox = 'Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0';
  const safari =
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
  const mine = async () => (await employee.request('GET', '/api/v1/push-subscriptions')).json();

  it('keeps the name given at registration and the browser’s User-Agent; a re-registration refreshes them', async () => {
    const phone = push.subscribe();
    const laptop = push.subscribe();
    const named = await register(employee, { ...phone.body, label: '  Work phone ' }, firefox);
    expect(named.statusCode, named.body).toBe(201);
    expect(named.json()).toMatchObject({ label: 'Work phone', user_agent: firefox });
    expect((await register(employee, laptop.body, safari)).json()).toMatchObject({
      label: null,
      user_agent: safari,
    });
    const listed = await mine();
    expect(listed.map((s: { label: string | null; user_agent: string }) => [s.label, s.user_agent])).toEqual([
      [null, safari],
      ['Work phone', firefox],
    ]);
    expect(listed[1].created_at).toBe(named.json().created_at);
    // Again without a label: the name stays, the User-Agent is the one it sends now.
    const again = await register(employee, phone.body, `${firefox} Updated`);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({
      id: named.json().id,
      label: 'Work phone',
      user_agent: `${firefox} Updated`,
    });
    // A new name replaces it; null clears it.
    expect((await register(employee, { ...phone.body, label: 'Old phone' }, firefox)).json().label).toBe(
      'Old phone',
    );
    expect((await register(employee, { ...phone.body, label: null }, firefox)).json().label).toBeNull();
    // A browser moving to someone else (signed in as them) leaves its name behind.
    await register(employee, { ...laptop.body, label: 'Anna’s laptop' }, safari);
    const moved = await register(admin, laptop.body, safari);
    expect(moved.json()).toMatchObject({ user_id: admin.userId, label: null });
  });

  it('keeps a User-Agent one line and at most 512 characters, and none as null', async () => {
    const tabbed = await register(employee, push.subscribe().body, 'Mozilla/5.0\t(X11)  ');
    expect(tabbed.json().user_agent).toBe('Mozilla/5.0 (X11)');
    const long = await register(employee, push.subscribe().body, `Mozilla/5.0 ${'x'.repeat(600)}`);
    expect(long.json().user_agent).toBe(`Mozilla/5.0 ${'x'.repeat(500)}`);
    const none = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/push-subscriptions',
      headers: {
        authorization: `Bearer ${employee.token}`,
        'content-type': 'application/json',
        'user-agent': '',
      },
      payload: JSON.stringify(push.subscribe().body),
    });
    expect(none.statusCode, none.body).toBe(201);
    expect(none.json().user_agent).toBeNull();
  });

  it.each([
    ['blank', ' ', 'label: must not be blank'],
    ['empty', '', 'label: must NOT have fewer than 1 characters'],
    ['101 characters', 'x'.repeat(101), 'label: must NOT have more than 100 characters'],
    ['a line break', 'Work\nphone', 'label: must be one line of text, without control characters'],
    ['a number', 7, 'label: must be string,null'],
  ])('refuses a label that is %s with 422, storing nothing', async (_label, label, message) => {
    const response = await register(employee, { ...push.subscribe().body, label }, firefox);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    expect(await browsersOf(employee)).toEqual([]);
  });
});

describe('GET /api/v1/push-subscriptions', () => {
  it('lists the caller’s own browsers, the one registered last first, never the keys; each removable', async () => {
    const older = push.subscribe();
    const newer = push.subscribe();
    const first = await created(employee, '/api/v1/push-subscriptions', older.body);
    const second = await created(employee, '/api/v1/push-subscriptions', newer.body);
    await created(admin, '/api/v1/push-subscriptions', push.subscribe().body);
    const response = await employee.request('GET', '/api/v1/push-subscriptions');
    expect(response.statusCode).toBe(200);
    const listed = response.json();
    expect(listed.map((s: { id: string }) => s.id)).toEqual([second.id, first.id]);
    expect(listed[1]).toEqual({
      id: first.id,
      tenant_id: employee.tenantId,
      user_id: employee.userId,
      endpoint: older.body.endpoint,
      label: null,
      // light-my-request's own User-Agent, as the test's requests send it.
      user_agent: 'lightMyRequest',
      created_at: first.created_at,
      updated_at: first.updated_at,
    });
    expect(response.body).not.toContain(older.body.keys.p256dh);
    expect(response.body).not.toContain(older.body.keys.auth);
    expect((await employee.request('DELETE', `/api/v1/push-subscriptions/${second.id}`)).statusCode).toBe(
      204,
    );
    const left = (await employee.request('GET', '/api/v1/push-subscriptions')).json();
    expect(left.map((s: { id: string }) => s.id)).toEqual([first.id]);
  });

  it('shows an admin only their own, and another tenant nothing', async () => {
    await created(employee, '/api/v1/push-subscriptions', push.subscribe().body);
    expect((await admin.request('GET', '/api/v1/push-subscriptions')).json()).toEqual([]);
    const other = await ctx.freshTenant();
    expect((await other.admin.request('GET', '/api/v1/push-subscriptions')).json()).toEqual([]);
    expect((await other.employee.request('GET', '/api/v1/push-subscriptions')).json()).toEqual([]);
  });

  it('answers the fixed 403 to a customer', async () => {
    const customer = await ctx.caller('customer', uniqueName('tenant'), 'cust', { customer: 'c-1' });
    const response = await customer.request('GET', '/api/v1/push-subscriptions');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ error: { code: 'FORBIDDEN', message: 'forbidden' } });
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
      label: null,
      user_agent: 'lightMyRequest',
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
    [{ endpoint: 'http://push.example.net/x' }, 'endpoint: must be an https URL'],
    [{ endpoint: 'not a url' }, 'endpoint'],
    [
      { keys: { p256dh: 'A'.repeat(87), auth: 'A'.repeat(22) } },
      'keys.p256dh: must be an uncompressed P-256 public key',
    ],
    [{ keys: { p256dh: 'short', auth: 'A'.repeat(22) } }, 'keys.p256dh'],
    // A point on the curve in the hybrid encoding (prefix 6 or 7): OpenSSL takes it, RFC 8291 does not.
    [
      { keys: { p256dh: hybridPoint(), auth: 'A'.repeat(22) } },
      'keys.p256dh: must be an uncompressed P-256 public key (65 bytes, base64url)',
    ],
    [{ keys: { p256dh: validPoint(), auth: 'A'.repeat(24) } }, 'keys.auth: must be 16 bytes, base64url'],
    [{ keys: { auth: 'A'.repeat(22) } }, 'keys.p256dh'],
    [{ extra: 1 }, 'extra'],
  ])('refuses %j with 422 and stores nothing', async (change, message) => {
    const body = { ...push.subscribe().body, ...change };
    const response = await employee.request('POST', '/api/v1/push-subscriptions', body);
    expect(response.statusCode).toBe(422);
    expect(response.json().error.message).toContain(message);
  });

  it.each([
    ['https://127.0.0.1:9/push/x', 'loopback'],
    ['https://127.1/push/x', 'loopback, spelled short'],
    ['https://2130706433/push/x', 'loopback as one decimal number'],
    ['https://0x7f.1/push/x', 'loopback in hexadecimal'],
    ['https://[::1]/push/x', 'IPv6 loopback'],
    ['https://[::ffff:127.0.0.1]/push/x', 'loopback mapped into IPv6'],
    ['https://169.254.169.254/latest/meta-data', 'link-local (cloud metadata)'],
    ['https://10.0.0.1:6443/push/x', 'private (10/8)'],
    ['https://172.16.5.4/push/x', 'private (172.16/12)'],
    ['https://192.168.1.1/push/x', 'private (192.168/16)'],
    ['https://100.64.0.1/push/x', 'carrier-grade NAT'],
    ['https://[fd00::1]/push/x', 'IPv6 unique-local'],
    ['https://[fe80::1]/push/x', 'IPv6 link-local'],
    ['https://224.0.0.1/push/x', 'multicast'],
    ['https://0.0.0.0/push/x', 'unspecified'],
    ['https://[::]/push/x', 'IPv6 unspecified'],
    ['https://192.0.2.7/push/x', 'documentation range'],
    ['https://localhost/push/x', 'localhost'],
    ['https://push.localhost/push/x', 'a name under localhost'],
    ['https://metadata/computeMetadata', 'a single-label internal name'],
    ['https://metadata.google.internal/computeMetadata', 'an .internal name'],
    ['https://api.cluster.local:6443/push/x', 'a .local name'],
    ['https://user:secret@push.example.net/push/x', 'a user name and password'],
    ['https://user@push.example.net/push/x', 'a user name'],
  ])('refuses %s (%s) with 422 and stores nothing', async (endpoint) => {
    const body = { ...push.subscribe().body, endpoint };
    const response = await employee.request('POST', '/api/v1/push-subscriptions', body);
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    expect(response.json().error.message).toMatch(/^endpoint: must /);
    const stored = await ctx.db.owner
      .selectFrom('push_subscriptions')
      .select('endpoint')
      .where('tenant_id', '=', employee.tenantId)
      .execute();
    expect(stored).toEqual([]);
  });

  it('keeps a user’s newest 10 browsers: an eleventh replaces the one registered longest ago', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const response = await employee.request('POST', '/api/v1/push-subscriptions', push.subscribe().body);
      expect(response.statusCode).toBe(201);
      ids.push(response.json().id);
    }
    expect((await browsersOf(employee)).sort()).toEqual(ids.slice(2).sort());
    // One more new browser replaces the oldest of the ten.
    const another = await employee.request('POST', '/api/v1/push-subscriptions', push.subscribe().body);
    expect(another.statusCode).toBe(201);
    expect((await browsersOf(employee)).sort()).toEqual([...ids.slice(3), another.json().id].sort());
  });

  it('holds the cap of 10 under 30 concurrent registrations of one user', async () => {
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        employee.request('POST', '/api/v1/push-subscriptions', push.subscribe().body),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(30).fill(201));
    expect(await browsersOf(employee)).toHaveLength(10);
  });

  it('answers 422, not 500, for endpoints the URL reader refuses, and stores what it read for one in capitals', async () => {
    const keys = push.subscribe().body.keys;
    const outOfRange = await employee.request('POST', '/api/v1/push-subscriptions', {
      endpoint: 'https://push.example.net:99999/x',
      keys,
    });
    expect(outOfRange.statusCode).toBe(422);
    expect(outOfRange.json().error.message).toMatch(/^endpoint: /);
    const shouted = await employee.request('POST', '/api/v1/push-subscriptions', {
      endpoint: 'HTTPS://Push.Example.NET/wpush/Ab',
      keys,
    });
    expect(shouted.statusCode, shouted.body).toBe(201);
    expect(shouted.json().endpoint).toBe('https://push.example.net/wpush/Ab');
  });

  it('admits hosts the operator lists in OUTBOUND_ALLOWED_HOSTS, plain http only for those, and delivers there', async () => {
    const plain = await startPushService({ plain: true });
    const loose = await createTestContext({
      outboundAllowedHosts: parseAllowedHosts(new URL(plain.origin).host),
    });
    try {
      const { admin: boss, employee: someone } = await loose.freshTenant();
      const subscription = plain.subscribe();
      expect(subscription.body.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:/);
      const registered = await someone.request('POST', '/api/v1/push-subscriptions', subscription.body);
      expect(registered.statusCode).toBe(201);
      // Another port of the same host is not listed; neither is plain http elsewhere.
      const otherPort = { ...subscription.body, endpoint: 'http://127.0.0.1:9/push/x' };
      expect((await someone.request('POST', '/api/v1/push-subscriptions', otherPort)).statusCode).toBe(422);
      const remote = { ...subscription.body, endpoint: 'http://push.example.net/x' };
      expect((await someone.request('POST', '/api/v1/push-subscriptions', remote)).json()).toEqual({
        error: { code: 'VALIDATION_FAILED', message: 'endpoint: must be an https URL' },
      });

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
      await loose.app.jobsIdle();
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
