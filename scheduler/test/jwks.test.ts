import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.ts';
import { KeySourceUnavailable, TokenRejected } from '../src/auth/errors.ts';
import { createVerifier, type TokenVerifier } from '../src/auth/verifier.ts';
import { openTestDatabase, type TestDatabase } from './support/database.ts';
import {
  type JwksBehaviour,
  type JwksServer,
  type SigningKey,
  signingKey,
  startJwksServer,
} from './support/jwks-server.ts';

/**
 * The identity provider's key set under outage: stale-if-error, backoff, rotation, and
 * every broken answer a 503, never a 401. Time is a counter the test moves.
 */
const AUDIENCE = 'urn:scheduler:jwks-test';
let server: JwksServer;
let first: SigningKey;
let clock: number;
let verifier: TokenVerifier;

const options = () => ({
  url: server.url,
  timeoutMs: 300,
  maxBytes: 64 * 1024,
  maxAgeMs: 600_000,
  cooldownMs: 30_000,
  minBackoffMs: 1000,
  maxBackoffMs: 8000,
  now: () => clock,
});

beforeAll(async () => {
  server = await startJwksServer(AUDIENCE);
  first = await signingKey('key-1');
});
afterAll(async () => server?.close());
beforeEach(() => {
  server.keys = [first];
  server.behaviour = 'ok';
  server.hits = 0;
  clock = 1_000_000;
  verifier = createVerifier({ issuer: server.issuer, audience: AUDIENCE, jwks: options() });
});

const unavailable = { name: 'KeySourceUnavailable' };

describe('JWKS key source', () => {
  it('fetches the key set once and verifies every later token from it', async () => {
    for (let i = 0; i < 3; i++) await expect(verifier.verify(await server.sign(first))).resolves.toBeTruthy();
    expect(server.hits).toBe(1);
  });

  it('keeps verifying with the last good keys while the provider is down, refetching in the background', async () => {
    await verifier.verify(await server.sign(first));
    server.behaviour = 'status-500';
    clock += 600_001; // the keys are stale now
    await expect(verifier.verify(await server.sign(first))).resolves.toMatchObject({ sub: 'jwks-user' });
    await vi.waitFor(() => expect(server.hits).toBe(2), { timeout: 10_000 });
    // Backing off: more requests do not touch the failing provider.
    for (let i = 0; i < 5; i++) await verifier.verify(await server.sign(first));
    expect(server.hits).toBe(2);
    // After the backoff the next request tries again, and recovers.
    server.behaviour = 'ok';
    clock += 1000;
    await verifier.verify(await server.sign(first));
    await vi.waitFor(() => expect(server.hits).toBe(3), { timeout: 10_000 });
    clock += 1;
    await verifier.verify(await server.sign(first));
    expect(server.hits).toBe(3);
  });

  it('backs off exponentially while it has no keys at all, failing fast in between', async () => {
    server.behaviour = 'status-500';
    const token = await server.sign(first);
    const attempt = async (expectedHits: number) => {
      await expect(verifier.verify(token)).rejects.toMatchObject(unavailable);
      expect(server.hits).toBe(expectedHits);
    };
    await attempt(1);
    await attempt(1); // within 1 s of the failure: no request
    clock += 1000;
    await attempt(2);
    clock += 1999;
    await attempt(2); // the second backoff is 2 s
    clock += 1;
    await attempt(3);
    clock += 4000;
    await attempt(4);
    clock += 8000;
    await attempt(5);
    clock += 8000; // capped at maxBackoffMs
    await attempt(6);
    server.behaviour = 'ok';
    clock += 8000;
    await expect(verifier.verify(token)).resolves.toBeTruthy();
  });

  it.each<JwksBehaviour>(['status-500', 'html', 'not-a-key-set', 'stall-body', 'endless', 'reset'])(
    'reports a provider that answers %s as unavailable, not as a bad token',
    async (behaviour) => {
      server.behaviour = behaviour;
      const error = await verifier.verify(await server.sign(first)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KeySourceUnavailable);
      expect(error).not.toBeInstanceOf(TokenRejected);
    },
  );

  it('reports a published key that cannot be imported as unavailable, not as a bad token', async () => {
    const broken = await signingKey('key-broken');
    // An EC key whose point is not on the curve: the provider's mistake, not the client's.
    server.keys = [{ ...broken, publicJwk: { ...broken.publicJwk, x: broken.publicJwk.y } }];
    const error = await verifier.verify(await server.sign(broken)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeySourceUnavailable);
  });

  it('tells its owner about every failed refresh, background ones included', async () => {
    const failures: string[] = [];
    verifier = createVerifier({
      issuer: server.issuer,
      audience: AUDIENCE,
      jwks: { ...options(), onRefreshError: (error) => failures.push(error.message) },
    });
    await verifier.verify(await server.sign(first));
    server.behaviour = 'status-500';
    clock += 600_001;
    await verifier.verify(await server.sign(first));
    await vi.waitFor(() => expect(failures).toEqual(['answered HTTP 500']), { timeout: 10_000 });
  });

  it('follows a key rotation with one refetch, and at most one per cooldown for unknown kids', async () => {
    await verifier.verify(await server.sign(first));
    const second = await signingKey('key-2');
    server.keys = [first, second];
    clock += 30_001;
    await expect(verifier.verify(await server.sign(second))).resolves.toBeTruthy();
    expect(server.hits).toBe(2);
    const forged = await signingKey('key-forged');
    for (let i = 0; i < 3; i++) {
      await expect(verifier.verify(await server.sign(forged))).rejects.toMatchObject({
        name: 'TokenRejected',
        reason: 'no matching signing key',
      });
    }
    expect(server.hits).toBe(2);
  });
});

describe('JWKS outage through the API', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => db?.dispose());

  it.each<JwksBehaviour>(['status-500', 'html', 'stall-body', 'endless'])(
    'answers 503 SERVICE_UNAVAILABLE when the provider answers %s',
    async (behaviour) => {
      server.behaviour = behaviour;
      const app = await buildApp({ db: db.db, verifier });
      const response = await app.inject({
        method: 'GET',
        url: '/api/v1/roles',
        headers: { authorization: `Bearer ${await server.sign(first)}` },
      });
      await app.close();
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        error: { code: 'SERVICE_UNAVAILABLE', message: 'identity provider keys unavailable' },
      });
    },
  );
});
