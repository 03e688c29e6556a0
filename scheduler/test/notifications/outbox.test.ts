import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { createLogger } from '../../src/logger.ts';
import { parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { type Caller, createTestContext, type TestContext, uniqueName } from '../support/context.ts';
import { on, withDbHooks } from '../support/db-hooks.ts';
import { notificationSteps, notificationsOf } from '../support/notifications.ts';
import { type PushService, startPushService } from '../support/push-service.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';
import { stageInUnit } from '../support/units.ts';

/**
 * The transactional outbox (src/notifications/outbox.ts) and the Web Push deliveries it queues (src/push/delivery.ts, run by src/jobs/), delivering to a local push service
 * that checks the VAPID signature and decrypts every message, as a browser's push service
 * does.
 */
let ctx: TestContext;
let push: PushService;
let admin: Caller;
let employee: Caller;

/** The app's log lines (JSON), as an operator reads them; emptied before each test. */
let lines: Record<string, unknown>[] = [];
const logger = createLogger('info', {
  interactive: false,
  destination: new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  }),
}) as FastifyBaseLogger;
const logged = (msg: string) => lines.filter((line) => line.msg === msg);

beforeAll(async () => {
  push = await startPushService();
  ctx = await createTestContext({
    logger,
    push: { agent: push.agent, backoffMs: 5, attempts: 3 },
    // Any port of this machine: one test registers an endpoint nobody listens on.
    outboundAllowedHosts: parseAllowedHosts('127.0.0.1'),
  });
});
afterAll(async () => {
  await ctx?.close();
  await push?.close();
});
beforeEach(async () => {
  ({ admin, employee } = await ctx.freshTenant());
  lines = [];
});
afterEach(() => {
  // No test here makes a delivery fail outside the sender's outcomes.
  expect(logged('push delivery failed')).toEqual([]);
});

