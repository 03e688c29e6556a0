import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundPolicy, parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { postWebhook } from '../../src/webhooks/sender.ts';

/**
 * One POST of a delivery (src/webhooks/sender.ts) against a local receiver: what is sent,
 * what an answer, a redirect, silence or a closed port come to.
 */
const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
let answer: (response: ServerResponse) => void = (response) => response.writeHead(204).end();
let server: Server;
let origin: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      answer(response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// Deadlines far from what a local answer takes, even on a loaded machine; the test of the
// deadline gives a short one to a receiver that never answers.
const options = (timeoutMs = 30_000) => ({
  policy: new OutboundPolicy(parseAllowedHosts(new URL(origin).host)),
  connectTimeoutMs: 10_000,
  timeoutMs,
});

describe('postWebhook', () => {
  it('POSTs the body with its headers and its own user agent, and answers the status', async () => {
    seen.length = 0;
    answer = (response) => response.writeHead(204).end();
    const result = await postWebhook(options(), `${origin}/hook?x=1`, '{"type":"form.submitted"}', {
      'webhook-id': 'msg_1',
    });
    expect(result).toEqual({ status: 204, durationMs: expect.any(Number) });
    expect((result as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/hook?x=1', body: '{"type":"form.submitted"}' });
    expect(seen[0]?.headers).toMatchObject({
      'webhook-id': 'msg_1',
      'user-agent': 'shift-scheduler-webhooks',
      'content-type': 'application/json',
    });
  });

  it('answers a redirect as its status and never follows it', async () => {
    seen.length = 0;
    answer = (response) => response.writeHead(307, { location: `${origin}/elsewhere` }).end();
    expect(await postWebhook(options(), `${origin}/hook`, '{}', {})).toMatchObject({ status: 307 });
    expect(seen.map((request) => request.url)).toEqual(['/hook']);
  });

  it('comes to status 0 when the receiver never answers within the deadline', async () => {
    answer = () => {};
    expect(await postWebhook(options(300), `${origin}/silent`, '{}', {})).toMatchObject({ status: 0 });
  });

  it('comes to status 0 when nothing listens at the port', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const url = `http://127.0.0.1:${port}/gone`;
    const policy = new OutboundPolicy(parseAllowedHosts(`127.0.0.1:${port}`));
    expect(await postWebhook({ ...options(), policy }, url, '{}', {})).toMatchObject({ status: 0 });
  });

  it('refuses a destination the address rules refuse, without connecting', async () => {
    seen.length = 0;
    const strict = { ...options(), policy: new OutboundPolicy([]) };
    const result = await postWebhook(strict, `${origin}/hook`, '{}', {});
    expect(result).toEqual({ refused: expect.any(String) });
    expect(seen).toEqual([]);
  });
});
