/**
 * bench/scheduler-shifts: GET /api/v1/shifts with 2,000 shifts in the tenant (20 events,
 * every tenth shift a draft, two slots each), as an admin (every shift) and as an
 * employee (published shifts of published events), 32 connections, on a throwaway
 * PostgreSQL 15 cluster, against a floor measured in the same run: a bare Fastify route
 * that verifies the same JWT with jose and runs one SELECT with the same derived status
 * and visibility. Both servers must answer the same shifts before they are measured.
 *
 *   npm run bench:scheduler-shifts     (DURATION=10 CONNECTIONS=32 ROUNDS=3 POOL_SIZE=10 to change)
 */
import autocannon from 'autocannon';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { cpuSeconds, median, startServer, stopServer } from '../support/harness.ts';
import { canonicalId, createSigner, insertRows, insertTenant, serverEnv } from '../support/setup.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 32);
const rounds = Number(process.env.ROUNDS ?? 3);
const shiftCount = 2000;

interface Figures {
  rps: number;
  p99: number;
  cpuMicros: number;
}

const cluster = await startPgCluster();
try {
  const handle = await openDatabase({ url: cluster.url, poolSize: 4 });
  const db = handle.owner;
  await migrateToLatest(db);
  const tenant = canonicalId();
  await insertTenant(db, tenant.id);
  const admin = canonicalId();
  const employee = canonicalId();
  await db
    .insertInto('users')
    .values([
      { tenant_id: tenant.id, id: admin.id, role: 'admin' },
      { tenant_id: tenant.id, id: employee.id, role: 'employee' },
    ])
    .execute();
  const role = canonicalId().id;
  await db.insertInto('roles').values({ tenant_id: tenant.id, id: role, name: 'Steward' }).execute();
  const now = new Date().toISOString();
  const events = Array.from({ length: 20 }, () => canonicalId().id);
  await db
    .insertInto('events')
    .values(
      events.map((id, i) => ({
        tenant_id: tenant.id,
        id,
        name: `Event ${i}`,
        starts_at: '2031-01-01T00:00:00Z',
        ends_at: '2031-12-31T00:00:00Z',
        published_at: now,
      })),
    )
    .execute();
  const shifts = Array.from({ length: shiftCount }, (_, i) => {
    const start = new Date(Date.UTC(2031, 0, 1) + i * 4 * 3600_000);
    return {
      tenant_id: tenant.id,
      id: canonicalId().id,
      event_id: events[i % events.length] as string,
      name: `Shift ${i}`,
      starts_at: start.toISOString(),
      ends_at: new Date(start.getTime() + 4 * 3600_000).toISOString(),
      published_at: i % 10 === 0 ? null : now,
    };
  });
  await insertRows(db, 'shifts', shifts);
  await insertRows(
    db,
    'shift_slots',
    shifts.flatMap((shift) =>
      [3, 2].map((capacity) => ({
        tenant_id: tenant.id,
        id: canonicalId().id,
        shift_id: shift.id,
        role_id: role,
        capacity,
      })),
    ),
  );
  await handle.close();

  const signer = await createSigner();
  const env = serverEnv(cluster.url, signer);
  const callers = {
    admin: await signer.sign({ tenant: tenant.claim, subject: admin.claim, role: 'admin' }),
    employee: await signer.sign({ tenant: tenant.claim, subject: employee.claim, role: 'employee' }),
  };
  const expected = { admin: shiftCount, employee: shiftCount - shiftCount / 10 };

  async function load(port: number, token: string, seconds: number) {
    const result = await autocannon({
      url: `http://127.0.0.1:${port}/api/v1/shifts`,
      connections,
      duration: seconds,
      headers: { authorization: `Bearer ${token}` },
    });
    if (result.errors || result.non2xx) throw new Error(`${result.errors} errors, ${result.non2xx} non-2xx`);
    return result;
  }

  async function measure(mode: 'app' | 'floor-shifts', who: 'admin' | 'employee'): Promise<Figures> {
    const server = await startServer(mode, env);
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/api/v1/shifts`, {
        headers: { authorization: `Bearer ${callers[who]}` },
      });
      const listed = ((await response.json()) as { status: string }[]).map((s) => s.status);
      if (listed.length !== expected[who] || (who === 'employee' && listed.includes('draft'))) {
        throw new Error(`${mode} answered ${listed.length} shifts to the ${who}, not ${expected[who]}`);
      }
      await load(server.port, callers[who], 2);
      const cpuBefore = cpuSeconds(server.child.pid);
      const result = await load(server.port, callers[who], duration);
      const cpu = cpuSeconds(server.child.pid) - cpuBefore;
      return {
        rps: result.requests.average,
        p99: result.latency.p99,
        cpuMicros: (cpu * 1e6) / result.requests.total,
      };
    } finally {
      await stopServer(server);
    }
  }

  for (const who of ['admin', 'employee'] as const) {
    const rows: { round: number; floor: Figures; app: Figures }[] = [];
    for (let round = 1; round <= rounds; round++) {
      const floor = await measure('floor-shifts', who);
      const app = await measure('app', who);
      rows.push({ round, floor, app });
    }
    console.log(
      `\nGET /api/v1/shifts as ${who} (${expected[who]} shifts), ${connections} connections, ${duration} s per run`,
    );
    console.log(
      '| round | floor req/s | floor p99 ms | floor CPU µs/req | scheduler req/s | scheduler p99 ms | scheduler CPU µs/req | ratio |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const { round, floor, app } of rows) {
      console.log(
        `| ${round} | ${floor.rps.toFixed(1)} | ${floor.p99} | ${floor.cpuMicros.toFixed(0)} | ${app.rps.toFixed(1)} | ${app.p99} | ${app.cpuMicros.toFixed(0)} | ${(app.rps / floor.rps).toFixed(2)} |`,
      );
    }
    const ratio = median(rows.map((r) => r.app.rps / r.floor.rps));
    console.log(
      `throughput ratio scheduler/floor as ${who}, median of ${rounds} paired rounds: ${ratio.toFixed(2)} (target >= 0.80)`,
    );
  }
} finally {
  cluster.stop();
}
