/**
 * bench/scheduler-metrics: what recording metrics costs. The read of bench/scheduler-read
 * (GET /api/v1/roles, 50 roles, a valid RS256 token, 32 connections) on a throwaway
 * PostgreSQL 15 cluster, by the scheduler without METRICS_TOKEN (nothing recorded) and
 * with it, scraped once a second meanwhile (each scrape reads the pool and the job queue),
 * in paired rounds; the median ratio of their throughputs is the figure. Each scrape is
 * checked to count the requests of its run under the route template. First, in this
 * process, what recording one request costs (SchedulerMetrics.request over 40 route
 * templates) and what one scrape of the result takes: figures a loaded machine blurs
 * less than the paired rounds.
 *
 *   npm run bench:scheduler-metrics     (DURATION=10 CONNECTIONS=32 ROUNDS=5 POOL_SIZE=10 to change)
 */
import autocannon from 'autocannon';
import { SchedulerMetrics } from '../../scheduler/src/metrics/registry.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { cpuSeconds, median as medianOf, startServer, stopServer } from '../support/harness.ts';
import { canonicalId, createSigner, openRolesDatabase, serverEnv, settingsLine } from '../support/setup.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 32);
const rounds = Number(process.env.ROUNDS ?? 5);
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

interface Figures {
  rps: number;
  p99: number;
  /** Server CPU time (user + system) per request, in microseconds. */
  cpuMicros: number;
  scrapes: number;
  /** The longest scrape, in milliseconds. */
  scrapeMs: number;
}

async function scrape(port: number): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}: ${text}`);
  return { text, ms: performance.now() - started };
}

/** The requests of /api/v1/roles answered 200, as a scrape counts them. */
function rolesCounted(text: string): number {
  const line = text
    .split('\n')
    .find((l) =>
      l.startsWith('scheduler_http_requests_total{method="GET",route="/api/v1/roles",status="200"}'),
    );
  return Number(line?.split(' ').at(-1) ?? 0);
}

async function measure(metrics: boolean, env: NodeJS.ProcessEnv, token: string): Promise<Figures> {
  const server = await startServer('app', metrics ? { ...env, METRICS_TOKEN } : env);
  const { port, child } = server;
  const url = `http://127.0.0.1:${port}/api/v1/roles`;
  const headers = { authorization: `Bearer ${token}` };
  try {
    const roles = (await (await fetch(url, { headers })).json()) as unknown[];
    if (roles.length !== 50) throw new Error(`answered ${roles.length} roles, not 50`);
    // Warm-up: JIT, pool connections, provisioning memo.
    await autocannon({ url, connections, duration: 2, headers });
    const before = metrics ? rolesCounted((await scrape(port)).text) : 0;
    const cpuBefore = cpuSeconds(child.pid);
    let scrapes = 0;
    let scrapeMs = 0;
    let loading = true;
    // A scraper once a second while the load runs (Prometheus scrapes every 15 s by default).
    const scraper = (async () => {
      while (metrics && loading) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        if (!loading) break;
        const { ms } = await scrape(port);
        scrapes++;
        scrapeMs = Math.max(scrapeMs, ms);
      }
    })();
    const result = await autocannon({ url, connections, duration, headers });
    loading = false;
    await scraper;
    const cpuMicros = ((cpuSeconds(child.pid) - cpuBefore) * 1e6) / result.requests.total;
    if (result.errors || result.non2xx) throw new Error(`${result.errors} errors, ${result.non2xx} non-2xx`);
    if (metrics) {
      const counted = rolesCounted((await scrape(port)).text) - before;
      // autocannon's total leaves out requests still in flight when its time ran out.
      if (counted < result.requests.total) {
        throw new Error(`/metrics counted ${counted} reads, autocannon ${result.requests.total}`);
      }
    }
    return { rps: result.requests.average, p99: result.latency.p99, cpuMicros, scrapes, scrapeMs };
  } finally {
    await stopServer(server);
  }
}

/** Microseconds one recorded request costs, and milliseconds one scrape of 40 routes takes; medians of 5. */
async function recordingCost(): Promise<{ recordMicros: number; scrapeMs: number }> {
  const metrics = new SchedulerMetrics({ workerRunning: () => true });
  const routes = Array.from({ length: 40 }, (_, i) => `/api/v1/route${i}/:id`);
  const records: number[] = [];
  const scrapes: number[] = [];
  for (let run = 0; run < 5; run++) {
    const count = 200_000;
    const started = performance.now();
    for (let i = 0; i < count; i++) metrics.request('GET', routes[i % routes.length] ?? '', 200, 0.012);
    records.push(((performance.now() - started) * 1000) / count);
    const scraped = performance.now();
    await metrics.scrape();
    scrapes.push(performance.now() - scraped);
  }
  return { recordMicros: medianOf(records), scrapeMs: medianOf(scrapes) };
}

const cost = await recordingCost();
const cluster = await startPgCluster();
try {
  const tenant = canonicalId();
  const handle = await openRolesDatabase(cluster.url, tenant.id);
  await handle.close();
  const signer = await createSigner();
  const token = await signer.sign({ tenant: tenant.claim, subject: 'bench-admin', role: 'admin' });
  const env = serverEnv(cluster.url, signer);

  // Rounds interleave the two, so both see the same machine state.
  const rows: { round: number; off: Figures; on: Figures }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const off = await measure(false, env, token);
    const on = await measure(true, env, token);
    rows.push({ round, off, on });
  }
  const median = medianOf(rows.map((r) => r.on.rps / r.off.rps));
  console.log(
    `\nGET /api/v1/roles, 50 roles, ${connections} connections, ${duration} s per run, ${rounds} rounds; ${settingsLine()}`,
  );
  console.log(
    '| round | off req/s | off p99 ms | off CPU µs/req | on req/s | on p99 ms | on CPU µs/req | scrapes | longest scrape ms | ratio |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { round, off, on } of rows) {
    console.log(
      `| ${round} | ${off.rps.toFixed(0)} | ${off.p99} | ${off.cpuMicros.toFixed(0)} | ${on.rps.toFixed(0)} | ${on.p99} | ${on.cpuMicros.toFixed(0)} | ${on.scrapes} | ${on.scrapeMs.toFixed(1)} | ${(on.rps / off.rps).toFixed(2)} |`,
    );
  }
  console.log(
    `\nthroughput ratio metrics on/off, median of ${rounds} paired rounds: ${median.toFixed(2)} (target >= 0.95)`,
  );
  console.log(
    `recording one request: ${cost.recordMicros.toFixed(2)} µs; one scrape of 40 routes: ${cost.scrapeMs.toFixed(1)} ms (in process, medians of 5)`,
  );
} finally {
  cluster.stop();
}
