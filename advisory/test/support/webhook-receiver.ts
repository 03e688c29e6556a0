import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { Alert } from '../../src/alerts/alert.ts';

/** A local webhook receiver: records the alerts it takes, answers scripted statuses first. */

export interface Receiver {
  url: string;
  received: Alert[];
  /** Statuses to answer, one per request, before answering 204. */
  script: number[];
  attempts: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const state = { received: [] as Alert[], script: [] as number[], attempts: 0 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      state.attempts += 1;
      const status = state.script.shift() ?? 204;
      if (status === 204 && request.headers['content-type'] === 'application/json') {
        const alert = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Alert;
        expect(request.headers['x-advisory-alert-id']).toBe(alert.id);
        state.received.push(alert);
      }
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
