import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { type Api, httpCaller, PROCESS_START_MS, startApi } from '../support/api-process.ts';
import { type Caller, uniqueName } from '../support/context.ts';
import { openTestDatabase, type TestDatabase, testAppLogin } from '../support/database.ts';
import { findPgBinDir, startPgCluster } from '../support/pg-cluster.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';
import { EMBEDDED_ONLY, NEEDS_POSTGRES } from '../support/skips.ts';
import { assignedShift, ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';
import { createTestKeys } from '../support/tokens.ts';

/**
 * The runbooks of docs/operations.md, run against the production build (dist/main.mjs,
 * as the container and the service unit run it) in real processes:
 *  - backup and restore of the embedded database (stop, archive the folder, unpack it
 *    into a fresh folder, start there, read the same records);
 *  - on PostgreSQL (TEST_DB=postgres): pg_dump and pg_restore into a new database, and
 *    two API processes on one database agreeing on claims and balances.
 */
// Two server starts a test, one after the other, and the work between them.
vi.setConfig({ testTimeout: 3 * PROCESS_START_MS });
const exec = promisify(execFile);
const onPostgres = inject('testDb') === 'postgres';

const json = async (caller: Caller, url: string) => {
  const response = await caller.request('GET', url);
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return response.json();
};

/** Records of every kind a restore must bring back, and how to read them again. */
async function populate(admin: Caller, employee: Caller) {
  await setTimeTracking(admin, true, 'Europe/Berlin');
  const assignment = await assignedShift(admin, employee);
  await created(admin, '/api/v1/time-tracking/entries', {
    shift_assignment_id: assignment,
    started_at: '2030-07-02T10:00:00Z',
    ended_at: '2030-07-02T15:30:00Z',
  });
  await created(admin, '/api/v1/time-tracking/payouts', {
    user_id: employee.userId,
    minutes: 30,
    note: 'June',
  });
}

const snapshot = async (admin: Caller, employee: Caller) => ({
  settings: await json(admin, '/api/v1/tenant/settings'),
  roles: await json(admin, '/api/v1/roles'),
  events: await json(admin, '/api/v1/events'),
  shifts: await json(admin, '/api/v1/shifts'),
  balance: await json(admin, `/api/v1/time-tracking/balance/${employee.userId}`),
  ledger: await json(admin, `/api/v1/time-tracking/ledger/${employee.userId}`),
  payouts: await json(admin, `/api/v1/time-tracking/payouts/${employee.userId}`),
});

/** Times the steps of a runbook and prints them, one line each (docs/operations.md records them). */
function stepTimer(runbook: string) {
  const times: [string, number][] = [];
  return {
    async time<T>(step: string, work: () => Promise<T>): Promise<T> {
      const started = performance.now();
      const result = await work();
      times.push([step, performance.now() - started]);
      return result;
    },
    print() {
      const lines = times.map(([step, ms]) => `  ${step}: ${(ms / 1000).toFixed(2)} s`);
      console.log(`runbook steps, ${runbook}:\n${lines.join('\n')}`);
    },
  };
}

describe('backup and restore of the embedded database', runsIf(!onPostgres, EMBEDDED_ONLY), () => {
  it('archives the stopped data folder, unpacks it into a fresh folder and reads the same records', async () => {
    const keys = await createTestKeys();
    const dir = mkdtempSync(path.join(tmpdir(), 'backup-'));
    const original = path.join(dir, 'data');
    let api = await startApi(keys, { DATA_DIR: original });
    const tenant = uniqueName('tenant');
    const admin = await httpCaller(keys, () => api, tenant, 'admin', 'admin-1');
    const employee = await httpCaller(keys, () => api, tenant, 'employee', 'employee-1');
    await populate(admin, employee);
    const before = await snapshot(admin, employee);
    expect(before.balance.balance_minutes).toBe(60);

    // The runbook: stop the service, archive the folder, start it again.
    const steps = stepTimer('embedded database');
    expect(await steps.time('stop the scheduler', () => api.stop())).toBe(0);
    const archive = path.join(dir, 'scheduler-backup.tar.gz');
    await steps.time('tar the data folder', () =>
      exec('tar', ['--create', '--gzip', '--file', archive, '--directory', original, '.']),
    );

    const restored = path.join(dir, 'restored');
    mkdirSync(restored);
    await steps.time('recovery: unpack into a new folder', () =>
      exec('tar', ['--extract', '--gzip', '--file', archive, '--directory', restored]),
    );
    api = await steps.time('recovery: start on it until /health answers', () =>
      startApi(keys, { DATA_DIR: restored }),
    );
    expect(await snapshot(admin, employee)).toEqual(before);
    steps.print();
    expect(await api.stop()).toBe(0);
  });
});

describe('PostgreSQL operations', runsIf(onPostgres, NEEDS_POSTGRES), () => {
  const databases: TestDatabase[] = [];
  afterEach(async () => {
    for (const db of databases.splice(0)) await db.dispose();
  });

  it('pg_dump and pg_restore into a new database bring back the same records', async () => {
    const keys = await createTestKeys();
    const db = await openTestDatabase();
    databases.push(db);
    let api = await startApi(keys, { DATABASE_URL: db.url as string });
    const tenant = uniqueName('tenant');
    const admin = await httpCaller(keys, () => api, tenant, 'admin', 'admin-1');
    const employee = await httpCaller(keys, () => api, tenant, 'employee', 'employee-1');
    await populate(admin, employee);
    const before = await snapshot(admin, employee);

    const bin = findPgBinDir() as string;
    const dump = path.join(mkdtempSync(path.join(tmpdir(), 'pgdump-')), 'scheduler.dump');
    // While the API runs: pg_dump reads one consistent snapshot.
    await exec(path.join(bin, 'pg_dump'), ['--format=custom', `--file=${dump}`, db.url as string]);
    expect(await api.stop()).toBe(0);

    const target = new URL(db.url as string);
    const name = `${target.pathname.slice(1)}_restored`;
    const admin_ = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin_.connect();
    await admin_.query(`CREATE DATABASE ${name}`);
    await admin_.end();
    target.pathname = `/${name}`;
    try {
      await exec(path.join(bin, 'pg_restore'), ['--no-owner', '--exit-on-error', `--dbname=${target}`, dump]);
      api = await startApi(keys, { DATABASE_URL: target.toString() });
      expect(await snapshot(admin, employee)).toEqual(before);
      expect(await api.stop()).toBe(0);
    } finally {
      const cleanup = new pg.Client({ connectionString: inject('pgAdminUrl') });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    }
  });

  it('restores into a new cluster: roles first, then the dump with its owners, grants and tenant wall', async () => {
    const keys = await createTestKeys();
    const db = await openTestDatabase();
    databases.push(db);
    let api = await startApi(keys, { DATABASE_URL: db.url as string });
    const tenant = uniqueName('tenant');
    const admin = await httpCaller(keys, () => api, tenant, 'admin', 'admin-1');
    const employee = await httpCaller(keys, () => api, tenant, 'employee', 'employee-1');
    await populate(admin, employee);
    const before = await snapshot(admin, employee);

    // The backup, while the API runs: the cluster's roles and the database.
    const bin = findPgBinDir() as string;
    const dir = mkdtempSync(path.join(tmpdir(), 'pgbackup-'));
    const steps = stepTimer('PostgreSQL, into a new cluster');
    await steps.time('pg_dumpall --roles-only', () =>
      exec(path.join(bin, 'pg_dumpall'), [
        '--roles-only',
        `--file=${path.join(dir, 'roles.sql')}`,
        `--dbname=${inject('pgAdminUrl')}`,
      ]),
    );
    await steps.time('pg_dump --format=custom', () =>
      exec(path.join(bin, 'pg_dump'), [
        '--format=custom',
        `--file=${path.join(dir, 'scheduler.dump')}`,
        db.url as string,
      ]),
    );
    expect(await api.stop()).toBe(0);

    // The recovery, on a cluster that has never seen the scheduler.
    const cluster = await startPgCluster();
    try {
      const superuser = new URL(cluster.url);
      await steps.time('recovery: psql -f roles.sql', () =>
        exec(path.join(bin, 'psql'), [
          '--quiet',
          `--file=${path.join(dir, 'roles.sql')}`,
          superuser.toString(),
        ]),
      );
      await steps.time('recovery: createdb', () =>
        exec(path.join(bin, 'createdb'), [`--maintenance-db=${superuser}`, 'scheduler']),
      );
      const owner = new URL(superuser);
      owner.pathname = '/scheduler';
      await steps.time('recovery: pg_restore', () =>
        exec(path.join(bin, 'pg_restore'), [
          '--exit-on-error',
          `--dbname=${owner}`,
          path.join(dir, 'scheduler.dump'),
        ]),
      );
      const app = new URL(owner);
      app.username = testAppLogin;
      // The server refuses to start unless its login is held by the tenant wall
      // (checkApplicationRole): a member of scheduler_app, no owner, no bypass.
      api = await steps.time('recovery: start until /health answers', () =>
        startApi(keys, { DATABASE_URL: app.toString(), DATABASE_OWNER_URL: owner.toString() }),
      );
      expect(await snapshot(admin, employee)).toEqual(before);
      steps.print();
      expect(await api.stop()).toBe(0);
      // The wall came back with the rows: the application's login, told no tenant, sees none.
      const client = new pg.Client({ connectionString: app.toString() });
      await client.connect();
      try {
        const shifts = await client.query('SELECT count(*)::int AS n FROM shifts');
        expect(shifts.rows[0].n).toBe(0);
        const unwalled = await client.query(
          `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind = 'r' AND NOT c.relrowsecurity
              AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id')`,
        );
        expect(unwalled.rows).toEqual([]);
      } finally {
        await client.end();
      }
    } finally {
      cluster.stop();
    }
  });

  it('two API processes on one database agree on claims and balances', async () => {
    const keys = await createTestKeys();
    const db = await openTestDatabase();
    databases.push(db);
    const env = { DATABASE_URL: db.url as string, DATABASE_POOL_SIZE: '10' };
    const apis = [await startApi(keys, env), await startApi(keys, env)] as [Api, Api];
    const tenant = uniqueName('tenant');
    const on = (i: number) => () => apis[i % 2] as Api;
    const admin = await httpCaller(keys, on(0), tenant, 'admin', 'admin-1');
    const adminThere = await httpCaller(keys, on(1), tenant, 'admin', 'admin-1');

    // 30 employees, half of them talking to each process, race for one slot of 4.
    const role = await newRole(admin, 'Medic');
    const employees = await Promise.all(
      Array.from({ length: 30 }, (_, i) => httpCaller(keys, on(i), tenant, 'employee', `employee-${i}`)),
    );
    for (const employee of employees) await qualify(admin, employee, role);
    const event = await newEvent(admin);
    const shift = await newShift(admin, event, { roleId: role, capacities: [4] });
    const claims = await Promise.all(
      employees.map((e) => e.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`)),
    );
    const statuses = claims.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(4);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 409)).toBe(true);
    const assignmentsHere = await json(admin, `/api/v1/shifts/${shift.id}/assignments`);
    const assignmentsThere = await json(adminThere, `/api/v1/shifts/${shift.id}/assignments`);
    expect(assignmentsHere).toHaveLength(4);
    expect(assignmentsThere).toEqual(assignmentsHere);

    // Overtime credited on one process, 12 payouts of 25 minutes against 120 minutes
    // raced over both: exactly 4 pass, the balance never goes below zero, both agree.
    await setTimeTracking(admin, true);
    // One who lost the race: the winners are busy at that time already.
    const worker = employees[statuses.indexOf(409)] as Caller;
    const assignment = await assignedShift(admin, worker);
    await created(admin, '/api/v1/time-tracking/entries', {
      shift_assignment_id: assignment,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T16:00:00Z',
    });
    const payouts = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? adminThere : admin).request('POST', '/api/v1/time-tracking/payouts', {
          user_id: worker.userId,
          minutes: 25,
        }),
      ),
    );
    const paid = payouts.filter((r) => r.statusCode === 201);
    expect(paid).toHaveLength(4);
    expect(payouts.filter((r) => r.statusCode !== 201).map((r) => r.json().error.code)).toEqual(
      Array(8).fill('INSUFFICIENT_BALANCE'),
    );
    const balance = `/api/v1/time-tracking/balance/${worker.userId}`;
    expect((await json(admin, balance)).balance_minutes).toBe(20);
    expect(await json(adminThere, balance)).toEqual(await json(admin, balance));
    expect(await ledgerMismatches(db.owner)).toEqual([]);
    for (const api of apis) expect(await api.stop()).toBe(0);
  });
});
