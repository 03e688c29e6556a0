/**
 * bench/scheduler-tracing: what OpenTelemetry traces cost (docs/operations.md, Traces).
 * The read of bench/scheduler-metrics (GET /api/v1/roles, 50 roles, a valid RS256 token,
 * 32 connections) against the production bundle (scheduler/dist/main.mjs, as `npm start`
 * runs it) on a throwaway PostgreSQL 15 cluster, three ways:
 *   off      no OTEL_* setting: no SDK module loaded;
 *   on 1.0   OTEL_EXPORTER_OTLP_ENDPOINT set, the default sampler (every request traced:
 *            the HTTP span, Fastify's, and the pg spans of its statements);
 *   on 0.01  the same with OTEL_TRACES_SAMPLER=parentbased_traceidratio and
 *            OTEL_TRACES_SAMPLER_ARG=0.01 (one request in a hundred traced).
 * Spans go to a local OTLP/HTTP receiver in a process of its own (receiver.ts), which
 * decodes every export; the machine's cores are shared by the load generator, the server,
 * PostgreSQL and the receiver. Each run is a fresh server process; every round runs the
 * three, their order rotating from round to round, so a loaded machine's drift falls on
 * each alike. Reported per round and as medians: throughput, p95 latency and server CPU
 * per request as ratios to "off" of the same round, and the spans received per request.
 *
 *   npm run build -w scheduler && PATH=<node 22.15+>:$PATH npm run bench:scheduler-tracing
 *   (DURATION=10 CONNECTIONS=32 ROUNDS=5 to change; PROFILE_DIR=dir for CPU profiles)
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { TRACING_MIN_NODE } from '../../scheduler/src/config.ts';
import { freePort, startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { cpuSeconds, median } from '../support/harness.ts';
import { AUDIENCE, canonicalId, createSigner, ISSUER, openRolesDatabase } from '../support/setup.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 32);
const rounds = Number(process.env.ROUNDS ?? 5);
const schedulerDir = path.resolve(import.meta.dirname, '../../scheduler');

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const [minMajor, minMinor] = TRACING_MIN_NODE;
if (major < minMajor || (major === minMajor && minor < minMinor)) {
  console.error(`tracing needs Node ${minMajor}.${minMinor} or later; this is ${process.versions.node}`);
  process.exit(2);
}

type Variant = 'off' | 'on 1.0' | 'on 0.01';
const variants: Variant[] = ['off', 'on 1.0', 'on 0.01'];

interface Figures {
  rps: number;
  p95: number;
  /** Server CPU time (user + system) per request, in microseconds. */
  cpuMicros: number;
  /** Spans the receiver got per request, the server's shutdown flush included. */
  spansPerRequest: number;
}

function tracingEnv(variant: Variant, receiver: string): NodeJS.ProcessEnv {
  if (variant === 'off') return {};
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver,
    ...(variant === 'on 0.01'
      ? { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }
      : {}),
  };
}

/** The receiver's counts so far. */
function count(receiver: ChildProcess): Promise<{ spans: number; refused: number }> {
  return new Promise((resolve) => {
    receiver.once('message', (answer) => resolve(answer as { spans: number; refused: number }));
    receiver.send('count');
  });
}

