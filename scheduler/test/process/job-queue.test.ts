import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { until } from '../../../scripts/test-wait.ts';
import { type Api, httpCaller, PROCESS_START_MS, startApi } from '../support/api-process.ts';
import { type Caller, uniqueName } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { type PushService, startPushService } from '../support/push-service.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';
import { createTestKeys, type TestKeys } from '../support/tokens.ts';

/**
 * The job queue across real API processes on one PostgreSQL (src/jobs/): three processes
 * behind a round-robin client send 1,200 notifications of 20 tenants to a local push
 * service. Normally each arrives exactly once; with one process killed -9 halfway and
 * started again, each arrives at least once, repeats bounded by what the killed process
 * held, none lost. A change rolled back leaves no notification and no job (in
 * test/notifications/outbox.test.ts, in-process). Reminders: each person on a shift is
 * reminded once across two processes, one of them killed -9 and started again.
 */
// Three servers started at once, one started again, and 1,200 deliveries between.
vi.setConfig({ testTimeout: 4 * PROCESS_START_MS });
const onPostgres = inject('testDb') === 'postgres';
const TENANTS = 20;
const STAFF = 10;
const RENAMES = 5;
const CONCURRENCY = 32;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

interface Cluster {
  apis: (Api | null)[];
  env: Record<string, string>;
  keys: TestKeys;
  db: TestDatabase;
  push: PushService;
}

async function cluster(): Promise<Cluster> {
  const keys = await createTestKeys();
  const db = await openTestDatabase();
  cleanups.push(() => db.dispose());
  const push = await startPushService({ plain: true });
  cleanups.push(() => push.close());
  const env = {
    DATABASE_URL: db.url as string,
    DATABASE_POOL_SIZE: '10',
    OUTBOUND_ALLOWED_HOSTS: new URL(push.origin).host,
    JOB_CONCURRENCY: String(CONCURRENCY),
    JOB_LEASE_SECONDS: '30',
  };
  const apis = await Promise.all([startApi(keys, env), startApi(keys, env), startApi(keys, env)]);
  cleanups.push(async () => {
    for (const api of apis) await api?.stop();
  });
  return { apis, env, keys, db, push };
}

/** Round robin over the processes that are up. */
function roundRobin(c: Cluster): () => Api {
  let next = 0;
  return () => {
    for (let i = 0; i < c.apis.length; i++) {
      const api = c.apis[next++ % c.apis.length];
      if (api) return api;
    }
    throw new Error('no API process is up');
  };
}

/** A tenant with notifications on, one shift of STAFF employees, each with one browser. */
async function tenant(c: Cluster, pick: () => Api) {
  const name = uniqueName('tenant');
  const admin = await httpCaller(c.keys, pick, name, 'admin', 'admin-1');
  const settings = await admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: false,
    notify_on_assignment: true,
  });
  expect(settings.statusCode).toBe(200);
  const role = await newRole(admin);
  const event = await newEvent(admin);
  await admin.request('POST', `/api/v1/events/${event}/publish`);
  const shift = await newShift(admin, event, { roleId: role, capacities: [STAFF] });
  const staff: Caller[] = [];
  for (let i = 0; i < STAFF; i++) {
    const employee = await httpCaller(c.keys, pick, name, 'employee', `employee-${i}`);
    await qualify(admin, employee, role);
    const browser = c.push.subscribe();
    expect((await employee.request('POST', '/api/v1/push-subscriptions', browser.body)).statusCode).toBe(201);
    await created(admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
      user_id: employee.userId,
    });
    staff.push(employee);
  }
  return { admin, shift };
}

/** Renames every tenant's shift RENAMES times (each rename tells STAFF people), tenants in parallel. */
async function renames(tenants: { admin: Caller; shift: { id: string } }[], from: number, to: number) {
  await Promise.all(
    tenants.map(async ({ admin, shift }) => {
      for (let i = from; i < to; i++) {
        // A request cut off by a kill may or may not have committed: either is fine here.
        await admin
          .request('PATCH', `/api/v1/shifts/${shift.id}`, { name: `Bar ${i}` })
          .catch(() => undefined);
      }
    }),
  );
}

