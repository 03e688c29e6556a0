import { Writable } from 'node:stream';
import { errorCodes, type LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { KeySourceUnavailable } from '../src/auth/errors.ts';
import { createVerifier, readPublicKeyFile, type TokenVerifier } from '../src/auth/verifier.ts';
import { AppError } from '../src/errors.ts';
import { frameworkErrors } from '../src/http/edge-errors.ts';
import { type App, identityOf } from '../src/http/types.ts';
import { createLogger } from '../src/logger.ts';
import { noGeocoder, tenantWireId, uniqueName } from './support/context.ts';
import { openTestDatabase, type TestDatabase } from './support/database.ts';
import { createTestKeys, signToken, TEST_AUDIENCE, TEST_ISSUER, type TestKeys } from './support/tokens.ts';

/**
 * The request pipeline on probe routes declared the way feature routes are: who gets past
 * the access hook, and how every kind of error becomes a response and a log line.
 */
interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  reason?: string;
  code?: string;
  err?: { message: string; stack?: string; type?: string };
}

let db: TestDatabase;
let keys: TestKeys;
let app: App;
let logs: LogLine[];

function capturingLogger() {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  return createLogger('info', { interactive: false, destination });
}

/** An error as a dependency might throw it: a message and whatever fields it carries. */
const failure = (message: string, fields: Record<string, unknown>) =>
  Object.assign(new Error(message), fields);