const settle = () => ctx.app.jobsIdle();
const { notifyOn, shiftFor, subscribe } = notificationSteps(() => ({ admin, push }));

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
    // The operator reads which notification went undelivered, and to which push service.
    const [notification] = await notificationsOf(employee);
    if (!notification) throw new Error('no notification stored');
    expect(logged('push message not delivered after retries')).toEqual([
      expect.objectContaining({
        level: 40,
        notification: notification.id,
        pushHost: new URL(push.origin).host,
      }),
    ]);
    // The admin reads the delivery given up, with the last error.
    const dead = (await admin.request('GET', '/api/v1/jobs?status=dead')).json();
    expect(dead).toEqual([
      expect.objectContaining({
        kind: 'push',
        key: `${notification.id}:${broken.apiId}`,
        status: 'dead',
        attempts: 3,
        max_attempts: 3,
        last_error: 'the push service did not take the message: HTTP 500',
      }),
    ]);
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

  it('commits a change with its notifications and their deliveries, or none of them', async () => {
    let hooks = withDbHooks(ctx.db.db);
    const fragile = await createTestContext({
      logger,
      push: { agent: push.agent, backoffMs: 5 },
      outboundAllowedHosts: parseAllowedHosts('127.0.0.1'),
      viewDb: (db) => {
        hooks = withDbHooks(db);
        return hooks.db;
      },
    });
    const jobs = () =>
      fragile.db.owner.selectFrom('jobs').select('key').where('tenant_id', '=', employee.tenantId).execute();
    try {
      ({ admin, employee } = await fragile.freshTenant());
      await notifyOn();
      await subscribe(employee);
      const { shift, assign } = await shiftFor(employee);
      const assignUrl = `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`;
      // The notification's row cannot be written: the assignment is not made either.
      hooks.failNext(on('insert', 'notifications'), new Error('disk full'));
      const refused = await admin.request('POST', assignUrl, { user_id: employee.userId });
      expect(refused.statusCode).toBe(500);
      // Its delivery job cannot be written (the row was): neither stays.
      hooks.failNext(on('insert', 'jobs'), new Error('disk full'));
      expect((await admin.request('POST', assignUrl, { user_id: employee.userId })).statusCode).toBe(500);
      expect((await admin.request('GET', `/api/v1/shifts/${shift.id}/assignments`)).json()).toEqual([]);
      expect(await notificationsOf(employee)).toEqual([]);
      expect(await jobs()).toEqual([]);

      const assignment = await assign();
      // Reading who is on the renamed shift fails: the rename is not made either.
      hooks.failNext(on('select', 'shift_assignments'), new Error('connection lost'));
      const renamed = await admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Bar, late' });
      expect(renamed.statusCode).toBe(500);
      expect((await admin.request('GET', `/api/v1/shifts/${shift.id}`)).json().name).not.toBe('Bar, late');
      await fragile.app.jobsIdle();
      expect((await notificationsOf(employee)).map((n) => n.type)).toEqual(['assignment.created']);
      expect(await jobs()).toHaveLength(1);
      const staff = (await admin.request('GET', `/api/v1/shifts/${shift.id}/assignments`)).json();
      expect(staff.map((a: { id: string }) => a.id)).toEqual([assignment.id]);
    } finally {
      await fragile.close();
    }
  });

  it('sends nothing to an endpoint the address rules refuse now, keeps it, and says so in the log', async () => {
    await notifyOn();
    // Registered while its host was admitted; the operator's list no longer names it.
    const body = { ...push.subscribe().body, endpoint: 'https://127.0.0.2:9/push/dropped-from-the-list' };
    const registered = await ctx.db.owner
      .insertInto('push_subscriptions')
      .values({
        tenant_id: employee.tenantId,
        id: '0123456789abcdef0123456789abcdef',
        user_id: employee.userId,
        endpoint: body.endpoint,
        p256dh: body.keys.p256dh,
        auth: body.keys.auth,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { assign } = await shiftFor(employee);
    await assign();
    await settle();
    const [notification] = await notificationsOf(employee);
    if (!notification) throw new Error('no notification stored');
    expect(logged('push endpoint refused by the outbound address rules; not sent')).toEqual([
      expect.objectContaining({ level: 40, notification: notification.id, subscription: registered.id }),
    ]);
    const kept = await ctx.db.owner
      .selectFrom('push_subscriptions')
      .select('id')
      .where('id', '=', registered.id)
      .execute();
    expect(kept).toHaveLength(1);
  });

  it('stores the row for a user without browsers, sends nothing, and logs no trouble', async () => {
    await notifyOn();
    const { assign } = await shiftFor(employee);
    await assign();
    await settle();
    expect(await notificationsOf(employee)).toHaveLength(1);
    expect(lines.filter((line) => (line.level as number) >= 40)).toEqual([]);
  });

  it('notifies nobody, and logs no trouble, when the only person concerned made the change', async () => {
    await notifyOn();
    const { assign } = await shiftFor(admin);
    await assign();
    await settle();
    expect(await notificationsOf(admin)).toEqual([]);
    expect(lines.filter((line) => (line.level as number) >= 40)).toEqual([]);
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

  // About 260 requests to set up and 200 deliveries in hand: 120 s is room for that on a
  // loaded machine (the default 30 s was not).
  it('keeps one tenant with 200 hanging endpoints from holding up another tenant’s message', {
    timeout: 120_000,
  }, async () => {
    const other = await startPushService({ plain: true });
    const release = push.hold();
    try {
      // Tenant A: 20 people with 10 browsers each on a push service that never answers.
      await notifyOn();
      const { shift } = await shiftFor(employee);
      const people: Caller[] = [];
      for (let i = 0; i < 20; i++) {
        const person = await ctx.caller('employee', tenantOf(admin), `hanging-${i}`);
        for (let b = 0; b < 10; b++) await subscribe(person);
        people.push(person);
      }
      const role = (await admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()[0].role_id;
      await admin.request('PATCH', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}`, { capacity: 20 });
      for (const person of people) {
        await qualify(admin, person, role);
        await created(admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
          user_id: person.userId,
        });
      }
      // Tenant B: one person, one browser elsewhere, assigned now.
      const b = await ctx.freshTenant();
      const previous = { admin, push };
      ({ admin, employee } = b);
      push = other;
      await notifyOn();
      await subscribe(employee);
      const { assign } = await shiftFor(employee);
      await assign();
      ({ admin, push } = previous);
      await until(() => other.received.length > 0);
      // B's message went through while every one of A's 200 still hangs.
      expect(other.received).toHaveLength(1);
      const tenantA = admin.tenantId;
      expect(push.received.filter((r) => (r.payload as { tenant_id: string }).tenant_id === tenantA)).toEqual(
        [],
      );
    } finally {
      release();
      await settle();
      await other.close();
    }
  });
});

/**
 * A deactivated user can no longer read anything here, so nothing is sent to them: no
 * notification row, no Web Push. Seats of started shifts stay theirs (records), and those
 * shifts still change; their browsers are removed with the deactivation.
 */
describe('deactivated users', () => {
  /** The employee on a shift that has started (it stays their seat through a deactivation). */
  async function startedShift() {
    const role = await newRole(admin, uniqueName('Cook'));
    await qualify(admin, employee, role);
    const now = Date.now();
    const event = await newEvent(admin, {
      starts_at: new Date(now - 86_400_000).toISOString(),
      ends_at: new Date(now + 86_400_000).toISOString(),
    });
    const shift = await newShift(admin, event, {
      roleId: role,
      starts_at: new Date(now - 3_600_000).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
    });
    const seat = await created(admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
      user_id: employee.userId,
    });
    return { shift, seat: seat.id as string };
  }

  const deactivate = async () => {
    const response = await admin.request('PATCH', `/api/v1/users/${employee.userId}`, { active: false });
    expect(response.statusCode, response.body).toBe(200);
  };

  /** The types of the notifications stored for the employee, oldest first. */
  const storedFor = async (userId: string) =>
    (
      await ctx.db.owner
        .selectFrom('notifications')
        .select('type')
        .where('tenant_id', '=', employee.tenantId)
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .execute()
    ).map((row) => row.type);

  /** Web Push deliveries queued for the tenant, sent or not. */
  const deliveries = async () =>
    (
      await ctx.db.owner
        .selectFrom('jobs')
        .select('id')
        .where('tenant_id', '=', employee.tenantId)
        .where('kind', '=', 'push')
        .execute()
    ).length;

  it('are not told of a change to a shift they still hold, and their browsers are gone', async () => {
    await notifyOn();
    const browser = await subscribe(employee);
    const { shift } = await startedShift();
    await settle();
    expect(await storedFor(employee.userId)).toEqual(['assignment.created']);
    expect(await deliveries()).toBe(1);
    await deactivate();
    expect(
      await ctx.db.owner
        .selectFrom('push_subscriptions')
        .select('id')
        .where('tenant_id', '=', employee.tenantId)
        .where('user_id', '=', employee.userId)
        .execute(),
    ).toEqual([]);
    const changed = await admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Renamed' });
    expect(changed.statusCode, changed.body).toBe(200);
    await settle();
    expect(await storedFor(employee.userId)).toEqual(['assignment.created']);
    expect(await deliveries()).toBe(1);
    expect(push.received.filter((r) => r.subscription === browser.id)).toHaveLength(1);
  });

  it('are not told that an admin removed them from a started shift', async () => {
    await notifyOn();
    const { shift, seat } = await startedShift();
    await deactivate();
    const removed = await admin.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat}`);
    expect(removed.statusCode, removed.body).toBe(204);
    await settle();
    expect(await storedFor(employee.userId)).toEqual(['assignment.created']);
  });

  it('are told again once reactivated', async () => {
    await notifyOn();
    const { shift } = await startedShift();
    await deactivate();
    expect(
      (await admin.request('PATCH', `/api/v1/users/${employee.userId}`, { active: true })).statusCode,
    ).toBe(200);
    expect((await admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Renamed' })).statusCode).toBe(
      200,
    );
    await settle();
    expect(await storedFor(employee.userId)).toEqual(['assignment.created', 'shift.changed']);
  });
});

describe('many people at once', () => {
  /** `count` employees of the tenant made by the owner, the first `active` of them active; their ids. */
  async function people(tenantId: string, count: number, active: number): Promise<string[]> {
    const ids = Array.from({ length: count }, () => randomUUID().replaceAll('-', ''));
    await sql`
      INSERT INTO users (tenant_id, id, role, display_name, active)
      SELECT ${tenantId}::uuid, id, 'employee', 'Person ' || n, n <= ${active}
        FROM unnest(${ids}::uuid[]) WITH ORDINALITY AS u(id, n)`.execute(ctx.db.owner);
    return ids;
  }

  it('stages one notification per active person among 1,550 ids, and a delivery per browser of theirs', async () => {
    const tenantId = admin.tenantId;
    const ids = await people(tenantId, 1500, 1200);
    const unknown = Array.from({ length: 50 }, () => randomUUID().replaceAll('-', ''));
    // Twenty of the active people have a browser each; two of the inactive ones too.
    const withBrowsers = [...ids.slice(0, 20), ...ids.slice(1200, 1202)];
    const browsers = withBrowsers.map(() => push.subscribe());
    await sql`
      INSERT INTO push_subscriptions (tenant_id, id, user_id, endpoint, p256dh, auth)
      SELECT ${tenantId}::uuid, gen_random_uuid(), user_id, endpoint, p256dh, auth
        FROM unnest(${withBrowsers}::uuid[], ${browsers.map((b) => b.body.endpoint)}::text[],
                    ${browsers.map((b) => b.body.keys.p256dh)}::text[],
                    ${browsers.map((b) => b.body.keys.auth)}::text[]) AS u(user_id, endpoint, p256dh, auth)`.execute(
      ctx.db.owner,
    );
    const message = {
      type: 'shift.changed',
      title: 'Bar has changed',
      body: 'Bar, "late", {all} day',
      data: { shift_id: '0123456789abcdef0123456789abcdef' },
    };
    const staged = await asTenant(tenantId, () =>
      stageInUnit(ctx.db.db, { tenantId, userId: null }, [...unknown, ...ids], message),
    );
    expect(staged.map((n) => n.user_id).sort()).toEqual(ids.slice(0, 1200).sort());
    expect(new Set(staged.map((n) => n.id)).size).toBe(1200);
    for (const notification of staged) {
      expect(notification).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        tenant_id: tenantId,
        user_id: notification.user_id,
        ...message,
        read_at: null,
        created_at: expect.stringMatching(/Z$/),
      });
    }
    const { rows } = await sql<{ notifications: number; deliveries: number }>`
      SELECT (SELECT count(*)::int FROM notifications WHERE tenant_id = ${tenantId}::uuid) AS notifications,
             (SELECT count(*)::int FROM jobs WHERE tenant_id = ${tenantId}::uuid AND kind = 'push') AS deliveries`.execute(
      ctx.db.owner,
    );
    expect(rows).toEqual([{ notifications: 1200, deliveries: 20 }]);
    await settle();
    const byUser = new Map(staged.map((n) => [n.user_id, n]));
    for (const [i, browser] of browsers.entries()) {
      const got = push.received.filter((r) => r.subscription === browser.id).map((r) => r.payload);
      expect(got).toEqual(i < 20 ? [byUser.get(withBrowsers[i] ?? '')] : []);
    }
  });

  it('tells the 300 people on a shift of its new name', async () => {
    await notifyOn();
    const { shift } = await shiftFor(employee);
    const tenantId = admin.tenantId;
    const ids = await people(tenantId, 300, 300);
    const slot = shift.slots[0] ?? '';
    await admin.request('PATCH', `/api/v1/shifts/${shift.id}/slots/${slot}`, { capacity: 300 });
    await sql`
      INSERT INTO user_qualifications (tenant_id, user_id, role_id)
      SELECT ${tenantId}::uuid, u.id, sl.role_id FROM unnest(${ids}::uuid[]) AS u(id), shift_slots sl
       WHERE sl.tenant_id = ${tenantId}::uuid AND sl.id = ${slot}::uuid`.execute(ctx.db.owner);
    await sql`
      INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, assigned_by, starts_at, ends_at)
      SELECT s.tenant_id, gen_random_uuid(), s.id, ${slot}::uuid, u.id, 'assign', ${admin.userId}::uuid,
             s.starts_at, s.ends_at
        FROM unnest(${ids}::uuid[]) AS u(id), shifts s
       WHERE s.tenant_id = ${tenantId}::uuid AND s.id = ${shift.id}::uuid`.execute(ctx.db.owner);
    const renamed = await admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Renamed' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    const { rows } = await sql<{ user_id: string; title: string }>`
      SELECT user_id, title FROM notifications
       WHERE tenant_id = ${tenantId}::uuid AND type = 'shift.changed' ORDER BY user_id`.execute(ctx.db.owner);
    expect(rows).toEqual([...ids].sort().map((user_id) => ({ user_id, title: 'Renamed has changed' })));
  });
});
