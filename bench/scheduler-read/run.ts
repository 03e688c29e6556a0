/**
 * bench/scheduler-read: GET /api/v1/roles (50 roles) with a valid RS256 token, 32
 * connections, on a throwaway PostgreSQL 15 cluster, against a floor measured in the
 * same run (bare Fastify + jose + pg doing the same verification and SELECT).
 *
 *   npm run bench:scheduler-read     (DURATION=10 CONNECTIONS=32 ROUNDS=5 POOL_SIZE=10 to change)
 *
 * POOLER=pgbouncer: the scheduler also through PgBouncer in transaction mode, each round,
 * both with a login of its own (support/pooler.ts); the last line is pooled/direct.
 */
import autocannon from 'autocannon';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { v7 as uuidv7 } from 'uuid';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { cpuSeconds, median as medianOf, startServer, stopServer } from '../support/harness.ts';
import { benchPooler } from '../support/pooler.ts';
import { openRolesDatabase, settingsLine } from '../support/setup.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 32);
const rounds = Number(process.env.ROUNDS ?? 5);
const ISSUER = 'https://idp.bench.example';
const AUDIENCE = 'scheduler-api';

interface Figures {
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Server CPU time (user + system) per request, in microseconds. */
  cpuMicros: number;
}

async function load(port: number, token: string, seconds: number): Promise<Omit<Figures, 'cpuMicros'>> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/api/v1/roles`,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
  });
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/** The roles a server answers, in a form both servers agree on when they read the same rows. */
async function answer(port: number, token: string): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/roles`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const roles = (await response.json()) as { id: string; name: string }[];
  return roles.map((role) => `${role.id.replaceAll('-', '')} ${role.name}`);
}

async function measure(mode: 'app' | 'floor', env: NodeJS.ProcessEnv, token: string): Promise<Figures> {
  const server = await startServer(mode === 'app' ? 'app' : 'floor-roles', env);
  const { port, child } = server;
  try {
    // Both servers must do the same work: the 50 roles, not an empty list of another tenant.
    const roles = await answer(port, token);
    if (roles.length !== 50) throw new Error(`${mode} answered ${roles.length} roles, not 50`);
    await load(port, token, 2); // warm-up: JIT, pool connections, provisioning memo
    const cpuBefore = cpuSeconds(child.pid);
    const figures = await load(port, token, duration);
    const cpuMicros = ((cpuSeconds(child.pid) - cpuBefore) * 1e6) / (figures.rps * duration);
    if (figures.errors || figures.non2xx)
      throw new Error(`${mode}: ${figures.errors} errors, ${figures.non2xx} non-2xx`);
    return { ...figures, cpuMicros };
  } finally {
    await stopServer(server);
  }
}

const cluster = await startPgCluster();
let pooler: Awaited<ReturnType<typeof benchPooler>> = null;
try {
  // A canonical (hyphenated, not version 5) UUID claim is kept as the tenant id by the
  // scheduler, and the floor hands the same text to PostgreSQL: both read one tenant.
  const tenantClaim = uuidv7();
  const handle = await openRolesDatabase(cluster.url, tenantClaim.replaceAll('-', ''));
  pooler = await benchPooler(cluster.url, handle.owner);
  await handle.close();

  const { privateKey, publicKey } = await generateKeyPair('RS256');
  // The floor reads tenant_id as the database uuid; the app maps it the same way itself.
  const token = await new SignJWT({ tenant_id: tenantClaim, role: 'admin' })
    .setProtectedHeader({ alg: 'RS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('bench-admin')
    .setExpirationTime('1h')
    .sign(privateKey);
  const env = {
    ...process.env,
    DATABASE_URL: cluster.url,
    PUBLIC_KEY_PEM: await exportSPKI(publicKey),
    ISSUER,
    AUDIENCE,
    POOL_SIZE: process.env.POOL_SIZE ?? '10',
  };

  // Rounds interleave floor and scheduler, so both see the same machine state; each
  // round's ratio pairs the two, and the median of those ratios is the figure.
  const rows: { round: number; floor: Figures; app: Figures; pooled?: Figures }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const floor = await measure('floor', env, token);
    const app = await measure('app', pooler ? { ...env, ...pooler.direct } : env, token);
    const pooled = pooler ? await measure('app', { ...env, ...pooler.pooled }, token) : undefined;
    rows.push({ round, floor, app, ...(pooled ? { pooled } : {}) });
  }
  const median = medianOf(rows.map((r) => r.app.rps / r.floor.rps));
  console.log(
    `\nGET /api/v1/roles, 50 roles, ${connections} connections, ${duration} s per run, ${rounds} rounds; ${settingsLine()}`,
  );
  console.log(
    '| round | floor req/s | floor p99 ms | floor CPU µs/req | scheduler req/s | scheduler p99 ms | scheduler CPU µs/req | ratio |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { round, floor, app } of rows) {
    console.log(
      `| ${round} | ${floor.rps.toFixed(0)} | ${floor.p99} | ${floor.cpuMicros.toFixed(0)} | ${app.rps.toFixed(0)} | ${app.p99} | ${app.cpuMicros.toFixed(0)} | ${(app.rps / floor.rps).toFixed(2)} |`,
    );
  }
  console.log(
    `\nthroughput ratio scheduler/floor, median of ${rounds} paired rounds: ${median.toFixed(2)} (target >= 0.85 with the wall on)`,
  );
  if (pooler) {
    console.log(
      '\n| round | direct req/s | direct p99 ms | PgBouncer req/s | PgBouncer p99 ms | PgBouncer CPU µs/req | pooled/direct |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|');
    for (const { round, app, pooled } of rows) {
      if (!pooled) continue;
      console.log(
        `| ${round} | ${app.rps.toFixed(0)} | ${app.p99} | ${pooled.rps.toFixed(0)} | ${pooled.p99} | ${pooled.cpuMicros.toFixed(0)} | ${(pooled.rps / app.rps).toFixed(2)} |`,
      );
    }
    const pooledRatio = medianOf(rows.map((r) => (r.pooled ? r.pooled.rps / r.app.rps : 0)));
    console.log(
      `\nthroughput ratio through PgBouncer (transaction mode, ${process.env.POOLER_SIZE ?? 10} server connections)/direct, median: ${pooledRatio.toFixed(2)}`,
    );
  }
} finally {
  await pooler?.stop();
  cluster.stop();
}