const thrown: Record<string, () => Error> = {
  plain: () => new Error('a bug'),
  syntax: () => new SyntaxError('Unexpected token } in JSON at position 3'),
  'app-internal': () => new AppError('INTERNAL', 'the clock stopped'),
  'app-unavailable': () => new AppError('SERVICE_UNAVAILABLE', 'storage is not configured'),
  'app-not-found': () => new AppError('NOT_FOUND', 'thing not found'),
  'app-headers': () => new AppError('RATE_LIMITED', 'slow down', { 'retry-after': '7' }),
  'status-399': () => failure('odd', { statusCode: 399 }),
  'status-400': () => failure('Bad', { statusCode: 400 }),
  'status-404': () => failure('gone', { statusCode: 404 }),
  'status-413': () => failure('big', { statusCode: 413 }),
  'status-415': () => failure('type', { statusCode: 415 }),
  'status-499': () => failure('closed', { statusCode: 499 }),
  'status-500': () => failure('server', { statusCode: 500 }),
  'empty-json': () =>
    failure('Body cannot be empty', { code: 'FST_ERR_CTP_EMPTY_JSON_BODY', statusCode: 400 }),
  'other-ctp': () => failure('Bad length', { code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH', statusCode: 400 }),
  'numeric-code': () => failure('odd code', { code: 57 }),
  'json-named': () => failure('bad schema', { code: 'ERR_JSON_SCHEMA', statusCode: 400 }),
  'code-x08': () => failure('not a connection class', { code: 'X0800' }),
};
const unavailable: Record<string, () => Error> = {
  ECONNREFUSED: () => failure('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' }),
  ECONNRESET: () => failure('read ECONNRESET', { code: 'ECONNRESET' }),
  ETIMEDOUT: () => failure('connect ETIMEDOUT', { code: 'ETIMEDOUT' }),
  EPIPE: () => failure('write EPIPE', { code: 'EPIPE' }),
  '57P01': () => failure('terminating connection due to administrator command', { code: '57P01' }),
  '57P02': () => failure('terminating connection due to crash of another server process', { code: '57P02' }),
  '57P03': () => failure('the database system is starting up', { code: '57P03' }),
  '08006': () => failure('connection failure', { code: '08006' }),
  '08P01': () => failure('protocol violation', { code: '08P01' }),
  terminated: () => new Error('Connection terminated unexpectedly'),
  'pglite-closed': () => new Error('PGlite is CLOSED'),
  destroyed: () => new Error('Kysely: driver has already been destroyed'),
};

beforeAll(async () => {
  db = await openTestDatabase();
  keys = await createTestKeys();
  app = await buildApp({
    db: db.db,
    geocoder: noGeocoder,
    logger: capturingLogger(),
    verifier: createVerifier({
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    }),
  });
  const whoAmI = async (request: Parameters<typeof identityOf>[0]) => identityOf(request);
  app.get('/api/v1/probe/authenticated', { config: { access: 'authenticated' } }, whoAmI);
  app.get('/api/v1/probe/member', { config: { access: 'member' } }, whoAmI);
  app.get('/api/v1/probe/admin', { config: { access: 'admin' } }, whoAmI);
  app.get('/api/v1/probe/default', whoAmI);
  app.get('/api/v1/probe/public', { config: { access: 'public' } }, async () => ({ public: true }));
  app.get('/probe/outside', async () => ({ outside: true }));
  app.get<{ Params: { kind: string } }>('/probe/throw/:kind', async (request) => {
    const make = thrown[request.params.kind] ?? unavailable[request.params.kind];
    if (!make) throw new Error(`no such kind ${request.params.kind}`);
    throw make();
  });
  app.get('/probe/framework', (request, reply) => {
    frameworkErrors(new errorCodes.FST_ERR_ASYNC_CONSTRAINT(), request, reply);
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await db?.dispose();
});
beforeEach(() => {
  logs = [];
});

const get = (url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url, headers });
const tokenFor = (
  role: string,
  extra: Parameters<typeof signToken>[1]['extra'] = {},
  tenant = uniqueName('pipe'),
) => signToken(keys, { role, tenant, sub: `${role}-1`, extra });
const bearer = async (role: string) => ({ authorization: `Bearer ${await tokenFor(role)}` });
const errorOf = (response: LightMyRequestResponse) =>
  response.json() as { error: { code: string; message: string } };

function expectError(response: LightMyRequestResponse, status: number, code: string, message: string) {
  expect({ status: response.statusCode, body: response.json() }).toEqual({
    status,
    body: { error: { code, message } },
  });
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
}

describe('access hook', () => {
  it.each([
    ['authenticated', ['admin', 'employee', 'customer'], []],
    ['member', ['admin', 'employee'], ['customer']],
    ['admin', ['admin'], ['employee', 'customer']],
    ['default', ['admin'], ['employee', 'customer']],
  ])('lets the right roles through to a route with %s access', async (access, allowed, refused) => {
    for (const role of allowed) {
      const response = await get(`/api/v1/probe/${access}`, await bearer(role));
      expect(response.statusCode, `${role} on ${access}`).toBe(200);
      expect(response.json()).toMatchObject({ role });
    }
    for (const role of refused) {
      const response = await get(`/api/v1/probe/${access}`, await bearer(role));
      expectError(response, 403, 'FORBIDDEN', 'forbidden');
      expect(response.headers.connection).toBe('close');
    }
  });

  it('sets the identity of the caller on the request, provisioned', async () => {
    const tenant = uniqueName('pipe');
    const token = await signToken(keys, {
      role: 'customer',
      tenant,
      sub: 'cust-9',
      customer: 'c-9',
      name: 'Cy',
      email: 'cy@example.test',
    });
    const response = await get('/api/v1/probe/authenticated', { authorization: `Bearer ${token}` });
    expect(response.json()).toEqual({
      tenantId: tenantWireId(tenant),
      userId: tenantWireId('cust-9'),
      role: 'customer',
      customerId: tenantWireId('c-9'),
      customerClaim: 'c-9',
      issuer: TEST_ISSUER,
      name: 'Cy',
      email: 'cy@example.test',
    });
    const tenantRow = await db.db
      .selectFrom('tenants')
      .select('id')
      .where('id', '=', tenantWireId(tenant))
      .executeTakeFirst();
    expect(tenantRow).toBeDefined();
  });

  it('needs no token for public routes, inside the API or outside it', async () => {
    expect((await get('/api/v1/probe/public')).json()).toEqual({ public: true });
    expect((await get('/probe/outside')).json()).toEqual({ outside: true });
  });

  it('accepts the scheme in any case, with any number of spaces, and padding around the header', async () => {
    const token = await tokenFor('admin');
    for (const authorization of [
      `bearer ${token}`,
      `BEARER ${token}`,
      `Bearer    ${token}`,
      `  Bearer ${token} `,
    ]) {
      expect((await get('/api/v1/probe/admin', { authorization })).statusCode, authorization).toBe(200);
    }
  });

  it.each([
    ['text before the scheme', (t: string) => `xBearer ${t}`],
    ['text after the token', (t: string) => `Bearer ${t} more`],
    ['a tab for a space', (t: string) => `Bearer\t${t}`],
    ['no space at all', (t: string) => `Bearer${t}`],
    ['a character no token has', (t: string) => `Bearer ${t}!`],
    ['padding inside the token', (t: string) => `Bearer ${t.slice(0, 10)}=${t.slice(10)}`],
  ])('refuses an Authorization header with %s', async (_label, header) => {
    const response = await get('/api/v1/probe/admin', { authorization: header(await tokenFor('admin')) });
    expectError(response, 401, 'UNAUTHORIZED', 'invalid token');
    expect(response.headers['www-authenticate']).toBe(
      'Bearer error="invalid_token", error_description="malformed authorization header"',
    );
    expect(response.headers.connection).toBe('close');
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'bearer token rejected',
        reason: 'malformed authorization header',
      }),
    );
  });

  it('allows base64 padding at the end of the token (the verifier ignores it)', async () => {
    const response = await get('/api/v1/probe/admin', {
      authorization: `Bearer ${await tokenFor('admin')}==`,
    });
    expect(response.statusCode).toBe(200);
  });

  it('treats an empty or blank Authorization header as no token', async () => {
    for (const authorization of ['', '   ']) {
      const response = await get('/api/v1/probe/member', { authorization });
      expectError(response, 401, 'UNAUTHORIZED', 'missing bearer token');
      expect(response.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('refuses a token without a subject, saying so', async () => {
    const response = await get('/api/v1/probe/member', {
      authorization: `Bearer ${await signToken(keys, { role: 'admin', tenant: 't', sub: '' })}`,
    });
    expectError(response, 401, 'UNAUTHORIZED', 'invalid token');
    expect(response.headers['www-authenticate']).toBe(
      'Bearer error="invalid_token", error_description="token has no subject claim"',
    );
  });

  it('logs why a verified token gets 403 when it carries no known role', async () => {
    const response = await get('/api/v1/probe/authenticated', await bearer('auditor'));
    expectError(response, 403, 'FORBIDDEN', 'forbidden');
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'token verified but carries no known role',
        reason: 'no-known-role',
        reqId: response.headers['x-request-id'],
      }),
    );
  });

  it('logs the reason a token was rejected under the request id', async () => {
    const response = await get('/api/v1/probe/member', {
      authorization: `Bearer ${await signToken(keys, { role: 'admin', tenant: 't', sub: 's', expiresIn: -3600 })}`,
    });
    expect(response.statusCode).toBe(401);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'bearer token rejected',
        reason: 'token expired',
        reqId: response.headers['x-request-id'],
      }),
    );
  });
});

