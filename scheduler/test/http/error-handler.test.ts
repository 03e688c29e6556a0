import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { type App, identityOf } from '../../src/http/types.ts';
import { buildProbeApp, expectError, type LogLine, type ProbeApp } from '../support/probe-app.ts';

/**
 * The error handler and the not-found handler (src/http/error-handler.ts), on probe
 * routes that throw every kind of error: how each becomes a response and a log line.
 */
let probe: ProbeApp;
let app: App;
let logs: LogLine[];

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
/** Refusals of the database that a service did not turn into a domain answer: a race it did not foresee. */
const conflicts: Record<string, () => Error> = {
  '23503': () =>
    failure('insert or update violates foreign key constraint "x_fkey"', {
      code: '23503',
      constraint: 'x_fkey',
    }),
  '23505': () => failure('duplicate key value violates unique constraint "x_key"', { code: '23505' }),
  '23514': () => failure('new row violates check constraint "x_check"', { code: '23514' }),
  '23P01': () => failure('conflicting key value violates exclusion constraint "x"', { code: '23P01' }),
  '40P01': () => failure('deadlock detected', { code: '40P01' }),
  '40001': () => failure('could not serialize access due to concurrent update', { code: '40001' }),
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
  probe = await buildProbeApp((app) => {
    app.get('/api/v1/probe/admin', { config: { access: 'admin' } }, async (request) => identityOf(request));
    app.get<{ Params: { kind: string } }>('/probe/throw/:kind', async (request) => {
      const make =
        thrown[request.params.kind] ?? unavailable[request.params.kind] ?? conflicts[request.params.kind];
      if (!make) throw new Error(`no such kind ${request.params.kind}`);
      throw make();
    });
  });
  ({ app, logs } = probe);
});
afterAll(async () => probe?.close());
beforeEach(() => {
  logs.length = 0;
});

const get = (url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url, headers });
const errorOf = (response: LightMyRequestResponse) =>
  response.json() as { error: { code: string; message: string } };

describe('error handler', () => {
  it('answers an unexpected error with 500 and the request id, the stack only in the log', async () => {
    const response = await get('/probe/throw/plain');
    const id = String(response.headers['x-request-id']);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expectError(response, 500, 'INTERNAL', `internal error (request id ${id})`);
    expect(response.body).not.toContain('a bug');
    const line = logs.find((l) => l.msg === 'unhandled error');
    expect(line).toMatchObject({ level: 50, reqId: id, err: { message: 'a bug' } });
    expect(line?.err?.stack).toContain('error-handler.test.ts');
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

  it.each(Object.keys(conflicts))(
    'answers 409 for a database refusal no service foresaw (%s), logging it as an error',
    async (kind) => {
      const response = await get(`/probe/throw/${kind}`);
      expectError(
        response,
        409,
        'INVALID_STATE',
        'the request conflicts with a change made at the same time; reload and try again',
      );
      expect(response.body).not.toContain(conflicts[kind]?.().message);
      expect(logs).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'database refusal not handled by its service',
          reqId: response.headers['x-request-id'],
        }),
      );
    },
  );

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
});

describe('not found', () => {
  it('answers unknown routes with the error shape', async () => {
    for (const [method, url] of [
      ['GET', '/nope'],
      ['GET', '/api/v1/nope'],
      ['PUT', '/api/v1/roles'],
    ] as const) {
      const response = await app.inject({ method, url });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        error: { code: 'NOT_FOUND', message: expect.stringContaining('no route for') },
      });
    }
  });

  it('names the method and path, without the query', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/api/v1/nowhere/at/all?token=secret&x=1' });
    expectError(response, 404, 'NOT_FOUND', 'no route for DELETE /api/v1/nowhere/at/all');
    expect(errorOf(response).error.message).not.toContain('secret');
  });
});
