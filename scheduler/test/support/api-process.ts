import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import { claimToUuid } from '../../src/auth/identity.ts';
import type { Caller, Method } from './context.ts';
import { freePort } from './pg-cluster.ts';
import { signToken, TEST_AUDIENCE, TEST_ISSUER, type TestKeys } from './tokens.ts';

/**
 * The API as a real process: the production build (dist/main.mjs, as the container and
 * the service unit run it), and callers that talk HTTP to it. Processes a test started are
 * killed after it, whatever happened.
 */
const schedulerDir = path.resolve(import.meta.dirname, '../..');

/**
 * What one start of the server (or one run of a command of it) may take on a loaded 2-core
 * machine: tsx compiling, PGlite, migrations, the gazetteer. Over a minute was seen at a
 * load average of 20; a process test's timeout is this times the processes it runs one
 * after the other.
 */
export const PROCESS_START_MS = 100_000;

const processes = new Set<ChildProcess>();
afterEach(() => {
  for (const child of processes) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  processes.clear();
});

/**
 * Kills `child` after the test that started it, whatever happened (a failing test leaves
 * nothing running); `child` itself, for chaining.
 */
export function killAfterTest(child: ChildProcess): ChildProcess {
  processes.add(child);
  return child;
}

export interface Api {
  base: string;
  child: ChildProcess;
  stop(): Promise<number | null>;
}

/** How the server runs: the production bundle, or the sources as `npm run dev` runs them. */
export const ENTRIES = {
  bundle: ['dist/main.mjs'],
  dev: ['--import', 'tsx', 'src/main.ts'],
} as const;

/**
 * `node dist/main.mjs` (or another of ENTRIES) with tokens verified by `keys`; resolves
 * once /health answers.
 */
export async function startApi(
  keys: TestKeys,
  env: Record<string, string>,
  entry: readonly string[] = ENTRIES.bundle,
): Promise<Api> {
  const port = await freePort();
  const child = spawn(process.execPath, [...entry], {
    cwd: schedulerDir,
    env: {
      ...process.env,
      PORT: String(port),
      AUTH_ISSUER: TEST_ISSUER,
      AUTH_AUDIENCE: TEST_AUDIENCE,
      AUTH_PUBLIC_KEY_FILE: keys.publicKeyFile,
      // No gazetteer to load: these processes do not geocode.
      GEOCODER_URL: 'http://127.0.0.1:9/',
      LOG_LEVEL: 'warn',
      // Limits no test's load reaches (the defaults would refuse the storms of process/faults)…
      RATE_LIMIT_TENANT_BURST: '1000000',
      RATE_LIMIT_TENANT_PER_SECOND: '1000000',
      RATE_LIMIT_USER_BURST: '1000000',
      RATE_LIMIT_USER_PER_SECOND: '1000000',
      // …nor the turns: a storm's requests must race one another, not wait four at a time.
      RATE_LIMIT_TENANT_CONCURRENCY: '10000',
      RATE_LIMIT_TENANT_QUEUE: '1000000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  killAfterTest(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  // Until /health answers, or the process is gone; the test's timeout bounds the wait.
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`the API exited with ${child.exitCode}`);
    return fetch(`${base}/health`).then(
      (r) => r.ok,
      () => false,
    );
  }, 100);
  return {
    base,
    child,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A caller of one tenant talking HTTP to `api` (the shape the test builders expect). */
export async function httpCaller(
  keys: TestKeys,
  api: () => Api,
  tenant: string,
  role: string,
  sub: string,
): Promise<Caller> {
  const token = await signToken(keys, { tenant, role, sub });
  const request = async (method: Method, url: string, body?: unknown) => {
    const response = await fetch(`${api().base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return {
      statusCode: response.status,
      body: text,
      json: () => JSON.parse(text),
    } as unknown as LightMyRequestResponse;
  };
  // The first request provisions the tenant and the user.
  await request('GET', '/api/v1/tenant/settings');
  return {
    token,
    tenantId: claimToUuid(TEST_ISSUER, tenant),
    userId: claimToUuid(TEST_ISSUER, sub),
    request,
  };
}