describe('access hook with a failing verifier', () => {
  let failing: App;
  let verifyError: Error;

  beforeAll(async () => {
    const verifier: TokenVerifier = {
      issuer: TEST_ISSUER,
      warmUp: async () => {},
      verify: async () => {
        throw verifyError;
      },
    };
    failing = await buildApp({ db: db.db, verifier, geocoder: noGeocoder, logger: capturingLogger() });
    await failing.ready();
  });
  afterAll(async () => failing?.close());

  it('answers 503 when the key source is unavailable, and warns with the cause', async () => {
    verifyError = new KeySourceUnavailable('identity provider keys unavailable: answered HTTP 502');
    const response = await failing.inject({
      method: 'GET',
      url: '/api/v1/roles',
      headers: { authorization: 'Bearer a.b.c' },
    });
    expectError(response, 503, 'SERVICE_UNAVAILABLE', 'identity provider keys unavailable');
    expect(response.headers.connection).not.toBe('close');
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'identity provider keys unavailable',
        err: expect.objectContaining({ message: 'identity provider keys unavailable: answered HTTP 502' }),
      }),
    );
  });

  it('answers 500 for anything else the verifier throws, logging it', async () => {
    verifyError = new Error('verifier bug');
    const response = await failing.inject({
      method: 'GET',
      url: '/api/v1/roles',
      headers: { authorization: 'Bearer a.b.c' },
    });
    const id = response.headers['x-request-id'];
    expectError(response, 500, 'INTERNAL', `internal error (request id ${id})`);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'unhandled error',
        reqId: id,
        err: expect.objectContaining({ message: 'verifier bug' }),
      }),
    );
  });
});

