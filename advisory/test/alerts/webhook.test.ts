import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initialAlert } from '../../src/alerts/alert.ts';
import { postWebhook } from '../../src/alerts/webhook.ts';

let server: Server;
let base = '';
const seen: { method: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const status = Number(request.url?.slice(1));
      if (status === 0) return; // never answers
      response.writeHead(status, status === 302 ? { location: '/204' } : {}).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('the webhook sender', () => {
  const alert = initialAlert([], [], '2026.11.26', null, new Date('2026-11-26T00:00:00Z'));

  it('POSTs the alert as JSON with its id; any 2xx is delivery', async () => {
    await postWebhook(`${base}/204`, alert);
    await postWebhook(`${base}/200`, alert);
    await postWebhook(`${base}/299`, alert);
    expect(seen[0]).toMatchObject({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'advisory-appliance',
        'x-advisory-alert-id': alert.id,
      },
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual(alert);
  });

  it('fails on anything else, with a reason a person can read', async () => {
    for (const status of [300, 302, 404, 500]) {
      await expect(postWebhook(`${base}/${status}`, alert), String(status)).rejects.toThrow(`HTTP ${status}`);
    }
    await expect(postWebhook(`${base}/0`, alert, 200)).rejects.toThrow(/^timed out$/);
    await expect(postWebhook('http://127.0.0.1:1/hook', alert)).rejects.toThrow(/^ECONNREFUSED$/);
    await expect(postWebhook('http://[', alert)).rejects.toThrow(/^ERR_INVALID_URL$/);
  });
});
