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
  /** Sends at once to one host (host:port): a dead or hanging host holds no more slots than this. */
  perHost: number;
  /**
   * Tries per message for a transient failure (network, 429, 5xx): the delivery job's
   * attempts (src/jobs/), spread out by the job queue's doubling wait.
   */
  attempts: number;
  /** First wait before a retry; doubled each time (the job queue's backoff). */
  backoffMs: number;
  /** How long a connection may take to open: a host that does not answer is left at once. */
  connectTimeoutMs: number;
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
  perHost: 16,
  attempts: 5,
  backoffMs: 1000,
  connectTimeoutMs: 3_000,
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
 * What became of one try: delivered, gone (404/410: drop the subscription), failed (a
 * refusal waiting will not change), unavailable (no answer, 429 or 5xx: worth another try
 * later), or refused (the endpoint is not a destination the address rules allow: no
 * connection was opened).
 */
export type PushOutcome = 'delivered' | 'gone' | 'failed' | 'unavailable' | 'refused';

export interface PushResult {
  outcome: PushOutcome;
  /** What the push service answered, for the delivery's record: `HTTP 503`, `no answer`. */
  detail: string;
}

/** An HTTP status; 0 stands for no answer at all (refused, reset, timed out). */
type Status = number;
/** The request could not even be built (unusable keys): failed, never retried. */
const UNSENDABLE: Status = -1;
/** The address rules refused the destination before or while connecting. */
const REFUSED: Status = -2;

const transient = (status: Status) => status === 0 || status === 429 || status >= 500;

/**
 * Sends Web Push messages (RFC 8030, aes128gcm payloads, VAPID-signed per tenant) on a
 * bounded queue, at most `perHost` at once to one host. web-push builds each request
 * (encryption, VAPID JWT); this class sends it, over https (or plain http where
 * registration allowed a loopback endpoint). One try per call; a send never throws: the
 * result says what happened, and the job queue decides whether to try again later.
 */
export class PushSender {
  private readonly queue: PQueue;
  private readonly hosts = new Map<string, PQueue>();

  constructor(readonly options: PushOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency });
  }

  async send(target: PushTarget, payload: string, keys: VapidKeys): Promise<PushResult> {
    // Checked again at every send: the row may predate the rules, or the operator's list changed.
    const refusal = this.options.policy.refusal(target.endpoint);
    if (refusal !== null) return { outcome: 'refused', detail: refusal };
    if (this.queue.size >= this.options.maxQueued)
      return { outcome: 'unavailable', detail: 'the send queue is full' };
    const status = await this.forHost(target.endpoint).add(
      () => this.queue.add(() => this.post(target, payload, keys), { throwOnTimeout: true }),
      { throwOnTimeout: true },
    );
    const detail =
      status > 0 ? `HTTP ${status}` : status === 0 ? 'no answer (refused, reset or timed out)' : '';
    if (status === REFUSED)
      return { outcome: 'refused', detail: 'the address rules refuse the address it resolves to' };
    if (status === UNSENDABLE) return { outcome: 'failed', detail: 'the subscription keys cannot be used' };
    if (status >= 200 && status < 300) return { outcome: 'delivered', detail };
    if (status === 404 || status === 410) return { outcome: 'gone', detail };
    // A 4xx other than 429 will not improve by waiting.
    return { outcome: transient(status) ? 'unavailable' : 'failed', detail };
  }

  /** The host's own queue, made when first needed and dropped once it is empty. */
  private forHost(endpoint: string): PQueue {
    const host = new URL(endpoint).host;
    let queue = this.hosts.get(host);
    if (!queue) {
      const made = new PQueue({ concurrency: this.options.perHost });
      made.on('idle', () => {
        if (this.hosts.get(host) === made) this.hosts.delete(host);
      });
      this.hosts.set(host, made);
      queue = made;
    }
    return queue;
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
      // A host that does not accept the connection is given up on sooner than one that is slow to answer.
      request.on('socket', (socket) => {
        if (!socket.connecting) return;
        const timer = setTimeout(
          () => request.destroy(new Error('push service did not accept the connection')),
          this.options.connectTimeoutMs,
        );
        socket.once('connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
      request.on('error', (error) => resolve(error instanceof DestinationRefused ? REFUSED : 0));
      request.end(details.body ?? undefined);
    });
  }
}
