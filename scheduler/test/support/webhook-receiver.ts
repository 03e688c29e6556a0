import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A local webhook receiver: every path is one receiver (`/<name>`), answering the statuses
 * a test scripts for it (204 once they run out). Each request is verified with the
 * standardwebhooks library and the secret the test registered for that path, and its
 * timestamp is checked against this machine's clock; a request that fails either is kept
 * with the reason, so a test can insist that there are none.
 */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body, once verified; undefined when verification failed. */
  payload: { type: string; timestamp: string; data: Record<string, unknown> } | undefined;
  /** Why verification failed, or null. */
  failure: string | null;
}

export interface WebhookReceiver {
  origin: string;
  /** The URL of a new receiver path; `secret` is set once the hook is created. */
  url(name: string): string;
  trust(name: string, secret: string): void;
  /** The statuses the next requests to `name` get, in order; 0: the connection cut, no answer. */
  answer(name: string, ...statuses: number[]): void;
  received(name: string): ReceivedWebhook[];
  /** Every request that failed verification, on any path. */
  failures(): ReceivedWebhook[];
  close(): Promise<void>;
}

/**
 * How far a webhook-timestamp may be from this clock: the Standard Webhooks libraries' own
 * five minutes. It catches a stale or mis-scaled timestamp; a few seconds would race the
 * delivery itself on a loaded machine.
 */
const TOLERANCE_SECONDS = 300;

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const secrets = new Map<string, string>();
  const scripts = new Map<string, number[]>();
  const log: ReceivedWebhook[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').slice(1);
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: ReceivedWebhook = {
        path,
        headers: request.headers,
        body,
        payload: undefined,
        failure: null,
      };
      try {
        const secret = secrets.get(path);
        if (!secret) throw new Error(`no secret for ${path}`);
        entry.payload = new Webhook(secret).verify(body, request.headers as Record<string, string>) as never;
        const sent = Number(request.headers['webhook-timestamp']);
        if (Math.abs(Date.now() / 1000 - sent) > TOLERANCE_SECONDS)
          throw new Error(`timestamp ${sent} is off`);
      } catch (error) {
        entry.failure = error instanceof Error ? error.message : String(error);
        entry.payload = undefined;
      }
      log.push(entry);
      const status = scripts.get(path)?.shift() ?? 204;
      if (status === 0) {
        request.socket.destroy();
        return;
      }
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(status === 204 ? undefined : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (name) => `${origin}/${name}`,
    trust: (name, secret) => secrets.set(name, secret),
    answer: (name, ...statuses) => scripts.set(name, [...(scripts.get(name) ?? []), ...statuses]),
    received: (name) => log.filter((entry) => entry.path === name),
    failures: () => log.filter((entry) => entry.failure !== null),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
