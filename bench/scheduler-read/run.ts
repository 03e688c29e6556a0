/**
 * bench/scheduler-read: GET /api/v1/roles (50 roles) with a valid RS256 token, 32
 * connections, on a throwaway PostgreSQL 15 cluster, against a floor measured in the
 * same run (bare Fastify + jose + pg doing the same verification and SELECT).
 *
 *   npm run bench:scheduler-read            (DURATION=10 CONNECTIONS=32 ROUNDS=3 to change)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { v5 as uuidv5, v7 as uuidv7 } from 'uuid';
import { Provisioner } from '../../scheduler/src/auth/provisioning.ts';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 32);
const rounds = Number(process.env.ROUNDS ?? 3);
const ISSUER = 'https://idp.bench.example';
const AUDIENCE = 'scheduler-api';

async function startServer(
  mode: 'app' | 'floor',
  env: NodeJS.ProcessEnv,
): Promise<{ port: number; child: ChildProcess }> {
  // PROFILE_DIR=dir writes a V8 CPU profile of each server for a closer look.
  const profile = process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', path.join(import.meta.dirname, 'server.ts'), mode],
    {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
  });
  return { port, child };
}

interface Figures {
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(port: number, token: string, seconds: number): Promise<Figures> {
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

async function measure(mode: 'app' | 'floor', env: NodeJS.ProcessEnv, token: string): Promise<Figures> {
  const { port, child } = await startServer(mode, env);
  try {
    await load(port, token, 2); // warm-up: JIT, pool connections, provisioning memo
    const figures = await load(port, token, duration);
    if (figures.errors || figures.non2xx)
      throw new Error(`${mode}: ${figures.errors} errors, ${figures.non2xx} non-2xx`);
    return figures;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

const cluster = await startPgCluster();
try {
  const handle = await openDatabase({ url: cluster.url, poolSize: 2 });
  await migrateToLatest(handle.db);
  const tenantId = uuidv5(`${ISSUER}\nbench-tenant`, '6b0b8a8e-2f4e-5f0e-9a51-5d2c1f7b9e30');
  await new Provisioner(handle.db).ensure({
    tenantId,
    userId: uuidv5(`${ISSUER}\nbench-admin`, '6b0b8a8e-2f4e-5f0e-9a51-5d2c1f7b9e30'),
    role: 'admin',
    customerId: null,
    name: null,
    email: null,
  });
  await handle.db
    .insertInto('roles')
    .values(
      Array.from({ length: 50 }, (_, i) => ({
        tenant_id: tenantId,
        id: uuidv7(),
        name: `Role ${String(i).padStart(2, '0')}`,
        description: `Benchmark role number ${i}`,
      })),
    )
    .execute();
  await handle.close();

  const { privateKey, publicKey } = await generateKeyPair('RS256');
  // The floor reads tenant_id as the database uuid; the app maps it the same way itself.
  const token = await new SignJWT({ tenant_id: tenantId, role: 'admin' })
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
    POOL_SIZE: '10',
  };

  const results: { mode: string; figures: Figures }[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const mode of ['floor', 'app'] as const) {
      results.push({ mode, figures: await measure(mode, env, token) });
    }
  }
  const best = (mode: string) =>
    results.filter((r) => r.mode === mode).reduce((a, b) => (b.figures.rps > a.figures.rps ? b : a)).figures;
  const floor = best('floor');
  const app = best('app');
  console.log(
    `\nGET /api/v1/roles, 50 roles, ${connections} connections, ${duration} s, best of ${rounds} rounds`,
  );
  console.log('| server | req/s | p99 ms |');
  console.log('|---|---:|---:|');
  console.log(`| floor (Fastify + jose + pg) | ${floor.rps.toFixed(0)} | ${floor.p99} |`);
  console.log(`| scheduler | ${app.rps.toFixed(0)} | ${app.p99} |`);
  console.log(`\nthroughput ratio scheduler/floor: ${(app.rps / floor.rps).toFixed(2)} (target >= 0.80)`);
} finally {
  cluster.stop();
}
