import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { errorCodes } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientErrorHandler, frameworkErrors } from '../../src/http/edge-errors.ts';
import { type Caller, createTestContext, type TestContext } from '../support/context.ts';
import { buildProbeApp, expectError, type LogLine, type ProbeApp } from '../support/probe-app.ts';

/**
 * The HTTP edge (src/http/edge-errors.ts) over a real socket: errors raised by Fastify's
 * router and Node's HTTP parser keep the error shape and a request id, and slow or
 * refused clients lose their connection instead of holding it. Then the client-error
 * handler on its own, byte for byte over a socket pair, and a router error it does not
 * know.
 */
let ctx: TestContext;
let admin: Caller;
let port: number;

beforeAll(async () => {
  ctx = await createTestContext({ timeouts: { requestMs: 1500, headersMs: 1000, keepAliveMs: 5000 } });
  admin = (await ctx.freshTenant()).admin;
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as AddressInfo).port;
});
afterAll(async () => ctx?.close());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection. */
  closed: boolean;
}

function parse(raw: string, closed: boolean): RawResponse {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body, closed };
}

/**
 * Writes `chunks` to a fresh connection, `gapMs` apart, and resolves with the answer once
 * the server closes the connection (or after `waitMs`, with closed = false: a fallback far
 * from what an answer takes, so that a loaded machine cannot make a close look missing).
 */
function exchange(chunks: string[], options: { gapMs?: number; waitMs?: number } = {}): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(raw, closed));
    };
    const timer = setTimeout(() => finish(false), options.waitMs ?? 20_000);
    socket.on('data', (chunk) => {
      raw += chunk.toString('latin1');
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    let index = 0;
    const next = () => {
      if (done || index >= chunks.length) return;
      socket.write(chunks[index++] ?? '');
      setTimeout(next, options.gapMs ?? 0);
    };
    socket.on('connect', next);
  });
}

const errorOf = (response: RawResponse) => JSON.parse(response.body) as { error: { code: string } };

