/**
 * bench/scheduler-claims: a claim storm. 1,000 employees claim seats in 100 slots of
 * capacity 5 (one slot per shift, shifts on different days) over 64 connections, on a
 * throwaway PostgreSQL 15 cluster, against a floor measured in the same run: a bare
 * Fastify route that verifies the same JWT with jose and takes the seat with one
 * conditional INSERT ... SELECT (the database's constraints refuse the rest). Every storm
 * is the same 5,000 requests (each employee five claims on seeded random slots) on an
 * emptied schedule; after each, the run proves that no slot holds more than its capacity
 * and that every filled_count equals the assignments that exist. A third arm per round is
 * the scheduler with the audit log's triggers on the tables a claim writes
 * (shift_assignments, shift_slots) disabled by the owner (migration 0015): the ratio of
 * the two scheduler arms is what recording claims costs; with the triggers on, every seat
 * must have exactly one `assignment.claimed` entry, by its holder.
 *
 *   npm run bench:scheduler-claims     (CONNECTIONS=64 ROUNDS=5 POOL_SIZE=10 to change)
 *
 * POOLER=pgbouncer: the audited scheduler also through PgBouncer in transaction mode, each
 * round, both with a login of its own (support/pooler.ts); the last line is pooled/direct.
 */
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { cpuSeconds, median, startServer, stopServer } from '../support/harness.ts';
import { benchPooler } from '../support/pooler.ts';
import {
  applyWallSetting,
  canonicalId,
  createSigner,
  insertRows,
  insertTenant,
  serverEnv,
  settingsLine,
} from '../support/setup.ts';

const connections = Number(process.env.CONNECTIONS ?? 64);
const rounds = Number(process.env.ROUNDS ?? 5);
const employees = 1000;
const slotCount = 100;
const capacity = 5;
const claimsPerEmployee = 5;

interface Storm {
  rps: number;
  p99: number;
  created: number;
  refused: number;
  cpuMicros: number;
}