/** Runs the load; its figures and every response time, for the p95 autocannon does not report. */
function load(url: string, headers: Record<string, string>, seconds: number) {
  const times: number[] = [];
  return new Promise<{ result: autocannon.Result; times: number[] }>((resolve, reject) => {
    const instance = autocannon({ url, connections, duration: seconds, headers }, (error, result) =>
      error ? reject(error) : resolve({ result, times }),
    );
    instance.on('response', (_client, _status, _bytes, ms) => times.push(ms));
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function measure(
  variant: Variant,
  env: NodeJS.ProcessEnv,
  token: string,
  receiver: ChildProcess,
  receiverOrigin: string,
): Promise<Figures> {
  const port = await freePort();
  // PROFILE_DIR=dir writes a V8 CPU profile of each server (bench/support/harness.ts does the same).
  const profile = process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, 'dist/main.mjs'], {
    cwd: schedulerDir,
    env: { ...env, PORT: String(port), ...tracingEnv(variant, receiverOrigin) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${variant}: the server exited with ${child.exitCode}`);
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const url = `${base}/api/v1/roles`;
    const headers = { authorization: `Bearer ${token}` };
    const roles = (await (await fetch(url, { headers })).json()) as unknown[];
    if (roles.length !== 50) throw new Error(`${variant}: answered ${roles.length} roles, not 50`);
    // Warm-up: JIT, pool connections, provisioning memo, the exporter's first batches.
    await load(url, headers, 2);
    const spansBefore = (await count(receiver)).spans;
    const cpuBefore = cpuSeconds(child.pid);
    const { result, times } = await load(url, headers, duration);
    const cpuMicros = ((cpuSeconds(child.pid) - cpuBefore) * 1e6) / result.requests.total;
    if (result.errors || result.non2xx) {
      throw new Error(`${variant}: ${result.errors} errors, ${result.non2xx} non-2xx`);
    }
    // SIGTERM flushes the spans still buffered (src/server.ts); then they are counted.
    child.kill('SIGTERM');
    if ((await exited) !== 0) throw new Error(`${variant}: the server did not stop cleanly`);
    const after = await count(receiver);
    if (after.refused > 0) throw new Error(`the receiver could not decode ${after.refused} exports`);
    const spansPerRequest = (after.spans - spansBefore) / result.requests.total;
    if (variant === 'off' && spansPerRequest !== 0) throw new Error('off: spans arrived');
    if (variant !== 'off' && spansPerRequest === 0) throw new Error(`${variant}: no span arrived`);
    return { rps: result.requests.average, p95: percentile(times, 95), cpuMicros, spansPerRequest };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

const work = mkdtempSync(path.join(tmpdir(), 'scheduler-tracing-'));
const cluster = await startPgCluster();
const receiver = fork(path.join(import.meta.dirname, 'receiver.ts'), [], { execArgv: ['--import', 'tsx'] });
try {
  const { origin: receiverOrigin } = await new Promise<{ origin: string }>((resolve) =>
    receiver.once('message', (message) => resolve(message as { origin: string })),
  );
  const tenant = canonicalId();
  const handle = await openRolesDatabase(cluster.url, tenant.id);
  // The server connects as a login holding only scheduler_app, as docs/operations.md advises.
  await sql.raw('CREATE ROLE bench_api LOGIN IN ROLE scheduler_app').execute(handle.owner);
  await handle.close();
  const signer = await createSigner();
  const token = await signer.sign({ tenant: tenant.claim, subject: 'bench-admin', role: 'admin' });
  const keyFile = path.join(work, 'issuer.pem');
  writeFileSync(keyFile, signer.publicKeyPem);
  const login = new URL(cluster.url);
  login.username = 'bench_api';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: login.toString(),
    DATABASE_OWNER_URL: cluster.url,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    AUTH_PUBLIC_KEY_FILE: keyFile,
    // No gazetteer to load: the read does not geocode.
    GEOCODER_URL: 'http://127.0.0.1:9/',
    LOG_LEVEL: 'warn',
    // The load is far beyond the API's rate limits (bench/rate-limits measures those).
    RATE_LIMIT_STORE: 'off',
  };
  for (const key of Object.keys(env)) if (key.startsWith('OTEL_')) delete env[key];

  const rows: { round: number; order: Variant[]; figures: Record<Variant, Figures> }[] = [];
  for (let round = 1; round <= rounds; round++) {
    // The order rotates: off first in round 1, second in round 2, …
    const order = variants.map((_, i) => variants[(i + round - 1) % variants.length] as Variant);
    const figures = {} as Record<Variant, Figures>;
    for (const variant of order) {
      figures[variant] = await measure(variant, env, token, receiver, receiverOrigin);
      console.error(
        `round ${round} ${variant}: ${figures[variant].rps.toFixed(0)} req/s, p95 ${figures[variant].p95.toFixed(1)} ms`,
      );
    }
    rows.push({ round, order, figures });
  }

  console.log(
    `\nGET /api/v1/roles, 50 roles, ${connections} connections, ${duration} s per run, ${rounds} rounds (orders rotating), Node ${process.versions.node}`,
  );
  console.log(
    '| round | order | variant | req/s | p95 ms | CPU µs/req | spans/req | throughput / off | p95 / off | CPU / off |',
  );
  console.log('|---:|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const { round, order, figures } of rows) {
    const off = figures.off;
    for (const variant of variants) {
      const f = figures[variant];
      console.log(
        `| ${round} | ${order.join(', ')} | ${variant} | ${f.rps.toFixed(0)} | ${f.p95.toFixed(1)} | ${f.cpuMicros.toFixed(0)} | ${f.spansPerRequest.toFixed(2)} | ${(f.rps / off.rps).toFixed(2)} | ${(f.p95 / off.p95).toFixed(2)} | ${(f.cpuMicros / off.cpuMicros).toFixed(2)} |`,
      );
    }
  }
  console.log('\nmedians over the rounds, ratios to "off" of the same round:');
  console.log(
    '| variant | req/s | p95 ms | CPU µs/req | spans/req | throughput / off | p95 / off | CPU / off |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const variant of variants) {
    const of = (pick: (f: Figures, off: Figures) => number) =>
      median(rows.map(({ figures }) => pick(figures[variant], figures.off)));
    console.log(
      `| ${variant} | ${of((f) => f.rps).toFixed(0)} | ${of((f) => f.p95).toFixed(1)} | ${of((f) => f.cpuMicros).toFixed(0)} | ${of((f) => f.spansPerRequest).toFixed(2)} | ${variant === 'off' ? '1' : of((f, off) => f.rps / off.rps).toFixed(2)} | ${variant === 'off' ? '1' : of((f, off) => f.p95 / off.p95).toFixed(2)} | ${variant === 'off' ? '1' : of((f, off) => f.cpuMicros / off.cpuMicros).toFixed(2)} |`,
    );
  }
} finally {
  receiver.disconnect();
  cluster.stop();
  rmSync(work, { recursive: true, force: true });
}