describe('error handler', () => {
  it('answers an unexpected error with 500 and the request id, the stack only in the log', async () => {
    const response = await get('/probe/throw/plain');
    const id = String(response.headers['x-request-id']);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expectError(response, 500, 'INTERNAL', `internal error (request id ${id})`);
    expect(response.body).not.toContain('a bug');
    const line = logs.find((l) => l.msg === 'unhandled error');
    expect(line).toMatchObject({ level: 50, reqId: id, err: { message: 'a bug' } });
    expect(line?.err?.stack).toContain('http-pipeline.test.ts');
  });

  it('treats a SyntaxError thrown by server code as a bug, not as a malformed body', async () => {
    const response = await get('/probe/throw/syntax');
    expectError(response, 500, 'INTERNAL', `internal error (request id ${response.headers['x-request-id']})`);
  });

  it.each(Object.keys(unavailable))('answers 503 for a dependency failure (%s), logging it', async (kind) => {
    const response = await get(`/probe/throw/${kind}`);
    expectError(response, 503, 'SERVICE_UNAVAILABLE', 'service temporarily unavailable');
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'dependency unavailable',
        reqId: response.headers['x-request-id'],
        err: expect.objectContaining({ message: unavailable[kind]?.().message }),
      }),
    );
  });

  it.each([
    ['status-399', 500, 'INTERNAL', null],
    ['status-400', 400, 'BAD_REQUEST', 'bad request'],
    ['status-404', 404, 'NOT_FOUND', 'not found'],
    ['status-413', 413, 'PAYLOAD_TOO_LARGE', 'request body too large'],
    ['status-415', 415, 'UNSUPPORTED_MEDIA_TYPE', 'request body must be application/json'],
    ['status-499', 400, 'BAD_REQUEST', 'bad request'],
    ['status-500', 500, 'INTERNAL', null],
    ['empty-json', 400, 'BAD_REQUEST', 'malformed JSON body'],
    ['other-ctp', 400, 'BAD_REQUEST', 'bad request'],
    ['numeric-code', 500, 'INTERNAL', null],
    ['json-named', 400, 'BAD_REQUEST', 'bad request'],
    ['code-x08', 500, 'INTERNAL', null],
  ])('maps a framework error (%s) to %i %s, in fixed words', async (kind, status, code, message) => {
    const response = await get(`/probe/throw/${kind}`);
    expectError(
      response,
      status,
      code,
      message ?? `internal error (request id ${response.headers['x-request-id']})`,
    );
  });

  it('sends an application error as it is, with its headers, warning only from 500 up', async () => {
    const limited = await get('/probe/throw/app-headers');
    expectError(limited, 429, 'RATE_LIMITED', 'slow down');
    expect(limited.headers['retry-after']).toBe('7');
    expectError(await get('/probe/throw/app-not-found'), 404, 'NOT_FOUND', 'thing not found');
    expect(logs.filter((l) => l.level >= 40)).toEqual([]);
    expectError(await get('/probe/throw/app-internal'), 500, 'INTERNAL', 'the clock stopped');
    expectError(
      await get('/probe/throw/app-unavailable'),
      503,
      'SERVICE_UNAVAILABLE',
      'storage is not configured',
    );
    expect(logs.filter((l) => l.level >= 40).map(({ level, code, msg }) => ({ level, code, msg }))).toEqual([
      { level: 40, code: 'INTERNAL', msg: 'the clock stopped' },
      { level: 40, code: 'SERVICE_UNAVAILABLE', msg: 'storage is not configured' },
    ]);
  });

  it('closes the connection after 401, 403 and 413 only', async () => {
    expect((await get('/api/v1/probe/admin')).headers.connection).toBe('close');
    expect((await get('/probe/throw/status-413')).headers.connection).toBe('close');
    for (const kind of ['status-400', 'status-404', 'status-415', 'app-headers', 'plain', 'ECONNREFUSED']) {
      expect((await get(`/probe/throw/${kind}`)).headers.connection, kind).not.toBe('close');
    }
  });

  it('answers a router error it does not know with 500 and the request id, logging it', async () => {
    const response = await get('/probe/framework');
    const id = response.headers['x-request-id'];
    expectError(response, 500, 'INTERNAL', `internal error (request id ${id})`);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'router error',
        err: expect.objectContaining({ message: 'Unexpected error from async constraint' }),
      }),
    );
    // Answered by frameworkErrors itself, not by the error handler after it failed.
    expect(logs.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual(['router error']);
  });
});

describe('not found', () => {
  it('names the method and path, without the query', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/api/v1/nowhere/at/all?token=secret&x=1' });
    expectError(response, 404, 'NOT_FOUND', 'no route for DELETE /api/v1/nowhere/at/all');
    expect(errorOf(response).error.message).not.toContain('secret');
  });
});
