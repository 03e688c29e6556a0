import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, type TestContext } from './support/context.ts';

/**
 * The HTTP edge over a real socket: errors raised by Fastify's router and Node's HTTP
 * parser keep the error shape and a request id, and slow or refused clients lose their
 * connection instead of holding it.
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
 * the server closes the connection (or after `waitMs`, with closed = false).
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
    const timer = setTimeout(() => finish(false), options.waitMs ?? 5000);
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
