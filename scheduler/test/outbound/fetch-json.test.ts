import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fetchJson, OutboundError, type OutboundFailure } from '../../src/outbound/fetch-json.ts';

/**
 * fetchJson against a real HTTP server whose answer each test sets: the limits a server
 * needs when it is the client (deadline, size cap, status check, JSON only).
 */
type Answer = (response: ServerResponse) => void;

let answer: Answer;
let seen: IncomingHttpHeaders[];
let base: URL;
const server = createServer((request, response) => {
  seen.push(request.headers);
  answer(response);
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/data`);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen = [];
  answer = (response) => json(response, '{"ok":true}');
});

function json(
  response: ServerResponse,
  body: string | Buffer,
  headers: Record<string, string | number> = {},
) {
  response.writeHead(200, { 'content-type': 'application/json', ...headers });
  response.end(body);
}

/** The OutboundError a call fails with. */
async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

const expectFailure = (error: OutboundError, failure: OutboundFailure, message: string) => {
  expect({ name: error.name, failure: error.failure, message: error.message }).toEqual({
    name: 'OutboundError',
    failure,
    message,
  });
};

// A deadline far from what a local answer takes, even on a loaded machine: only the tests of
// the deadline set a short one.
const limits = { timeoutMs: 30_000, maxBytes: 100 };

describe('fetchJson', () => {
  it('returns the parsed body, asking for JSON and sending the caller headers', async () => {
    answer = (response) => json(response, '{"keys":[1,"two",null]}');
    await expect(
      fetchJson(base, { ...limits, headers: { 'user-agent': 'scheduler-test/2' } }),
    ).resolves.toEqual({
      keys: [1, 'two', null],
    });
    expect(seen[0]).toMatchObject({ accept: 'application/json', 'user-agent': 'scheduler-test/2' });
  });

  it('lets the caller override the accept header', async () => {
    await fetchJson(base, { ...limits, headers: { accept: 'application/jwk-set+json' } });
    expect(seen[0]?.accept).toBe('application/jwk-set+json');
  });

  it.each([201, 204, 404, 418, 500])('refuses an answer with status %i', async (status) => {
    answer = (response) => {
      response.writeHead(status);
      response.end(status === 204 ? undefined : '{"ok":true}');
    };
    expectFailure(await failure(fetchJson(base, limits)), 'status', `answered HTTP ${status}`);
  });

  it('refuses a body whose declared length is above the cap, before reading it', async () => {
    answer = (response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 101 });
      response.write('{"a":"');
      // The rest never comes: only the declared length can refuse this in time.
    };
    expectFailure(
      await failure(fetchJson(base, { timeoutMs: 10_000, maxBytes: 100 })),
      'too-large',
      'response body of 101 bytes exceeds 100',
    );
  });

  it('accepts a body of exactly the cap, declared or streamed', async () => {
    const body = `{"a":"${'x'.repeat(92)}"}`;
    expect(body).toHaveLength(100);
    answer = (response) => json(response, body, { 'content-length': 100 });
    await expect(fetchJson(base, limits)).resolves.toEqual({ a: 'x'.repeat(92) });
    answer = (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(body.slice(0, 50));
      response.end(body.slice(50));
    };
    await expect(fetchJson(base, limits)).resolves.toEqual({ a: 'x'.repeat(92) });
  });

  it('cuts off a streamed body one byte above the cap', async () => {
    const body = `{"a":"${'x'.repeat(93)}"}`;
    answer = (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(body.slice(0, 50));
      response.end(body.slice(50));
    };
    expectFailure(await failure(fetchJson(base, limits)), 'too-large', 'response body exceeds 100 bytes');
  });

  it('stops reading an endless body at the cap and lets the connection go at once', async () => {
    let gone = false;
    answer = (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = `${'['.repeat(64)}`;
      const pump = () => {
        while (response.write(chunk)) {
          /* fill the socket buffer */
        }
      };
      response.on('drain', pump);
      response.on('close', () => {
        gone = true;
        response.off('drain', pump);
      });
      pump();
    };
    expectFailure(
      await failure(fetchJson(base, { timeoutMs: 600_000, maxBytes: 1000 })),
      'too-large',
      'response body exceeds 1000 bytes',
    );
    // The deadline is ten minutes away, far past this test's timeout: only cancelling the
    // body closes the connection within it.
    await expect.poll(() => gone).toBe(true);
  });

  it.each([
    ['text', 'not json', 'application/json'],
    ['an empty body', '', 'application/json'],
    ['half an object', '{"a":', 'application/json'],
    // The content type is not trusted either way: only the body decides.
    ['an HTML page', '<html>', 'text/html'],
  ])('refuses %s as not JSON', async (_label, body, type) => {
    answer = (response) => json(response, body, { 'content-type': type });
    const error = await failure(fetchJson(base, limits));
    expectFailure(error, 'not-json', 'response body is not JSON');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('refuses a body that is not valid UTF-8, even inside a JSON string', async () => {
    answer = (response) =>
      json(response, Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]));
    const error = await failure(fetchJson(base, limits));
    expectFailure(error, 'not-json', 'response body is not JSON');
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it('gives up at the deadline when the headers never come', async () => {
    answer = () => {};
    const started = Date.now();
    expectFailure(
      await failure(fetchJson(base, { timeoutMs: 200, maxBytes: 100 })),
      'timeout',
      'no complete answer within 200 ms',
    );
    // Nothing else would end it (undici waits minutes for headers): well short of that,
    // with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('gives up at the deadline when the body trickles', async () => {
    answer = (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"a":');
    };
    expectFailure(
      await failure(fetchJson(base, { timeoutMs: 200, maxBytes: 100 })),
      'timeout',
      'no complete answer within 200 ms',
    );
  });

  it('reports an unreachable server as a network failure, with the cause', async () => {
    const error = await failure(fetchJson(new URL('http://127.0.0.1:9/data'), limits));
    expect(error.failure).toBe('network');
    expect(error.message).toBe('unreachable: fetch failed');
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it('reports a connection reset mid-answer as a network failure', async () => {
    answer = (response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 50 });
      response.write('{"a":');
      setTimeout(() => response.socket?.destroy(), 20);
    };
    const error = await failure(fetchJson(base, limits));
    expect(error.failure).toBe('network');
    expect(error.message).toMatch(/^unreachable: /);
  });
});
