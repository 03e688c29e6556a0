import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { type Api, httpCaller, startApi } from '../support/api-process.ts';
import type { Caller } from '../support/context.ts';
import { uniqueName } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { type PgCluster, startPgCluster } from '../support/pg-cluster.ts';
import { created, newEvent, newRole, qualify } from '../support/scheduling.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';
import { ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';
import { createTestKeys, type TestKeys } from '../support/tokens.ts';

/**
 * Bad days for the API process and its database, on PostgreSQL, with real processes:
 *  - the server killed with SIGKILL in the middle of a claim storm and of concurrent time
 *    entries, and started again: the database holds no slot over capacity, every
 *    filled_count exact, every balance equal to its ledger, no half-written record;
 *  - PostgreSQL stopped under load and started again: requests meanwhile fail fast with
 *    503 in the error shape, and the same process serves again once the database is back.
 * (The database unreachable at start is in test/process/main.test.ts.)
 */
vi.setConfig({ testTimeout: 180_000 });
const onPostgres = inject('testDb') === 'postgres';

const clusters: PgCluster[] = [];
const databases: TestDatabase[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) cluster.stop();
  for (const db of databases.splice(0)) await db.dispose();
});

/** What must hold in the database whatever happened to the processes writing it. */
async function invariants(db: TestDatabase) {
  const { rows } = await sql<{
    over: number;
    drift: number;
    orphans: number;
    uncredited: number;
    misplaced: number;
  }>`
    SELECT
      (SELECT count(*) FROM shift_slots WHERE filled_count > capacity)::int AS over,
      (SELECT count(*) FROM shift_slots s WHERE filled_count <>
         (SELECT count(*) FROM shift_assignments a WHERE a.tenant_id = s.tenant_id AND a.slot_id = s.id))::int AS drift,
      (SELECT count(*) FROM shift_assignments a WHERE NOT EXISTS
         (SELECT 1 FROM shifts s WHERE s.tenant_id = a.tenant_id AND s.id = a.shift_id
            AND s.starts_at = a.starts_at AND s.ends_at = a.ends_at))::int AS orphans,
      (SELECT count(*) FROM time_entries e WHERE NOT EXISTS
         (SELECT 1 FROM overtime_ledger l WHERE l.tenant_id = e.tenant_id AND l.time_entry_id = e.id
            AND l.kind = 'entry'))::int AS uncredited,
      (SELECT count(*) FROM time_entries e WHERE e.overtime_minutes <>
         (SELECT coalesce(sum(l.delta_minutes), 0) FROM overtime_ledger l
           WHERE l.tenant_id = e.tenant_id AND l.time_entry_id = e.id))::int AS misplaced`.execute(db.owner);
  expect(rows[0]).toEqual({ over: 0, drift: 0, orphans: 0, uncredited: 0, misplaced: 0 });
  expect(await ledgerMismatches(db.owner)).toEqual([]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the API process killed with SIGKILL', runsIf(onPostgres, NEEDS_POSTGRES), () => {
  it('leaves no overfilled slot, no drifting count, no balance apart from its ledger, no half-written row', async () => {
    const keys = await createTestKeys();
    const db = await openTestDatabase();
    databases.push(db);
    const env = { DATABASE_URL: db.url as string, DATABASE_POOL_SIZE: '20' };
    let api: Api = await startApi(keys, env);
    const tenant = uniqueName('tenant');
    const admin = await httpCaller(keys, () => api, tenant, 'admin', 'admin-1');
    await setTimeTracking(admin, true);
    const role = await newRole(admin);
    const event = await newEvent(admin, {
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2030-12-31T00:00:00Z',
    });
    const employees: Caller[] = [];
    for (let i = 0; i < 40; i++) {
      const employee = await httpCaller(keys, () => api, tenant, 'employee', `employee-${i}`);
      await qualify(admin, employee, role);
      employees.push(employee);
    }
    // Ten shifts on ten days, three seats each: 30 seats for 40 people claiming everywhere.
    const shifts: { id: string; slot: string }[] = [];
    for (let day = 0; day < 10; day++) {
      const shift = await created(admin, '/api/v1/shifts', {
        event_id: event,
        name: `Day ${day}`,
        starts_at: `2030-03-${String(day + 1).padStart(2, '0')}T09:00:00Z`,
        ends_at: `2030-03-${String(day + 1).padStart(2, '0')}T17:00:00Z`,
        slots: [{ role_id: role, capacity: 3 }],
      });
      await admin.request('POST', `/api/v1/shifts/${shift.id}/publish`);
      const slot = (await admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()[0].id as string;
      shifts.push({ id: shift.id, slot });
    }
    // Assignments of the admin's making on other days, for the time entries.
    const later = await created(admin, '/api/v1/shifts', {
      event_id: event,
      name: 'Late',
      starts_at: '2030-04-01T09:00:00Z',
      ends_at: '2030-04-01T17:00:00Z',
      slots: [{ role_id: role, capacity: 40 }],
    });
    const lateSlot = (await admin.request('GET', `/api/v1/shifts/${later.id}/slots`)).json()[0].id as string;
    const assignments: string[] = [];
    for (const employee of employees) {
      assignments.push(
        (
          await created(admin, `/api/v1/shifts/${later.id}/slots/${lateSlot}/assign`, {
            user_id: employee.userId,
          })
        ).id,
      );
    }

    // The storm: every employee claims every day, and entries are posted and re-posted for
    // every assignment with changing times, all at once; the process is killed midway.
    const claims = employees.flatMap((employee) =>
      shifts.map(
        (shift) => () => employee.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slot}/claim`),
      ),
    );
    const entries = assignments.flatMap((assignment, i) =>
      [0, 1, 2].map(
        (round) => () =>
          admin.request('POST', '/api/v1/time-tracking/entries', {
            shift_assignment_id: assignment,
            started_at: '2030-04-01T09:00:00Z',
            ended_at: `2030-04-01T${17 + ((i + round) % 3)}:${String((round * 7) % 60).padStart(2, '0')}:00Z`,
          }),
      ),
    );
    const all = [...claims, ...entries].sort(() => Math.random() - 0.5);
    const answered: number[] = [];
    const storm = Promise.all(
      all.map((send) =>
        send().then(
          (response) => answered.push(response.statusCode),
          () => answered.push(0),
        ),
      ),
    );
    while (answered.length < all.length / 3) await sleep(5);
    api.child.kill('SIGKILL');
    await storm;
    const cut = answered.filter((status) => status === 0).length;
    // Some requests were cut off by the kill, some had been answered.
    expect(cut).toBeGreaterThan(0);
    expect(answered.filter((status) => status >= 500)).toEqual([]);
    await invariants(db);

    // The restarted process serves the same database, and the rules still hold under load.
    api = await startApi(keys, env);
    const again = await Promise.all(claims.map((send) => send()));
    expect(again.map((r) => r.statusCode).filter((status) => status >= 500)).toEqual([]);
    const seats = (
      await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM shift_assignments WHERE slot_id IN (${sql.join(shifts.map((s) => s.slot))})`.execute(
        db.owner,
      )
    ).rows[0]?.n;
    expect(seats).toBe(30);
    await invariants(db);
    expect(await api.stop()).toBe(0);
  });
});

describe('PostgreSQL stopped under load', runsIf(onPostgres, NEEDS_POSTGRES), () => {
  async function ownCluster(keys: TestKeys) {
    const cluster = await startPgCluster();
    clusters.push(cluster);
    const handle = await openDatabase({ url: cluster.url, poolSize: 1 });
    await migrateToLatest(handle.owner);
    await handle.close();
    const api = await startApi(keys, { DATABASE_URL: cluster.url });
    return { cluster, api };
  }

  /** GET /roles as fast as a few clients can, recording each answer and how long it took. */
  function load(caller: Caller, until: () => boolean) {
    const answers: { status: number; body: string; ms: number }[] = [];
    const client = async () => {
      while (!until()) {
        const started = performance.now();
        const response = await caller.request('GET', '/api/v1/roles').then(
          (r) => ({ status: r.statusCode, body: r.body }),
          (error: Error) => ({ status: 0, body: error.message }),
        );
        answers.push({ ...response, ms: performance.now() - started });
      }
    };
    return { answers, done: Promise.all(Array.from({ length: 8 }, client)) };
  }

  it.each(['fast', 'immediate'] as const)(
    'answers 503 quickly while the database is down (%s stop), and serves again once it is back, without a restart',
    async (mode) => {
      const keys = await createTestKeys();
      const { cluster, api } = await ownCluster(keys);
      const admin = await httpCaller(keys, () => api, uniqueName('tenant'), 'admin', 'admin-1');
      await newRole(admin, 'Before');
      let phase: 'up' | 'down' | 'back' | 'over' = 'up';
      const { answers, done } = load(admin, () => phase === 'over');
      await sleep(500);
      const upTo = answers.length;
      cluster.halt(mode);
      phase = 'down';
      await sleep(3000);
      const downFrom = upTo;
      const downTo = answers.length;
      cluster.resume();
      phase = 'back';
      // Back without a restart: the same process answers 200 again. The wait allows for a
      // connection attempt caught by the stop, which gives up after the 10 s connect timeout.
      const resumedAt = performance.now();
      let recovered = false;
      for (let i = 0; i < 300 && !recovered; i++) {
        await sleep(100);
        recovered = answers.slice(-8).some((answer) => answer.status === 200);
      }
      const recoveryMs = Math.round(performance.now() - resumedAt);
      phase = 'over';
      await done;
      expect(recovered, `no 200 within ${recoveryMs} ms of the restart`).toBe(true);
      const during = answers.slice(downFrom, downTo).filter((answer) => answer.status !== 200);
      expect(during.length).toBeGreaterThan(0);
      for (const answer of during) {
        expect(answer.status, answer.body).toBe(503);
        expect(JSON.parse(answer.body)).toEqual({
          error: { code: 'SERVICE_UNAVAILABLE', message: 'service temporarily unavailable' },
        });
        // Fail fast: a refused connection is answered at once, not after a connect timeout.
        expect(answer.ms).toBeLessThan(5000);
      }
      expect(answers.some((answer) => answer.status >= 500 && answer.status !== 503)).toBe(false);
      expect(
        ((await admin.request('GET', '/api/v1/roles')).json() as { name: string }[]).map((r) => r.name),
      ).toEqual(['Before']);
      expect((await fetch(`${api.base}/health`)).status).toBe(200);
      expect(await api.stop()).toBe(0);
    },
  );
});
