import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { MAX_STATEMENT_PARAMETERS } from '../../src/db/drivers.ts';
import { AppError } from '../../src/errors.ts';
import { type App, identityOf } from '../../src/http/types.ts';
import { freePort } from '../support/pg-cluster.ts';
import { buildProbeApp, expectError, type LogLine, type ProbeApp } from '../support/probe-app.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

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
/** Try again later works: the database cannot be reached or went away, or a statement ran out of its time. */
const unavailable: Record<string, () => Error> = {
  ECONNREFUSED: () => failure('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' }),
  ECONNRESET: () => failure('read ECONNRESET', { code: 'ECONNRESET' }),
  ETIMEDOUT: () => failure('connect ETIMEDOUT', { code: 'ETIMEDOUT' }),
  EPIPE: () => failure('write EPIPE', { code: 'EPIPE' }),
  EHOSTUNREACH: () => failure('connect EHOSTUNREACH 10.0.0.5:5432', { code: 'EHOSTUNREACH' }),
  ENETUNREACH: () => failure('connect ENETUNREACH 10.0.0.5:5432', { code: 'ENETUNREACH' }),
  EAI_AGAIN: () => failure('getaddrinfo EAI_AGAIN db.internal', { code: 'EAI_AGAIN' }),
  '57P01': () => failure('terminating connection due to administrator command', { code: '57P01' }),
  '57P02': () => failure('terminating connection due to crash of another server process', { code: '57P02' }),
  '57P03': () => failure('the database system is starting up', { code: '57P03' }),
  '08000': () => failure('connection exception', { code: '08000' }),
  '08001': () => failure('could not connect to server', { code: '08001' }),
  '08003': () => failure('connection does not exist', { code: '08003' }),
  '08004': () => failure('the database system is not accepting connections', { code: '08004' }),
  '08006': () => failure('connection failure', { code: '08006' }),
  '08007': () => failure('transaction resolution unknown', { code: '08007' }),
  '53300': () => failure('sorry, too many clients already', { code: '53300' }),
  '53100': () => failure('could not extend file: No space left on device', { code: '53100' }),
  '53200': () => failure('out of memory', { code: '53200' }),
  '57014': () => failure('canceling statement due to statement timeout', { code: '57014' }),
  '55P03': () => failure('canceling statement due to lock timeout', { code: '55P03' }),
  terminated: () => new Error('Connection terminated unexpectedly'),
  'connect-timeout': () => new Error('Connection terminated due to connection timeout'),
  'pool-timeout': () => new Error('timeout exceeded when trying to connect'),
  'pool-ended': () => new Error('Cannot use a pool after calling end on the pool'),
  'client-broken': () => new Error('Client has encountered a connection error and is not queryable'),
  'client-closed': () => new Error('Client was closed and is not queryable'),
  'pglite-closed': () => new Error('PGlite is CLOSED'),
  destroyed: () => new Error('Kysely: driver has already been destroyed'),
};
/**
 * Errors of the database that no retry mends: a statement it cannot take is a bug of ours
 * (500), whatever class its SQLSTATE is in, the connection class 08 included.
 */
const bugs: Record<string, () => Error> = {
  '08P01': () => failure('bind message has 65536 parameter formats but 0 parameters', { code: '08P01' }),
  '26000': () => failure('unnamed prepared statement does not exist', { code: '26000' }),
  '42601': () => failure('syntax error at or near "SELEC"', { code: '42601' }),
  '42P01': () => failure('relation "nowhere" does not exist', { code: '42P01' }),
  '42501': () => failure('permission denied for table tenants', { code: '42501' }),
  '22P02': () => failure('invalid input syntax for type uuid: "x"', { code: '22P02' }),
  '25P02': () => failure('current transaction is aborted', { code: '25P02' }),
  '54000': () => failure('target lists can have at most 1664 entries', { code: '54000' }),
  '57P04': () => failure('database "x" does not exist', { code: '57P04' }),
  XX000: () => failure('internal error', { code: 'XX000' }),
};

const onPostgres = inject('testDb') === 'postgres';

/**
 * Real failures, made where they happen: each runs against this file's database (or a
 * pg client of its own) and must reject. The route throws what it rejected with.
 */