/** Every notification that has a delivery, by id. */
async function expected(db: TestDatabase): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT DISTINCT split_part(key, ':', 1) AS id FROM jobs WHERE kind = 'push'`.execute(db.owner);
  return rows.map((r) => r.id);
}

/** Once no job is pending; the test's timeout bounds the wait. */
async function settled(db: TestDatabase): Promise<void> {
  await until(async () => {
    const { rows } = await sql<{ open: number }>`
      SELECT count(*)::int AS open FROM jobs WHERE status = 'pending'`.execute(db.owner);
    return rows[0]?.open === 0;
  }, 200);
}

/** How many times each notification reached the push service. */
function arrivals(push: PushService): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of push.received) {
    const id = (message.payload as { id: string }).id;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('the job queue across three API processes', runsIf(onPostgres, NEEDS_POSTGRES), () => {
  it('delivers 1,200 notifications of 20 tenants exactly once each', async () => {
    const c = await cluster();
    const pick = roundRobin(c);
    const tenants = await Promise.all(Array.from({ length: TENANTS }, () => tenant(c, pick)));
    await renames(tenants, 0, RENAMES);
    await settled(c.db);
    const ids = await expected(c.db);
    expect(ids).toHaveLength(TENANTS * STAFF * (1 + RENAMES));
    const counts = arrivals(c.push);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // All three processes did some of the work.
    const { rows } = await sql<{ workers: number }>`
      SELECT count(DISTINCT split_part(locked_by, ':', 2))::int AS workers FROM jobs`.execute(c.db.owner);
    expect(rows[0]?.workers).toBe(3);
  });

  it('with one process killed -9 halfway and started again: every notification at least once, none lost', async () => {
    const c = await cluster();
    const pick = roundRobin(c);
    // The push service is slow: many deliveries are in hand when the kill comes.
    c.push.delayMs = 50;
    const tenants = await Promise.all(Array.from({ length: TENANTS }, () => tenant(c, pick)));
    const half = renames(tenants, 0, RENAMES);
    // Halfway: half of all the notifications have arrived, the rest are being made and sent.
    await until(() => c.push.received.length >= (TENANTS * STAFF * (1 + RENAMES)) / 2);
    const victim = c.apis[1] as Api;
    c.apis[1] = null;
    victim.child.kill('SIGKILL');
    await half;
    c.apis[1] = await startApi(c.keys, c.env);
    await settled(c.db);
    const ids = await expected(c.db);
    const counts = arrivals(c.push);
    // None lost: every notification with a delivery arrived.
    expect(ids.filter((id) => !counts.has(id))).toEqual([]);
    // Repeats only of what the killed process held in hand.
    const repeats = [...counts.values()].reduce((sum, n) => sum + (n - 1), 0);
    expect(repeats).toBeLessThanOrEqual(CONCURRENCY);
    const { rows } = await sql<{ status: string; n: number }>`
      SELECT status, count(*)::int AS n FROM jobs GROUP BY status`.execute(c.db.owner);
    expect(rows).toEqual([{ status: 'done', n: ids.length }]);
  });

  it('reminds each person on a shift once across two processes, a kill -9 and a restart', async () => {
    const keys = await createTestKeys();
    const db = await openTestDatabase();
    cleanups.push(() => db.dispose());
    const env = { DATABASE_URL: db.url as string, DATABASE_POOL_SIZE: '5', REMINDER_INTERVAL_SECONDS: '1' };
    const apis: (Api | null)[] = await Promise.all([startApi(keys, env), startApi(keys, env)]);
    cleanups.push(async () => {
      for (const api of apis) await api?.stop();
    });
    const pick = roundRobin({ apis } as Cluster);
    const name = uniqueName('tenant');
    const admin = await httpCaller(keys, pick, name, 'admin', 'admin-1');
    const settings = await admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      remind_minutes_before_shift: 10_080,
    });
    expect(settings.statusCode).toBe(200);
    const role = await newRole(admin);
    const event = await newEvent(admin);
    // Starts in two days: within the week's lead time as soon as the people are on it.
    const start = new Date(Date.now() + 2 * 86_400_000);
    start.setUTCSeconds(0, 0);
    const shift = await newShift(admin, event, {
      roleId: role,
      capacities: [30],
      starts_at: start.toISOString(),
      ends_at: new Date(start.getTime() + 4 * 3_600_000).toISOString(),
    });
    const people: string[] = [];
    for (let i = 0; i < 30; i++) {
      const person = await httpCaller(keys, pick, name, 'employee', `employee-${i}`);
      await qualify(admin, person, role);
      await created(admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: person.userId,
      });
      people.push(person.userId);
      if (i === 14) {
        // Halfway, one process is killed and started again.
        const victim = apis[0] as Api;
        apis[0] = null;
        victim.child.kill('SIGKILL');
        apis[0] = await startApi(keys, env);
      }
    }
    const count = async () =>
      (
        await sql<{ reminders: number; rows: number }>`
          SELECT (SELECT count(*) FROM notifications WHERE type = 'shift.reminder')::int AS reminders,
                 (SELECT count(*) FROM shift_reminders)::int AS rows`.execute(db.owner)
      ).rows[0];
    await until(async () => (await count())?.reminders === 30, 250);
    // A few more looks by both processes (one a second) change nothing. A wait for what must
    // not happen: a slower machine looks fewer times, which cannot make this fail wrongly.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await count()).toEqual({ reminders: 30, rows: 30 });
    const { rows } = await sql<{ user_id: string }>`
      SELECT user_id FROM notifications WHERE type = 'shift.reminder' ORDER BY user_id`.execute(db.owner);
    expect(rows.map((r) => r.user_id)).toEqual([...people].sort());
  });
});
