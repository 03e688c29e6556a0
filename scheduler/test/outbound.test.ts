import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchJson, OutboundError } from '../src/outbound/fetch-json.ts';
import { sendEndlessBody } from './support/endless-body.ts';

/** Reading JSON from another service: the size cap and the deadline, each on its own. */
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    switch (request.url) {
      case '/endless':
        sendEndlessBody(request, response, '[', '"x",'.repeat(4096));
        return;
      case '/declared-large':
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '10000000' });
        response.write('[');
        return;
      case '/small':
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
        return;
      case '/not-json':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
        return;
      case '/latin1':
        response.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.from([0x22, 0xe9, 0x22]));
        return;
      case '/teapot':
        response.writeHead(418).end('{}');
        return;
      default:
        // headers, then silence
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(path: string, options = { timeoutMs: 30_000, maxBytes: 64 * 1024 }) {
  const error = await fetchJson(new URL(path, base), options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

describe('fetchJson', () => {
  it('reads a JSON answer within its limits', async () => {
    expect(await fetchJson(new URL('/small', base), { timeoutMs: 5000, maxBytes: 11 })).toEqual({ keys: [] });
  });

  it('abandons an endless body at the size cap, long before the deadline', async () => {
    const error = await failure('/endless');
    expect(error.failure).toBe('too-large');
    expect(error.message).toBe('response body exceeds 65536 bytes');
  });

  it('refuses a body whose declared length is over the cap without reading it', async () => {
    const error = await failure('/declared-large');
    expect(error.failure).toBe('too-large');
    expect(error.message).toBe('response body of 10000000 bytes exceeds 65536');
  });

  it('stops at the deadline when the body stalls', async () => {
    const error = await failure('/stall', { timeoutMs: 200, maxBytes: 1024 });
    expect(error.failure).toBe('timeout');
    expect(error.message).toBe('no complete answer within 200 ms');
  });

  it('reports a status other than 200, a body that is not JSON, and text that is not UTF-8', async () => {
    expect((await failure('/teapot')).failure).toBe('status');
    expect((await failure('/teapot')).message).toBe('answered HTTP 418');
    expect((await failure('/not-json')).failure).toBe('not-json');
    expect((await failure('/latin1')).failure).toBe('not-json');
  });

  it('reports an unreachable service as a network failure', async () => {
    const error = await fetchJson(new URL('http://127.0.0.1:9/'), { timeoutMs: 2000, maxBytes: 10 }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ failure: 'network' });
  });
});