const real: Record<string, () => Promise<unknown>> = {
  /**
   * 65,536 bind parameters, sent past the application's drivers: PostgreSQL's protocol
   * counts them in 16 bits, so the server sees a bind message that does not match
   * (08P01); the embedded database fails the statement in its own way.
   */
  'protocol-overflow': async () => {
    const count = 65_536;
    const text = `SELECT cardinality(ARRAY[${Array.from({ length: count }, (_, i) => `$${i + 1}`).join(',')}]::int[])`;
    const values = Array.from({ length: count }, (_, i) => i);
    if (!onPostgres) return probe.db.pglite?.query(text, values);
    const client = new pg.Client({ connectionString: probe.db.url ?? '' });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  },
  /** One more bind parameter than the drivers send (src/db/drivers.ts): refused, never sent. */
  'parameters-refused': () =>
    sql`SELECT ARRAY[${sql.join(Array.from({ length: MAX_STATEMENT_PARAMETERS + 1 }, (_, i) => i))}]`.execute(
      probe.db.db,
    ),
  syntax: () => sql`SELEC 1`.execute(probe.db.db),
  'bad-uuid': () => sql`SELECT ${'x'}::uuid`.execute(probe.db.db),
  'connection-refused': async () => {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: await freePort(),
      connectionTimeoutMillis: 60_000,
    });
    return client.connect();
  },
  'pool-ended': async () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port: await freePort() });
    await pool.end();
    return pool.query('SELECT 1');
  },
  'statement-timeout': () =>
    probe.db.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL statement_timeout = 1`.execute(trx);
      await sql`SELECT pg_sleep(30)`.execute(trx);
    }),
  /** A lock held by the owner's connection; the application's waits 1 ms for it. */
  'lock-timeout': () =>
    probe.db.owner.transaction().execute(async (holder) => {
      await sql`SELECT pg_advisory_xact_lock(31)`.execute(holder);
      await probe.db.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = 1`.execute(trx);
        await sql`SELECT pg_advisory_xact_lock(31)`.execute(trx);
      });
    }),
  /**
   * A session the server ends, on a client of its own: ended on the app's pool, the
   * connection could go back to the pool before its end was noticed, and the next probe
   * (the files run in shuffled order) would meet "Connection terminated unexpectedly".
   */
  'terminated-by-administrator': async () => {
    const client = new pg.Client({ connectionString: probe.db.url ?? '' });
    client.on('error', () => {});
    await client.connect();
    try {
      return await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
    } finally {
      await client.end().catch(() => undefined);
    }
  },
};

beforeAll(async () => {
  probe = await buildProbeApp((app) => {
    app.get('/api/v1/probe/admin', { config: { access: 'admin' } }, async (request) => identityOf(request));
    app.get<{ Params: { kind: string } }>('/probe/throw/:kind', async (request) => {
      const make =
        thrown[request.params.kind] ??
        unavailable[request.params.kind] ??
        conflicts[request.params.kind] ??
        bugs[request.params.kind];
      if (!make) throw new Error(`no such kind ${request.params.kind}`);
      throw make();
    });
    app.get<{ Params: { kind: string } }>('/probe/real/:kind', async (request) => {
      const make = real[request.params.kind];
      if (!make) throw new Error(`no such kind ${request.params.kind}`);
      await make();
      return { ok: true };
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

  it.each(Object.keys(bugs))(
    'answers 500 for a database error no retry mends (%s), never 503, logging it',
    async (kind) => {
      const response = await get(`/probe/throw/${kind}`);
      const id = String(response.headers['x-request-id']);
      expectError(response, 500, 'INTERNAL', `internal error (request id ${id})`);
      expect(logs).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'unhandled error',
          reqId: id,
          err: expect.objectContaining({ message: bugs[kind]?.().message }),
        }),
      );
    },
  );

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

describe('error handler, with real failures', () => {
  /** The error the request logged, so that a wrong status names the failure behind it. */
  const loggedError = (response: LightMyRequestResponse) =>
    logs.find((line) => line.reqId === response.headers['x-request-id'] && line.err)?.err;
  const internal = (response: LightMyRequestResponse) => {
    expect(response.statusCode, JSON.stringify(loggedError(response))).toBe(500);
    expectError(response, 500, 'INTERNAL', `internal error (request id ${response.headers['x-request-id']})`);
  };
  const unavailableAnswer = (response: LightMyRequestResponse) =>
    expectError(response, 503, 'SERVICE_UNAVAILABLE', 'service temporarily unavailable');

  it.each(['protocol-overflow', 'parameters-refused', 'syntax', 'bad-uuid'])(
    'answers 500 for a statement the database cannot take (%s), logged as unhandled',
    async (kind) => {
      const response = await get(`/probe/real/${kind}`);
      internal(response);
      expect(logs).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'unhandled error',
          reqId: response.headers['x-request-id'],
        }),
      );
    },
  );

  it('logs a refused statement with its count and its start, never its values', async () => {
    const response = await get('/probe/real/parameters-refused');
    internal(response);
    const line = logs.find((l) => l.msg === 'unhandled error');
    expect(line?.err?.message).toMatch(
      /^statement with 1001 bind parameters refused \(at most 1000; pass lists as arrays\): SELECT ARRAY\[\$1, \$2, /,
    );
  });

  it.each(['connection-refused', 'pool-ended'])(
    'answers 503 when the database cannot be reached (%s)',
    async (kind) => {
      unavailableAnswer(await get(`/probe/real/${kind}`));
    },
  );

  it.each(['statement-timeout', 'lock-timeout'])(
    'answers 503 for a statement the server gave up on (%s), and serves on',
    runsIf(onPostgres, NEEDS_POSTGRES),
    async (kind) => {
      unavailableAnswer(await get(`/probe/real/${kind}`));
      const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(probe.db.db);
      expect(rows).toEqual([{ ok: 1 }]);
    },
  );

  it('answers 503 for a connection the server ended', runsIf(onPostgres, NEEDS_POSTGRES), async () => {
    unavailableAnswer(await get('/probe/real/terminated-by-administrator'));
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
