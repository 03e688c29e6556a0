import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { sendEndlessBody } from './endless-body.ts';

/**
 * A JWKS endpoint whose answers a test controls: the documented key set (RFC 7517,
 * `{"keys":[…]}` with `kid`, `alg`, `use`), or the ways real providers fail.
 */
export type JwksBehaviour =
  | 'ok'
  | 'status-500'
  | 'html'
  | 'not-a-key-set'
  | 'stall-body'
  | 'endless'
  | 'reset'
  /** 200 with `raw` as the body, whatever it is. */
  | 'raw';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

export interface JwksServer {
  url: URL;
  issuer: string;
  /** Keys published right now. */
  keys: SigningKey[];
  behaviour: JwksBehaviour;
  /** How many times the key set was requested. */
  hits: number;
  /** The body of the `raw` behaviour. */
  raw: string;
  sign(key: SigningKey, claims?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startJwksServer(audience: string): Promise<JwksServer> {
  const state = { behaviour: 'ok' as JwksBehaviour, hits: 0, keys: [] as SigningKey[], raw: '' };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    state.hits += 1;
    switch (state.behaviour) {
      case 'ok':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ keys: state.keys.map((k) => k.publicJwk) }));
        return;
      case 'status-500':
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
        return;
      case 'html':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
        return;
      case 'not-a-key-set':
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":"none"}');
        return;
      case 'stall-body': {
        // Headers at once, then half a body, then nothing: a timeout in the middle of the body.
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"keys":[');
        const timer = setTimeout(() => response.end(']}'), 60_000);
        timers.add(timer);
        request.on('close', () => clearTimeout(timer));
        return;
      }
      case 'endless':
        sendEndlessBody(request, response, '{"keys":[', '{"kty":"EC"},'.repeat(1000));
        return;
      case 'reset':
        request.socket.destroy();
        return;
      case 'raw':
        response.writeHead(200, { 'content-type': 'application/json' }).end(state.raw);
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const result: JwksServer = {
    url: new URL(`${issuer}/jwks`),
    issuer,
    get keys() {
      return state.keys;
    },
    set keys(keys) {
      state.keys = keys;
    },
    get behaviour() {
      return state.behaviour;
    },
    set behaviour(value) {
      state.behaviour = value;
    },
    get hits() {
      return state.hits;
    },
    set hits(value) {
      state.hits = value;
    },
    get raw() {
      return state.raw;
    },
    set raw(value) {
      state.raw = value;
    },
    sign: (key, claims = {}) =>
      new SignJWT({ tenant_id: 'jwks-tenant', role: 'admin', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject('jwks-user')
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(key.privateKey),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return result;
}
