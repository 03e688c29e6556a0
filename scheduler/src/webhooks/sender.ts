import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { DestinationRefused, type OutboundPolicy } from '../outbound/destinations.ts';

export interface WebhookSendOptions {
  /** Which destinations may be connected to (OUTBOUND_ALLOWED_HOSTS and the address rules). */
  policy: OutboundPolicy;
  /** How long a connection may take to open. */
  connectTimeoutMs: number;
  /** The whole try: connection, request and the answer's status. */
  timeoutMs: number;
}

export const defaultWebhookSendOptions = { connectTimeoutMs: 3_000, timeoutMs: 10_000 };

/**
 * What one POST came to: the receiver's status (0: no answer at all: refused, reset or
 * timed out), or `refused` when the address rules stopped it before a connection.
 */
export type SendResult = { status: number; durationMs: number } | { refused: string };

/**
 * One POST of a signed body. A redirect is an answer like any other (3xx, a failure):
 * it is never followed, so a receiver cannot send the request on to an address the rules
 * refuse. The answer's body is read and dropped; only its status counts.
 */
export function postWebhook(
  options: WebhookSendOptions,
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<SendResult> {
  // Checked again at every send: the row may predate the rules, or the operator's list changed.
  const refusal = options.policy.refusal(url);
  if (refusal !== null) return Promise.resolve({ refused: refusal });
  const target = new URL(url);
  const lookup = options.policy.lookupFor(target);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: SendResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'shift-scheduler-webhooks',
        },
        // The address a name resolves to is checked as the connection is made (rebinding).
        ...(lookup ? { lookup } : {}),
      },
      (response) => {
        settle({ status: response.statusCode ?? 0, durationMs: elapsed() });
        // The body is not waited for; one still coming at the deadline is cut off there.
        response.resume();
        response.on('error', () => {});
      },
    );
    const deadline = setTimeout(() => request.destroy(new Error('timed out')), options.timeoutMs);
    request.on('close', () => clearTimeout(deadline));
    request.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => request.destroy(new Error('the receiver did not accept the connection')),
        options.connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    request.on('error', (error) =>
      settle(
        error instanceof DestinationRefused
          ? { refused: error.message }
          : { status: 0, durationMs: elapsed() },
      ),
    );
    request.end(body);
  });
}
