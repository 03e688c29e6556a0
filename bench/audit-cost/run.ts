/**
 * bench/audit-cost: what the audit log's trigger (migration 0015) costs on the claim
 * path. The claim storm of bench/scheduler-claims (1,000 employees, 100 slots of
 * capacity 5, 5,000 claims over 64 connections, throwaway PostgreSQL 15) against the
 * scheduler twice per round: once as it ships, once with the audit triggers of the tables
 * a claim writes (shift_assignments, shift_slots) disabled by the owner. Everything else
 * is the same, the actor's set_config included, so the ratio is the trigger's alone.
 * After each storm the run proves that no slot holds more than its capacity and, with the
 * trigger on, that every seat has exactly one `assignment.claimed` entry.
 *
 *   npm run bench:audit-cost     (CONNECTIONS=64 ROUNDS=5 POOL_SIZE=10 to change)
 */
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { cpuSeconds, median, startServer, stopServer } from '../support/harness.ts';
import {
  applyWallSetting,
  canonicalId,
  createSigner,
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
  await db
    .insertInto('users')
    .values(staff.map((user) => ({ tenant_id: tenant.id, id: user.id, role: 'employee' as const })))
    .execute();
  await db
    .insertInto('user_qualifications')
    .values(staff.map((user) => ({ tenant_id: tenant.id, user_id: user.id, role_id: role })))
    .execute();
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

  async function measure(audit: boolean, seed: number): Promise<Storm> {
    await setAudit(audit);
    const server = await startServer('app', env);
    try {
      // Warm-up: every employee once (JIT, pool, the scheduler's provisioning memo).
      await emptySchedule();
      await storm(server.port, server.child.pid, employees, seed + 1);
      await emptySchedule();
      const figures = await storm(server.port, server.child.pid, employees * claimsPerEmployee, seed);
      const held = await checkSchedule();
      if (held !== figures.created)
        throw new Error(`${figures.created} claims answered 201 but ${held} seats exist`);
      if (audit) await checkAudit(held);
      return figures;
    } finally {
      await stopServer(server);
      await setAudit(true);
    }
  }

  const rows: { round: number; off: Storm; on: Storm }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const seed = 1000 + round;
    // Alternate who goes first, so neither always meets the table as the other left it.
    const onFirst = round % 2 === 0;
    const on0 = onFirst ? await measure(true, seed) : undefined;
    const off = await measure(false, seed);
    const on = on0 ?? (await measure(true, seed));
    rows.push({ round, off, on });
  }
  await handle.close();

  console.log(
    `\naudit cost on the claim storm: ${employees} employees, ${slotCount} slots of capacity ${capacity}, ${employees * claimsPerEmployee} claims, ${connections} connections, ${rounds} rounds; ${settingsLine()}`,
  );
  console.log(
    '| round | without audit claims/s | p99 ms | CPU µs/claim | with audit claims/s | p99 ms | CPU µs/claim | seats (both) | ratio |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { round, off, on } of rows) {
    console.log(
      `| ${round} | ${off.rps.toFixed(0)} | ${off.p99} | ${off.cpuMicros.toFixed(0)} | ${on.rps.toFixed(0)} | ${on.p99} | ${on.cpuMicros.toFixed(0)} | ${off.created} / ${on.created} | ${(on.rps / off.rps).toFixed(2)} |`,
    );
  }
  const ratio = median(rows.map((r) => r.on.rps / r.off.rps));
  console.log(
    `\nno slot above capacity after every storm; one assignment.claimed entry per seat with the trigger on\nthroughput ratio with/without the audit trigger, median of ${rounds} paired rounds: ${ratio.toFixed(2)}`,
  );
} finally {
  cluster.stop();
}