/** A seeded generator, so both servers face the same sequence of claims. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const cluster = await startPgCluster();
let pooler: Awaited<ReturnType<typeof benchPooler>> = null;
try {
  const handle = await openDatabase({ url: cluster.url, poolSize: 4 });
  const db = handle.owner;
  await migrateToLatest(db);
  await applyWallSetting(db);
  const tenant = canonicalId();
  await insertTenant(db, tenant.id);
  const role = canonicalId().id;
  await db.insertInto('roles').values({ tenant_id: tenant.id, id: role, name: 'Steward' }).execute();
  const staff = Array.from({ length: employees }, () => canonicalId());
  await insertRows(
    db,
    'users',
    staff.map((user) => ({ tenant_id: tenant.id, id: user.id, role: 'employee' as const })),
  );
  await insertRows(
    db,
    'user_qualifications',
    staff.map((user) => ({ tenant_id: tenant.id, user_id: user.id, role_id: role })),
  );
  const event = canonicalId().id;
  await db
    .insertInto('events')
    .values({
      tenant_id: tenant.id,
      id: event,
      name: 'Season',
      starts_at: '2031-01-01T00:00:00Z',
      ends_at: '2031-06-01T00:00:00Z',
      published_at: new Date().toISOString(),
    })
    .execute();
  const slots: { shift: string; slot: string }[] = [];
  for (let day = 0; day < slotCount; day++) {
    const shift = canonicalId().id;
    const slot = canonicalId().id;
    const start = new Date(Date.UTC(2031, 0, 1 + day, 9));
    await db
      .insertInto('shifts')
      .values({
        tenant_id: tenant.id,
        id: shift,
        event_id: event,
        name: `Day ${day + 1}`,
        starts_at: start.toISOString(),
        ends_at: new Date(start.getTime() + 8 * 3600_000).toISOString(),
        published_at: new Date().toISOString(),
      })
      .execute();
    await db
      .insertInto('shift_slots')
      .values({ tenant_id: tenant.id, id: slot, shift_id: shift, role_id: role, capacity })
      .execute();
    slots.push({ shift, slot });
  }

  const signer = await createSigner();
  const tokens = await Promise.all(
    staff.map((user) => signer.sign({ tenant: tenant.claim, subject: user.claim, role: 'employee' })),
  );
  const env = serverEnv(cluster.url, signer);
  pooler = await benchPooler(cluster.url, db);

  // The owner may empty the log: the application's role never can.
  const emptySchedule = async () => {
    await db.deleteFrom('shift_assignments').where('tenant_id', '=', tenant.id).execute();
    await sql`TRUNCATE audit_log`.execute(db);
  };

  async function setAudit(on: boolean): Promise<void> {
    for (const table of ['shift_assignments', 'shift_slots']) {
      await sql.raw(`ALTER TABLE ${table} ${on ? 'ENABLE' : 'DISABLE'} TRIGGER audit`).execute(db);
    }
  }

  /** With the trigger on: one `assignment.claimed` entry per seat, by its employee. */
  async function checkAudit(seats: number): Promise<void> {
    const row = await sql<{ claimed: number; actors: number }>`
      SELECT count(*)::int AS claimed,
             count(*) FILTER (WHERE l.actor_user_id = a.user_id)::int AS actors
        FROM audit_log l JOIN shift_assignments a ON a.tenant_id = l.tenant_id AND a.id = l.target_id
       WHERE l.tenant_id = ${tenant.id} AND l.action = 'assignment.claimed'`.execute(db);
    const { claimed, actors } = row.rows[0] ?? { claimed: -1, actors: -1 };
    if (claimed !== seats || actors !== seats) {
      throw new Error(
        `audit log: ${claimed} claimed entries (${actors} by the seat's holder) for ${seats} seats`,
      );
    }
  }

  /** No slot above capacity; every filled_count equal to the assignments that exist. */
  async function checkSchedule(): Promise<number> {
    const row = await sql<{ over: number; drift: number; held: number }>`
      SELECT
        (SELECT count(*) FROM shift_slots WHERE tenant_id = ${tenant.id} AND filled_count > capacity)::int AS over,
        (SELECT count(*) FROM shift_slots s WHERE tenant_id = ${tenant.id} AND filled_count <>
           (SELECT count(*) FROM shift_assignments a WHERE a.tenant_id = s.tenant_id AND a.slot_id = s.id))::int AS drift,
        (SELECT count(*) FROM shift_assignments WHERE tenant_id = ${tenant.id})::int AS held`.execute(db);
    const { over, drift, held } = row.rows[0] ?? { over: -1, drift: -1, held: -1 };
    if (over !== 0 || drift !== 0 || held > slotCount * capacity) {
      throw new Error(`schedule broken: ${over} slots over capacity, ${drift} counters off, ${held} seats`);
    }
    return held;
  }

  async function storm(port: number, pid: number | undefined, count: number, seed: number): Promise<Storm> {
    const next = sequence(seed);
    let sent = 0;
    const cpuBefore = cpuSeconds(pid);
    const started = performance.now();
    let finished = started;
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: `http://127.0.0.1:${port}`,
          connections,
          amount: count,
          requests: [
            {
              method: 'POST',
              setupRequest: (request) => {
                const who = sent % employees;
                sent += 1;
                const target = slots[Math.floor(next() * slotCount)] ?? slots[0];
                return {
                  ...request,
                  path: `/api/v1/shifts/${target?.shift}/slots/${target?.slot}/claim`,
                  headers: { authorization: `Bearer ${tokens[who]}` },
                };
              },
            },
          ],
        },
        (error, done) => (error ? reject(error) : resolve(done)),
      );
      // The storm ends with its last answer; autocannon itself settles on its next tick.
      instance.on('response', () => {
        finished = performance.now();
      });
    });
    // autocannon reports whole seconds, and a storm lasts a few: time it here.
    const seconds = (finished - started) / 1000;
    const cpu = cpuSeconds(pid) - cpuBefore;
    if (result.errors || result['5xx'] || result['2xx'] + result['4xx'] !== count) {
      throw new Error(`storm: ${result.errors} errors, ${result['5xx']} 5xx of ${count}`);
    }
    return {
      rps: count / seconds,
      p99: result.latency.p99,
      created: result['2xx'],
      refused: result['4xx'],
      cpuMicros: (cpu * 1e6) / count,
    };
  }

  async function measure(
    mode: 'app' | 'floor-claim',
    seed: number,
    audit = true,
    over: NodeJS.ProcessEnv = {},
  ): Promise<Storm> {
    await setAudit(audit);
    const server = await startServer(mode, { ...env, ...over });
    try {
      // Warm-up: every employee once (JIT, pool, the scheduler's provisioning memo).
      await emptySchedule();
      await storm(server.port, server.child.pid, employees, seed + 1);
      await emptySchedule();
      const figures = await storm(server.port, server.child.pid, employees * claimsPerEmployee, seed);
      const held = await checkSchedule();
      if (held !== figures.created)
        throw new Error(`${figures.created} claims answered 201 but ${held} seats exist`);
      if (mode === 'app' && audit) await checkAudit(held);
      return figures;
    } finally {
      await stopServer(server);
      await setAudit(true);
    }
  }

  const rows: { round: number; floor: Storm; app: Storm; unaudited: Storm; pooled?: Storm }[] = [];
  const direct = pooler?.direct ?? {};
  for (let round = 1; round <= rounds; round++) {
    const seed = 1000 + round;
    // Alternate who goes first, so neither always meets the table as the other left it.
    const appFirst = round % 2 === 0;
    const app0 = appFirst ? await measure('app', seed, true, direct) : undefined;
    const floor = await measure('floor-claim', seed);
    const app = app0 ?? (await measure('app', seed, true, direct));
    const unaudited = await measure('app', seed, false, direct);
    const pooled = pooler ? await measure('app', seed, true, pooler.pooled) : undefined;
    rows.push({ round, floor, app, unaudited, ...(pooled ? { pooled } : {}) });
  }
  await handle.close();

  console.log(
    `\nclaim storm: ${employees} employees, ${slotCount} slots of capacity ${capacity}, ${employees * claimsPerEmployee} claims, ${connections} connections, ${rounds} rounds; ${settingsLine()}`,
  );
  console.log(
    '| round | floor claims/s | floor p99 ms | floor CPU µs/claim | scheduler claims/s | scheduler p99 ms | scheduler CPU µs/claim | seats (both) | ratio | audit off claims/s | audited/off |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { round, floor, app, unaudited } of rows) {
    console.log(
      `| ${round} | ${floor.rps.toFixed(0)} | ${floor.p99} | ${floor.cpuMicros.toFixed(0)} | ${app.rps.toFixed(0)} | ${app.p99} | ${app.cpuMicros.toFixed(0)} | ${floor.created} / ${app.created} | ${(app.rps / floor.rps).toFixed(2)} | ${unaudited.rps.toFixed(0)} | ${(app.rps / unaudited.rps).toFixed(2)} |`,
    );
  }
  const ratio = median(rows.map((r) => r.app.rps / r.floor.rps));
  const auditRatio = median(rows.map((r) => r.app.rps / r.unaudited.rps));
  console.log(
    `\nno slot above capacity, every filled_count equal to its assignments, after every storm\nthroughput ratio scheduler/floor, median of ${rounds} paired rounds: ${ratio.toFixed(2)} (target >= ${process.env.WALL === 'off' ? '0.80 with the wall off' : '0.70 with the wall on'})`,
  );
  console.log(
    `one assignment.claimed entry per seat, by its holder; throughput with/without the audit triggers, median: ${auditRatio.toFixed(2)}`,
  );
  if (pooler) {
    console.log(
      '\n| round | direct claims/s | direct p99 ms | PgBouncer claims/s | PgBouncer p99 ms | PgBouncer CPU µs/claim | seats (direct / PgBouncer) | pooled/direct |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const { round, app, pooled } of rows) {
      if (!pooled) continue;
      console.log(
        `| ${round} | ${app.rps.toFixed(0)} | ${app.p99} | ${pooled.rps.toFixed(0)} | ${pooled.p99} | ${pooled.cpuMicros.toFixed(0)} | ${app.created} / ${pooled.created} | ${(pooled.rps / app.rps).toFixed(2)} |`,
      );
    }
    const pooledRatio = median(rows.map((r) => (r.pooled ? r.pooled.rps / r.app.rps : 0)));
    console.log(
      `\nthroughput ratio through PgBouncer (transaction mode, ${process.env.POOLER_SIZE ?? 10} server connections)/direct, median: ${pooledRatio.toFixed(2)}`,
    );
  }
} finally {
  await pooler?.stop();
  cluster.stop();
}
