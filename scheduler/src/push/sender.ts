import { request as httpRequest } from 'node:http';
import { type Agent, request as httpsRequest } from 'node:https';
import PQueue from 'p-queue';
import webpush from 'web-push';
import { DestinationRefused, OutboundPolicy } from '../outbound/destinations.ts';

/** How Web Push messages leave the process; tests point `agent` at a local push service. */
export interface PushOptions {
  /** Contact for the push services (VAPID `sub`): a mailto: or https: URL. */
  subject: string;
  /** TLS agent, e.g. one trusting a test certificate authority. */
  agent?: Agent;
  /** Which destinations may be connected to (OUTBOUND_ALLOWED_HOSTS and the address rules). */
  policy: OutboundPolicy;
  /** Sends at once across all users (a slow push service must not pile up sockets). */
  concurrency: number;
  /** Tries per message for a transient failure (network, 429, 5xx). */
  attempts: number;
  /** First wait before a retry; doubled each time. */
  backoffMs: number;
  /** Socket timeout of one send. */
  timeoutMs: number;
  /**
   * Messages waiting for a send slot at most; beyond it a message fails at once (and is
   * logged) rather than growing the process without bound while push services are down.
   */
  maxQueued: number;
}

export const defaultPushOptions: PushOptions = {
  subject: 'mailto:scheduler@localhost',
  policy: new OutboundPolicy(),
  concurrency: 32,
  attempts: 3,
  backoffMs: 1000,
  timeoutMs: 10_000,
  maxQueued: 100_000,
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

/**
 * What became of one message: delivered, gone (404/410: drop the subscription), failed,
 * or refused (the endpoint is not a destination the address rules allow: no connection
 * was opened, and none is tried again).
 */
export type PushOutcome = 'delivered' | 'gone' | 'failed' | 'refused';

/** An HTTP status; 0 stands for no answer at all (refused, reset, timed out). */
type Status = number;
/** The request could not even be built (unusable keys): failed, never retried. */
const UNSENDABLE: Status = -1;
/** The address rules refused the destination before or while connecting. */
const REFUSED: Status = -2;

const transient = (status: Status) => status === 0 || status === 429 || status >= 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends Web Push messages (RFC 8030, aes128gcm payloads, VAPID-signed per tenant) on a
 * bounded queue. web-push builds each request (encryption, VAPID JWT); this class sends
 * it, over https (or plain http where registration allowed a loopback endpoint). A send
 * never throws: the outcome says what happened. Transient failures are retried a bounded
 * number of times with a doubling wait, spent outside the queue, so one failing push
 * service does not hold the send slots of everyone else.
 */
export class PushSender {
  private readonly queue: PQueue;

  constructor(readonly options: PushOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency });
  }

  async send(target: PushTarget, payload: string, keys: VapidKeys): Promise<PushOutcome> {
    // Checked again at every send: the row may predate the rules, or the operator's list changed.
    if (this.options.policy.refusal(target.endpoint) !== null) return 'refused';
    for (let attempt = 1; ; attempt++) {
      if (this.queue.size >= this.options.maxQueued) return 'failed';
      const status = await this.queue.add(() => this.post(target, payload, keys), { throwOnTimeout: true });
      if (status === REFUSED) return 'refused';
      if (status >= 200 && status < 300) return 'delivered';
      if (status === 404 || status === 410) return 'gone';
      // A 4xx other than 429 will not improve by waiting.
      if (!transient(status) || attempt >= this.options.attempts) return 'failed';
      await sleep(this.options.backoffMs * 2 ** (attempt - 1));
    }
  }

  /** Resolves once every queued message has had its outcome. */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  get pending(): number {
    return this.queue.size + this.queue.pending;
  }

  /** One POST to the push service; its status, or 0 when there was no answer. */
  private post(target: PushTarget, payload: string, keys: VapidKeys): Promise<Status> {
    let details: ReturnType<typeof webpush.generateRequestDetails>;
    try {
      details = webpush.generateRequestDetails(
        { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
        payload,
        {
          vapidDetails: { subject: this.options.subject, ...keys },
          contentEncoding: 'aes128gcm',
          TTL: 24 * 60 * 60,
        },
      );
    } catch {
      // Keys or payload web-push cannot use: no attempt can succeed.
      return Promise.resolve(UNSENDABLE);
    }
    const url = new URL(details.endpoint);
    const secure = url.protocol === 'https:';
    const lookup = this.options.policy.lookupFor(url);
    return new Promise((resolve) => {
      const request = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: details.method,
          headers: details.headers,
          timeout: this.options.timeoutMs,
          // The address a name resolves to is checked as the connection is made.
          ...(lookup ? { lookup } : {}),
          ...(secure && this.options.agent ? { agent: this.options.agent } : {}),
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', () => resolve(0));
        },
      );
      request.on('timeout', () => request.destroy(new Error('push service timed out')));
      request.on('error', (error) => resolve(error instanceof DestinationRefused ? REFUSED : 0));
      request.end(details.body ?? undefined);
    });
  }
}
