import type { Agent } from 'node:https';
import PQueue from 'p-queue';
import webpush, { WebPushError } from 'web-push';

/** How Web Push messages leave the process; tests point `agent` at a local push service. */
export interface PushOptions {
  /** Contact for the push services (VAPID `sub`): a mailto: or https: URL. */
  subject: string;
  /** TLS agent, e.g. one trusting a test certificate authority. */
  agent?: Agent;
  /** Sends at once across all users (a slow push service must not pile up sockets). */
  concurrency: number;
  /** Tries per message for a transient failure (network, 429, 5xx). */
  attempts: number;
  /** First wait before a retry; doubled each time. */
  backoffMs: number;
  /** Socket timeout of one send. */
  timeoutMs: number;
}

export const defaultPushOptions: PushOptions = {
  subject: 'mailto:scheduler@localhost',
  concurrency: 32,
  attempts: 3,
  backoffMs: 1000,
  timeoutMs: 10_000,
};

export interface PushTarget {
  endpoint: string;
  p256dh: string;
  auth: string;
}

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** What became of one message: delivered, gone (404/410: drop the subscription) or failed. */
export type PushOutcome = 'delivered' | 'gone' | 'failed';

const transient = (status: number) => status === 429 || status >= 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends Web Push messages (RFC 8030, aes128gcm payloads, VAPID-signed per tenant) on a
 * bounded queue. A send never throws: the outcome says what happened, and transient
 * failures are retried a bounded number of times with a doubling wait.
 */
export class PushSender {
  private readonly queue: PQueue;

  constructor(readonly options: PushOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency });
  }

  send(target: PushTarget, payload: string, keys: VapidKeys): Promise<PushOutcome> {
    return this.queue.add(() => this.attempt(target, payload, keys), { throwOnTimeout: true });
  }

  /** Resolves once every queued message has had its outcome. */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  get pending(): number {
    return this.queue.size + this.queue.pending;
  }

  private async attempt(target: PushTarget, payload: string, keys: VapidKeys): Promise<PushOutcome> {
    for (let attempt = 1; ; attempt++) {
      try {
        await webpush.sendNotification(
          { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
          payload,
          {
            vapidDetails: { subject: this.options.subject, ...keys },
            contentEncoding: 'aes128gcm',
            TTL: 24 * 60 * 60,
            timeout: this.options.timeoutMs,
            ...(this.options.agent ? { agent: this.options.agent } : {}),
          },
        );
        return 'delivered';
      } catch (error) {
        const status = error instanceof WebPushError ? error.statusCode : 0;
        if (status === 404 || status === 410) return 'gone';
        // Network errors have no status; a 4xx other than 429 will not improve by waiting.
        const retry = status === 0 || transient(status);
        if (!retry || attempt >= this.options.attempts) return 'failed';
        await sleep(this.options.backoffMs * 2 ** (attempt - 1));
      }
    }
  }
}
