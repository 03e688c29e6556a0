import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createVerifier, readPublicKeyFile } from '../src/auth/verifier.ts';
import { asTenant } from '../src/db/tenant-scope.ts';
import type { App } from '../src/http/types.ts';
import { noGeocoder, uniqueName } from './support/context.ts';
import { openTestDatabase, type TestDatabase } from './support/database.ts';
import { enqueueJobs } from './support/jobs.ts';
import { createTestKeys, signToken, TEST_AUDIENCE, TEST_ISSUER, type TestKeys } from './support/tokens.ts';

/**
 * What buildApp (src/app.ts) wires into the request pipeline (the JSON parser, the
 * not-found handler, the HTTP parser's error answers, the request id), each checked on an
 * app built inside the test itself: the other suites build theirs once per file, before
 * any test starts.
 */
let db: TestDatabase;
let keys: TestKeys;

beforeAll(async () => {
  db = await openTestDatabase();
  keys = await createTestKeys();
});
afterAll(async () => db?.dispose());

async function withApp(use: (app: App, token: string) => Promise<void>): Promise<void> {
  const app = await buildApp({
    db: db.db,
    geocoder: noGeocoder,
    verifier: createVerifier({
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    }),
  });
  try {
    const token = await signToken(keys, { role: 'admin', tenant: uniqueName('build'), sub: 'admin-1' });
    await use(app, token);
  } finally {
    await app.close();
  }
}

const post = (app: App, token: string, payload: string | Buffer, contentType = 'application/json') =>
  app.inject({
    method: 'POST',
    url: '/api/v1/roles',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    payload,
  });

describe('a freshly built app', () => {
  it('answers an unknown route with the error shape, naming it without the query', async () => {
    await withApp(async (app) => {
      const response = await app.inject({ method: 'GET', url: '/nowhere?secret=1' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no route for GET /nowhere' } });
    });
  });

  it('reads JSON bodies strictly: poisoning, invalid UTF-8, other media types, unstorable text', async () => {
    await withApp(async (app, token) => {
      const answers = [
        await post(app, token, '{"name":"x","__proto__":{"admin":true}}'),
        await post(app, token, '{"name":"x","constructor":{"prototype":{"admin":true}}}'),
        await post(
          app,
          token,
          Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
        ),
        await post(app, token, 'name=x', 'text/plain'),
        await post(app, token, ' \n '),
        await post(app, token, '{"name":"a\\u0000b"}'),
      ];
      expect(answers.map((response) => [response.statusCode, response.json().error])).toEqual([
        [400, { code: 'BAD_REQUEST', message: 'malformed JSON body' }],
        [400, { code: 'BAD_REQUEST', message: 'malformed JSON body' }],
        [400, { code: 'BAD_REQUEST', message: 'request body is not valid UTF-8' }],
        [415, { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'request body must be application/json' }],
        [422, { code: 'VALIDATION_FAILED', message: 'body: must be object' }],
        [
          422,
          { code: 'VALIDATION_FAILED', message: 'name: must not contain NUL characters or invalid Unicode' },
        ],
      ]);
      const created = await post(app, token, '{"name":"Stored"}');
      expect(created.statusCode).toBe(201);
    });
  });

  it('answers a request the HTTP parser refuses with the error shape and a request id', async () => {
    await withApp(async (app) => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      const raw = await new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => socket.write('FOO / HTTP/1.1\r\nHost: x\r\n\r\n'));
        let received = '';
        socket.on('data', (chunk) => {
          received += chunk.toString('latin1');
        });
        socket.on('close', () => resolve(received));
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(raw).toMatch(/\r\nx-request-id: [0-9a-f]{32}\r\n/);
      expect(raw.split('\r\n\r\n')[1]).toBe(
        JSON.stringify({ error: { code: 'BAD_REQUEST', message: 'malformed HTTP request' } }),
      );
    });
  });

  it('starts its background work once it listens, not while it is built or made ready', async () => {
    // A job is due before the app exists: a worker started with the app would take it.
    const tenantId = randomUUID().replaceAll('-', '');
    await db.owner
      .insertInto('tenants')
      .values({ id: tenantId, vapid_public_key: 'p', vapid_private_key: 'k' })
      .execute();
    await asTenant(tenantId, () =>
      enqueueJobs(db.db, [
        {
          tenant_id: tenantId,
          id: randomUUID().replaceAll('-', ''),
          kind: 'push',
          key: 'gone:gone',
          payload: {
            notification_id: randomUUID().replaceAll('-', ''),
            subscription_id: randomUUID().replaceAll('-', ''),
          },
          max_attempts: 1,
        },
      ]),
    );
    const status = () =>
      db.owner
        .selectFrom('jobs')
        .select('status')
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow();
    await withApp(async (app) => {
      await app.ready();
      // Built and ready, every plugin loaded: the job has not been claimed.
      expect(await status()).toEqual({ status: 'pending' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      await app.jobsIdle();
      // Its notification does not exist: the delivery has nothing to send and is done.
      expect(await status()).toEqual({ status: 'done' });
    });
  });

  it('sends a request id header on every response', async () => {
    await withApp(async (app) => {
      const response = await app.inject({ method: 'GET', url: '/health' });
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    });
  });
});