describe('errors before a route is found', () => {
  it.each([
    [
      'bad percent-encoding',
      '/api/v1/roles/%ff',
      400,
      'BAD_REQUEST',
      'malformed URL: invalid percent-encoding',
    ],
    [
      'an over-long path parameter',
      `/api/v1/users/${'a'.repeat(200)}`,
      414,
      'URI_TOO_LONG',
      'a path parameter is too long',
    ],
  ])('answers %s with the error shape and a request id', async (_label, url, status, code, message) => {
    const response = await exchange([`GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
    expect(response.status).toBe(status);
    expect(JSON.parse(response.body)).toEqual({ error: { code, message } });
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });

  it.each([
    [
      'headers over the limit',
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    ['an unknown method token', 'FOO /api/v1/roles HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'BAD_REQUEST'],
    ['a broken header line', 'GET /health HTTP/1.1\r\nHost x\r\n\r\n', 400, 'BAD_REQUEST'],
    ['a request line that is not HTTP', 'hello there\r\n\r\n', 400, 'BAD_REQUEST'],
  ])(
    'answers %s from the HTTP parser with the error shape, then closes',
    async (_label, raw, status, code) => {
      const response = await exchange([raw]);
      expect(response.status).toBe(status);
      expect(errorOf(response).error.code).toBe(code);
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
      expect(response.closed).toBe(true);
    },
  );

  it('answers an HTTP/1.1 request without a Host header with the error shape, then closes', async () => {
    const response = await exchange(['GET /health HTTP/1.1\r\n\r\n']);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: { code: 'BAD_REQUEST', message: 'missing Host header' },
    });
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(response.closed).toBe(true);
  });

  it('answers CONNECT (a proxy tunnel request) with the 404 shape instead of dropping it', async () => {
    const response = await exchange(['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n']);
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toEqual({
      error: { code: 'NOT_FOUND', message: 'no route for CONNECT example.com:443' },
    });
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(response.closed).toBe(true);
  });

  it('answers a known method without a route with the 404 shape', async () => {
    const response = await exchange([
      'PROPFIND /api/v1/roles HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    ]);
    expect(response.status).toBe(404);
    expect(errorOf(response).error.code).toBe('NOT_FOUND');
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('slow and refused clients', () => {
  it('cuts off a client trickling its body, one byte at a time, with 408', async () => {
    const head =
      'POST /api/v1/roles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${admin.token}\r\nContent-Length: 200\r\n\r\n`;
    // 200 bytes, 250 ms apart, would take 50 s; the server must not wait for them.
    const response = await exchange([head, ...'{"name":"slow"}'.padEnd(200, ' ').split('')], {
      gapMs: 250,
      waitMs: 20_000,
    });
    expect(response.closed).toBe(true);
    expect(response.status).toBe(408);
    expect(errorOf(response).error.code).toBe('REQUEST_TIMEOUT');
  });

  it('cuts off a client that never finishes its headers', async () => {
    const response = await exchange(['GET /health HTTP/1.1\r\nHost: x\r\n'], { waitMs: 20_000 });
    expect(response.closed).toBe(true);
  });

  it('closes the connection after refusing a request before its body (401, 403, 413)', async () => {
    const employee = (await ctx.freshTenant()).employee;
    for (const [authorization, status] of [
      ['', 401],
      [`Authorization: Bearer ${employee.token}\r\n`, 403],
      // Above the 1 MiB body limit, as the Content-Length announces.
      [`Authorization: Bearer ${admin.token}\r\n`, 413],
    ] as const) {
      const length = status === 413 ? 2 * 1024 * 1024 : 100_000;
      const response = await exchange(
        [
          `POST /api/v1/roles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${authorization}` +
            `Content-Length: ${length}\r\n\r\n{"name":`,
        ],
        { waitMs: 20_000 },
      );
      expect(response.status).toBe(status);
      expect(response.headers.connection).toBe('close');
      expect(response.closed).toBe(true);
    }
  });
});

/** The server side of the socket pair the client-error handler writes to. */
let socketServer: Server;
let socketPort: number;
let accepted: (socket: Socket) => void;

interface Outcome {
  /** What the client received. */
  received: string;
  /** The server closed the connection. */
  closed: boolean;
  serverSocket: Socket;
}

/**
 * Opens a connection, lets `act` handle the server side, and reports what reached the
 * client within `waitMs` (far from what an answer takes, unless a test waits for nothing).
 */
function onConnection(act: (socket: Socket) => void, waitMs = 20_000): Promise<Outcome> {
  return new Promise((resolve) => {
    let serverSocket: Socket | undefined;
    accepted = (socket) => {
      serverSocket = socket;
      act(socket);
    };
    const client = connect(socketPort, '127.0.0.1');
    let received = '';
    let finished = false;
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      client.destroy();
      serverSocket?.destroy();
      resolve({ received, closed, serverSocket: serverSocket as Socket });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    client.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    client.on('end', () => finish(true));
    client.on('close', () => finish(true));
    client.on('error', () => finish(true));
  });
}

/** Made per test: code that runs while a test runs is what mutation testing attributes to it. */
const handler = (error: NodeJS.ErrnoException, socket: Socket) =>
  clientErrorHandler(() => 'fixed-request-id')(error, socket);
const parserError = (code: string) => Object.assign(new Error(`parser: ${code}`), { code });

function expectedAnswer(status: string, code: string, message: string): string {
  const body = JSON.stringify({ error: { code, message } });
  return (
    `HTTP/1.1 ${status}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'x-request-id: fixed-request-id\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

describe('clientErrorHandler', () => {
  beforeAll(async () => {
    socketServer = createServer((socket) => accepted(socket));
    await new Promise<void>((resolve) => socketServer.listen(0, '127.0.0.1', resolve));
    socketPort = (socketServer.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => socketServer.close(resolve));
  });

  it.each([
    [
      'HPE_HEADER_OVERFLOW',
      '431 Request Header Fields Too Large',
      'HEADERS_TOO_LARGE',
      'request headers too large',
    ],
    [
      'ERR_HTTP_REQUEST_TIMEOUT',
      '408 Request Timeout',
      'REQUEST_TIMEOUT',
      'the request did not arrive in time',
    ],
    ['HPE_INVALID_METHOD', '400 Bad Request', 'BAD_REQUEST', 'malformed HTTP request'],
    ['HPE_INVALID_HEADER_TOKEN', '400 Bad Request', 'BAD_REQUEST', 'malformed HTTP request'],
  ])('answers %s with the error shape and closes', async (code, status, errorCode, message) => {
    const outcome = await onConnection((socket) => handler(parserError(code), socket));
    expect(outcome.received).toBe(expectedAnswer(status, errorCode, message));
    expect(outcome.closed).toBe(true);
  });

  it('leaves a reset connection alone: nobody is left to answer', async () => {
    // A wait for what must not happen (an answer): a slower machine can only make it weaker.
    const outcome = await onConnection((socket) => handler(parserError('ECONNRESET'), socket), 300);
    expect(outcome.received).toBe('');
    expect(outcome.closed).toBe(false);
  });

  it('does nothing to a connection already destroyed', async () => {
    let threw: unknown = null;
    const outcome = await onConnection((socket) => {
      socket.destroy();
      try {
        handler(parserError('HPE_INVALID_METHOD'), socket);
      } catch (error) {
        threw = error;
      }
    });
    expect(threw).toBeNull();
    expect(outcome.received).toBe('');
  });

  it('closes without writing when the connection can no longer be written to', async () => {
    const outcome = await onConnection((socket) => {
      socket.end();
      handler(parserError('HPE_INVALID_METHOD'), socket);
    });
    expect(outcome.received).toBe('');
    expect(outcome.closed).toBe(true);
    expect(outcome.serverSocket.destroyed).toBe(true);
  });
});

describe('frameworkErrors', () => {
  let probe: ProbeApp;
  let logs: LogLine[];
  beforeAll(async () => {
    probe = await buildProbeApp((app) => {
      app.get('/probe/framework', (request, reply) => {
        frameworkErrors(new errorCodes.FST_ERR_ASYNC_CONSTRAINT(), request, reply);
      });
    });
    logs = probe.logs;
  });
  afterAll(async () => probe?.close());
  beforeEach(() => {
    logs.length = 0;
  });

  const get = (url: string) => probe.app.inject({ method: 'GET', url });

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
