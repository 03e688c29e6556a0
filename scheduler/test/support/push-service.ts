import { createECDH, type ECDH, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import ece from 'http_ece';
import { importJWK, type JWTPayload, jwtVerify } from 'jose';
import selfsigned from 'selfsigned';

/**
 * A Web Push service on this machine, as browsers' push services behave (RFC 8030 with
 * VAPID, RFC 8292, and aes128gcm payloads, RFC 8291): it accepts a message only with a
 * VAPID JWT that verifies under the key in the same header, for its own origin, not
 * expired; it decrypts the payload with the subscription's private key and auth secret.
 * Each subscription can be told to answer with other statuses (410, 500) or to hold its
 * answer until released.
 */
export interface Received {
  subscription: string;
  /** The `k` of the VAPID header: the sender's public key. */
  vapidKey: string;
  claims: JWTPayload;
  /** The decrypted payload. */
  payload: unknown;
  /** The TTL header: seconds the push service may keep the message for an offline browser. */
  ttl: number;
  /** When it arrived (ms since the epoch; the benchmark measures delays with it). */
  at: number;
}

export interface TestSubscription {
  id: string;
  /** The body a browser would POST to /push-subscriptions. */
  body: { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } };
}

export interface PushService {
  origin: string;
  /** Trusts the service's certificate; give it to the app's push options. */
  agent: Agent;
  /** The service's self-signed certificate (PEM), for an agent in another process. */
  ca: string;
  received: Received[];
  /** Requests refused (bad VAPID, undecryptable), with why. */
  refused: string[];
  /** Every request seen, answered or not. */
  attempts: Map<string, number>;
  subscribe(): TestSubscription;
  /** Statuses the subscription answers, one per request; 201 once they run out. */
  answer(subscriptionId: string, ...statuses: number[]): void;
  /** Holds every answer until the returned function is called. */
  hold(): () => void;
  /** Waits this long before each answer (a slow push service); 0 by default. */
  delayMs: number;
  close(): Promise<void>;
}

interface Keys {
  ecdh: ECDH;
  auth: string;
}

async function verifyVapid(
  header: string | undefined,
  origin: string,
): Promise<{ key: string; claims: JWTPayload }> {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!match?.[1] || !match[2]) throw new Error(`no VAPID authorization: ${header}`);
  const raw = Buffer.from(match[2], 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('k is not an uncompressed P-256 key');
  const key = await importJWK(
    {
      kty: 'EC',
      crv: 'P-256',
      x: raw.subarray(1, 33).toString('base64url'),
      y: raw.subarray(33).toString('base64url'),
    },
    'ES256',
  );
  const { payload } = await jwtVerify(match[1], key, { algorithms: ['ES256'], audience: origin });
  if (typeof payload.exp !== 'number' || typeof payload.sub !== 'string')
    throw new Error('exp and sub required');
  return { key: match[2], claims: payload };
}

/** `plain`: serve http instead of https (for a deployment that allows loopback http endpoints). */
export async function startPushService(options: { plain?: boolean } = {}): Promise<PushService> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const keys = new Map<string, Keys>();
  const scripted = new Map<string, number[]>();
  const received: Received[] = [];
  const refused: string[] = [];
  const attempts = new Map<string, number>();
  let held: Promise<void> | null = null;
  let origin = '';

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const id = (request.url ?? '').replace(/^\/push\//, '');
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      if (held) await held;
      if (service.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, service.delayMs));
      const script = scripted.get(id);
      const status = script?.shift();
      if (status !== undefined && status !== 201) {
        response.writeHead(status).end();
        return;
      }
      const subscription = keys.get(id);
      try {
        if (!subscription) throw new Error(`unknown subscription ${id}`);
        if (request.headers['content-encoding'] !== 'aes128gcm') throw new Error('not aes128gcm');
        const vapid = await verifyVapid(request.headers.authorization, origin);
        const plain = ece.decrypt(Buffer.concat(chunks), {
          version: 'aes128gcm',
          privateKey: subscription.ecdh,
          authSecret: subscription.auth,
        });
        received.push({
          subscription: id,
          vapidKey: vapid.key,
          claims: vapid.claims,
          payload: JSON.parse(plain.toString('utf8')),
          ttl: Number(request.headers.ttl),
          at: Date.now(),
        });
        response.writeHead(201).end();
      } catch (error) {
        refused.push(String(error));
        response.writeHead(400).end();
      }
    });
  };
  const server = options.plain
    ? createHttpServer(handle)
    : createServer({ key: pems.private, cert: pems.cert }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `${options.plain ? 'http' : 'https'}://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const service: PushService = {
    delayMs: 0,
    origin,
    agent: new Agent({ ca: pems.cert, keepAlive: true }),
    ca: pems.cert,
    received,
    refused,
    attempts,
    subscribe() {
      const id = randomBytes(8).toString('hex');
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16).toString('base64url');
      keys.set(id, { ecdh, auth });
      return {
        id,
        body: {
          endpoint: `${origin}/push/${id}`,
          expirationTime: null,
          keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth },
        },
      };
    },
    answer(subscriptionId, ...statuses) {
      scripted.set(subscriptionId, statuses);
    },
    hold() {
      let release = () => {};
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        held = null;
        release();
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return service;
}
