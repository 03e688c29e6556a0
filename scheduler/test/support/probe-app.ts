import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { type AppOptions, buildApp } from '../../src/app.ts';
import { createVerifier, readPublicKeyFile } from '../../src/auth/verifier.ts';
import type { App } from '../../src/http/types.ts';
import { createLogger } from '../../src/logger.ts';
import { noGeocoder } from './context.ts';
import { openTestDatabase, type TestDatabase } from './database.ts';
import { createTestKeys, TEST_AUDIENCE, TEST_ISSUER, type TestKeys } from './tokens.ts';

/**
 * The whole app with probe routes a test file adds, declared the way feature routes are,
 * and its log captured: for the request pipeline's own tests (test/http/).
 */

/** A line of the app's JSON log, parsed. */
export interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  reason?: string;
  code?: string;
  err?: { message: string; stack?: string; type?: string };
}

/** The process logger (JSON lines), writing each line parsed into `logs`. */
export function capturingLogger(logs: LogLine[]) {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  return createLogger('info', { interactive: false, destination });
}

export interface ProbeApp {
  app: App;
  db: TestDatabase;
  keys: TestKeys;
  /** Every line logged since the test emptied it (`logs.length = 0`). */
  logs: LogLine[];
  close(): Promise<void>;
}

/**
 * buildApp on a database of its own, verifying tokens through a PEM key file, with the
 * routes `addProbes` declares added before the app is ready.
 */
export async function buildProbeApp(
  addProbes: (app: App) => void,
  options: Pick<AppOptions, 'rateLimits' | 'tenantTurns'> = {},
): Promise<ProbeApp> {
  const db = await openTestDatabase();
  const keys = await createTestKeys();
  const logs: LogLine[] = [];
  const app = await buildApp({
    db: db.db,
    geocoder: noGeocoder,
    logger: capturingLogger(logs),
    verifier: createVerifier({
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    }),
    ...options,
  });
  addProbes(app);
  await app.ready();
  return {
    app,
    db,
    keys,
    logs,
    async close() {
      await app.close();
      await db.dispose();
    },
  };
}

/** The error shape with exactly this status, code and message, as JSON in UTF-8. */
export function expectError(response: LightMyRequestResponse, status: number, code: string, message: string) {
  expect({ status: response.statusCode, body: response.json() }).toEqual({
    status,
    body: { error: { code, message } },
  });
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
}
