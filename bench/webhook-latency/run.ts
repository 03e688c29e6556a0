/**
 * bench/webhook-latency: how long a webhook delivery takes from its change's commit to
 * the receiver, on PostgreSQL with two API processes sharing the job queue. Bursts of 4
 * changes (4 shifts published at once) of one tenant with 2 webhooks subscribed: 8
 * deliveries a burst, each hook's in commit order. Four arms in the same run, burst by
 * burst in turn:
 *
 * - both processes serve requests and work jobs, the changes split between them; workers
 *   woken by LISTEN/NOTIFY (as shipped), or polling only (`WAKEUPS=off`: every 0.5 s, the
 *   fallback; the baseline);
 * - one process serves the requests and works no jobs (`JOB_CONCURRENCY=0`), the other
 *   works them: every delivery crosses processes; LISTEN, or polling only.
 *
 * Method: a change's time is when its response arrived (the commit happened before it,
 * so the figure is at most one local round trip short); a delivery's is when the local
 * receiver read its body. Commit-to-receipt is the difference, per delivery.
 *
 *   npm run bench:webhook-latency            (BURSTS=40 per arm; TENANTS=5)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { apiClient, median, startServer, stopServer } from '../support/harness.ts';
import { canonicalId, createSigner, serverEnv } from '../support/setup.ts';

const bursts = Number(process.env.BURSTS ?? 40);
const tenantCount = Number(process.env.TENANTS ?? 5);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
};

/** When each delivery arrived, by the published shift's id and the hook's path. */
const arrivals = new Map<string, number>();
let waiting: { key: string; resolve: () => void }[] = [];
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const at = performance.now();
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { data: { id: string } };
    const key = `${request.url}:${body.data.id}`;
    if (!arrivals.has(key)) arrivals.set(key, at);
    response.writeHead(204).end();
    waiting = waiting.filter((w) => {
      if (!arrivals.has(w.key)) return true;
      w.resolve();
      return false;
    });
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverHost = `127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const arrived = (key: string) =>
  arrivals.has(key) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ key, resolve }));

const cluster = await startPgCluster();
const servers: Awaited<ReturnType<typeof startServer>>[] = [];
try {
  // One database per arm, cloned from one migrated template: each arm's workers see only
  // its own queue (a worker of another arm would otherwise take its jobs).
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('CREATE DATABASE webhook_template');
  const urlOf = (name: string) => {
    const url = new URL(cluster.url);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const handle = await openDatabase({ url: urlOf('webhook_template'), poolSize: 2 });
  await migrateToLatest(handle.owner);
  await handle.close();
  const signer = await createSigner();
  let databases = 0;
  const envFor = async (extra: Record<string, string> = {}) => {
    const name = `webhook_arm_${databases++}`;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE webhook_template`);
    return { ...serverEnv(urlOf(name), signer), OUTBOUND_ALLOWED_HOSTS: receiverHost, ...extra };
  };
  /** Two processes on a database of their own. */
  const pair = async (first: Record<string, string>, second: Record<string, string>) => {
    const env = await envFor();
    return [await startServer('app', { ...env, ...first }), await startServer('app', { ...env, ...second })];
  };
  const requestsOnly = { JOB_CONCURRENCY: '0' };
  const polling = { WAKEUPS: 'off' };
  const arms = {
    'both, LISTEN': await pair({}, {}),
    'both, polling': await pair(polling, polling),
    'across, LISTEN': await pair(requestsOnly, {}),
    'across, polling': await pair({ ...requestsOnly, ...polling }, polling),
  };
  type Arm = keyof typeof arms;
  const armNames = Object.keys(arms) as Arm[];
  servers.push(...Object.values(arms).flat());
  /** Which of an arm's processes take the changes: both in turn, or the first only. */
  const takesChanges = (arm: Arm, i: number) => (arm.startsWith('both') ? i % 2 : 0);

  interface Tenant {
    admin: string;
    hooks: string[];
    shifts: string[];
  }
  /** A tenant with 2 hooks and drafts enough for its bursts, made through `base`. */
  async function tenant(base: string): Promise<Tenant> {
    const { must } = apiClient(base);
    const admin = await signer.sign({
      tenant: canonicalId().claim,
      subject: canonicalId().claim,
      role: 'admin',
    });
    const hooks: string[] = [];
    for (let i = 0; i < 2; i++) {
      const path = `/${canonicalId().id}`;
      await must('POST', '/api/v1/webhooks', admin, {
        url: `http://${receiverHost}${path}`,
        events: ['shift.published'],
      });
      hooks.push(path);
    }
    const event = await must('POST', '/api/v1/events', admin, {
      name: 'Season',
      starts_at: '2031-01-01T00:00:00Z',
      ends_at: '2031-12-31T00:00:00Z',
    });
    const shifts: string[] = [];
    const needed = Math.ceil((bursts * 4) / tenantCount) + 4;
    for (let i = 0; i < needed; i++) {
      const start = new Date(Date.UTC(2031, 0, 1) + i * 6 * 3_600_000);
      const shift = await must('POST', '/api/v1/shifts', admin, {
        event_id: event.id,
        name: `Shift ${i}`,
        starts_at: start.toISOString(),
        ends_at: new Date(start.getTime() + 3_600_000).toISOString(),
        slots: [],
      });
      shifts.push(shift.id);
    }
    return { admin, hooks, shifts };
  }

  const base = (server: { port: number }) => `http://127.0.0.1:${server.port}`;
  const tenants = Object.fromEntries(
    await Promise.all(
      armNames.map(
        async (arm) =>
          [
            arm,
            await Promise.all(Array.from({ length: tenantCount }, () => tenant(base(arms[arm][0] as never)))),
          ] as const,
      ),
    ),
  ) as Record<Arm, Tenant[]>;
  const latencies = Object.fromEntries(armNames.map((arm) => [arm, [] as number[]])) as Record<Arm, number[]>;

  /** One burst: 4 shifts of one tenant published at once. */
  async function burst(arm: Arm, round: number): Promise<void> {
    const t = tenants[arm][round % tenantCount] as Tenant;
    const shifts = t.shifts.splice(0, 4);
    const committed = await Promise.all(
      shifts.map(async (shift, i) => {
        const { must } = apiClient(base(arms[arm][takesChanges(arm, i)] as never));
        await must('POST', `/api/v1/shifts/${shift}/publish`, t.admin);
        return { shift, at: performance.now() };
      }),
    );
    await Promise.all(
      committed.flatMap(({ shift, at }) =>
        t.hooks.map(async (hook) => {
          await arrived(`${hook}:${shift}`);
          latencies[arm].push((arrivals.get(`${hook}:${shift}`) as number) - at);
        }),
      ),
    );
  }

  for (let round = 0; round < bursts; round++) {
    for (const arm of armNames) await burst(arm, round);
  }

  const row = (label: string, values: number[]) =>
    `| ${label} | ${values.length} | ${median(values).toFixed(1)} | ${percentile(values, 95).toFixed(1)} | ${percentile(values, 99).toFixed(1)} | ${Math.max(...values).toFixed(1)} |`;
  console.log(
    `\nwebhook commit-to-receipt, PostgreSQL, two API processes, ${bursts} bursts of 4 changes x 2 hooks per arm (${tenantCount} tenants)`,
  );
  console.log('| processes, workers woken by | deliveries | median ms | p95 ms | p99 ms | longest ms |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const arm of armNames) console.log(row(arm, latencies[arm]));
  const p99 = (arm: Arm) => percentile(latencies[arm], 99);
  console.log(
    `\np99 with LISTEN / polling: both working ${(p99('both, LISTEN') / p99('both, polling')).toFixed(2)}, across processes ${(p99('across, LISTEN') / p99('across, polling')).toFixed(2)}; worst LISTEN p99 ${Math.max(p99('both, LISTEN'), p99('across, LISTEN')).toFixed(0)} ms (target: under 2000 ms)`,
  );
  await admin.end();
} finally {
  for (const server of servers) await stopServer(server);
  receiver.close();
  cluster.stop();
}
