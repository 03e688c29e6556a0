/**
 * bench/scheduler-bulk: POST /api/v1/events/{id}/shifts/bulk for a 366-day event (2028,
 * a leap year) with 3 slots per shift, in Europe/Berlin, on a throwaway PostgreSQL 15
 * cluster: time per call as a client sees it, against a floor measured in the same run
 * (the same 366 windows from the same time-zone code, then the same rows written by pg in
 * one transaction: two multi-row INSERTs, no HTTP, no checks). Calls alternate between
 * the two; the figure is the median of each. A third arm is the same call with the audit
 * log's triggers on shifts and slots disabled by the owner (migration 0015): what
 * recording every row costs bulk generation.
 *
 *   npm run bench:scheduler-bulk     (CALLS=10 to change)
 */
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { newId } from '../../scheduler/src/ids.ts';
import { dailyWindows } from '../../scheduler/src/time/daily-windows.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { median, startServer, stopServer } from '../support/harness.ts';
import { canonicalId, createSigner, insertTenant, serverEnv } from '../support/setup.ts';

const calls = Number(process.env.CALLS ?? 10);
const window = { starts_at: '2027-12-31T23:00:00Z', ends_at: '2028-12-31T23:00:00Z' }; // 2028 in Berlin
const timeZone = 'Europe/Berlin';

const cluster = await startPgCluster();
try {
  const handle = await openDatabase({ url: cluster.url, poolSize: 2 });
  const db = handle.owner;
  await migrateToLatest(db);
  const tenant = canonicalId();
  await insertTenant(db, tenant.id);
  await db
    .updateTable('tenant_settings')
    .set({ timezone: timeZone })
    .where('tenant_id', '=', tenant.id)
    .execute();
  const admin = canonicalId();
  await db.insertInto('users').values({ tenant_id: tenant.id, id: admin.id, role: 'admin' }).execute();
  const roles = ['Bar', 'Door', 'Stage'].map((name) => ({
    tenant_id: tenant.id,
    id: canonicalId().id,
    name,
  }));
  await db.insertInto('roles').values(roles).execute();
  const newEvent = async () => {
    const id = canonicalId().id;
    await db
      .insertInto('events')
      .values({ tenant_id: tenant.id, id, name: 'Year', ...window })
      .execute();
    return id;
  };

  const signer = await createSigner();
  const token = await signer.sign({ tenant: tenant.claim, subject: admin.claim, role: 'admin' });
  const body = JSON.stringify({
    start_time: '22:00',
    end_time: '06:00',
    slots: roles.map((role) => ({ role_id: role.id, capacity: 2 })),
  });
  const pool = new pg.Pool({ connectionString: cluster.url, max: 2 });

  async function floorCall(eventId: string): Promise<number> {
    const started = performance.now();
    const windows = dailyWindows(window.starts_at, window.ends_at, timeZone, '22:00', '06:00');
    const shifts = windows.map((w) => [newId(), w.startsAt, w.endsAt]);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at)
         SELECT $1, s.id, $2, 'Year', s.starts_at, s.ends_at
           FROM unnest($3::uuid[], $4::timestamptz[], $5::timestamptz[]) AS s(id, starts_at, ends_at)`,
        [tenant.id, eventId, shifts.map((s) => s[0]), shifts.map((s) => s[1]), shifts.map((s) => s[2])],
      );
      const slots = shifts.flatMap((s) => roles.map((role) => [newId(), s[0], role.id]));
      await client.query(
        `INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity)
         SELECT $1, s.id, s.shift_id, s.role_id, 2 FROM unnest($2::uuid[], $3::uuid[], $4::uuid[]) AS s(id, shift_id, role_id)`,
        [tenant.id, slots.map((s) => s[0]), slots.map((s) => s[1]), slots.map((s) => s[2])],
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    return performance.now() - started;
  }

  const server = await startServer('app', serverEnv(cluster.url, signer));
  async function appCall(eventId: string): Promise<number> {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${server.port}/api/v1/events/${eventId}/shifts/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    const shifts = (await response.json()) as unknown[];
    const elapsed = performance.now() - started;
    if (response.status !== 201 || shifts.length !== 366) {
      throw new Error(`bulk answered ${response.status} with ${shifts.length} shifts`);
    }
    return elapsed;
  }

  try {
    await appCall(await newEvent()); // warm-up: JIT, pool, provisioning
    await floorCall(await newEvent());
    const audit = async (on: boolean) => {
      for (const table of ['shifts', 'shift_slots']) {
        await sql.raw(`ALTER TABLE ${table} ${on ? 'ENABLE' : 'DISABLE'} TRIGGER audit`).execute(db);
      }
    };
    const times = { app: [] as number[], floor: [] as number[], unaudited: [] as number[] };
    for (let i = 0; i < calls; i++) {
      times.floor.push(await floorCall(await newEvent()));
      times.app.push(await appCall(await newEvent()));
      await audit(false);
      try {
        times.unaudited.push(await appCall(await newEvent()));
      } finally {
        await audit(true);
      }
    }
    const app = median(times.app);
    const floor = median(times.floor);
    console.log(`\nbulk generation, 366-day event in ${timeZone}, 3 slots per shift, ${calls} calls each`);
    console.log('| | median ms | min ms | max ms |');
    console.log('|---|---:|---:|---:|');
    for (const [name, list] of [
      ['floor (windows + two INSERTs)', times.floor],
      ['scheduler (HTTP POST)', times.app],
      ['scheduler, audit triggers off', times.unaudited],
    ] as const) {
      console.log(
        `| ${name} | ${median(list).toFixed(0)} | ${Math.min(...list).toFixed(0)} | ${Math.max(...list).toFixed(0)} |`,
      );
    }
    console.log(
      `\nscheduler time per call: ${app.toFixed(0)} ms (target < 1000 ms); floor/scheduler: ${(floor / app).toFixed(2)}`,
    );
    console.log(`audited/unaudited: ${(app / median(times.unaudited)).toFixed(2)}`);
  } finally {
    await stopServer(server);
    await pool.end();
    await handle.close();
  }
} finally {
  cluster.stop();
}
