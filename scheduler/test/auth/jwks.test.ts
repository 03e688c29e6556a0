import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { KeySourceUnavailable, TokenRejected } from '../../src/auth/errors.ts';
import { createJwksKeySource, type JwksOptions } from '../../src/auth/jwks.ts';
import { createVerifier } from '../../src/auth/verifier.ts';
import { OutboundError } from '../../src/outbound/fetch-json.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import {
  type JwksBehaviour,
  type JwksServer,
  type SigningKey,
  signingKey,
  startJwksServer,
} from '../support/jwks-server.ts';

/**
 * The JWKS key source with limits unlike its defaults, so each configured limit is seen
 * to apply: cache age, rotation cooldown, backoff, deadline and size; and the identity
 * provider under outage, every broken answer a 503, never a 401. Time is a counter the
 * test moves.
 */
const AUDIENCE = 'urn:scheduler:jwks-source-test';
let server: JwksServer;
let first: SigningKey;
let second: SigningKey;
let clock: number;
let refreshErrors: Error[];

/** A stalling provider's deadline: short, since nothing but the deadline ends those tests. */
const STALL_DEADLINE_MS = 300;
const options = (overrides: Partial<JwksOptions> = {}): JwksOptions => ({
  url: server.url,
  // Far from what a local answer takes, even on a loaded machine: only the tests of the
  // deadline (a provider that stalls) set a short one.
  timeoutMs: 20_000,
  maxBytes: 4096,
  maxAgeMs: 5000,
  cooldownMs: 2000,
  minBackoffMs: 100,
  maxBackoffMs: 400,
  now: () => clock,
  onRefreshError: (error) => refreshErrors.push(error),
  ...overrides,
});
const verifierWith = (overrides: Partial<JwksOptions> = {}) =>
  createVerifier({ issuer: server.issuer, audience: AUDIENCE, jwks: options(overrides) });

beforeAll(async () => {
  server = await startJwksServer(AUDIENCE);
  first = await signingKey('key-1');
  second = await signingKey('key-2');
});
afterAll(async () => server?.close());
beforeEach(() => {
  server.keys = [first];
  server.behaviour = 'ok';
  server.hits = 0;
  clock = 5_000_000;
  refreshErrors = [];
});

/** What a call rejects with. */
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );

describe('refresh', () => {
  it('fetches the key set, and warms up a verifier', async () => {
    const source = createJwksKeySource(options());
    await expect(source.refresh()).resolves.toBeUndefined();
    expect(server.hits).toBe(1);
    const verifier = verifierWith();
    await expect(verifier.warmUp()).resolves.toBeUndefined();
    expect(server.hits).toBe(2);
    await verifier.verify(await server.sign(first));
    expect(server.hits).toBe(2);
  });

  it('reports a failure with its reason and cause, and tells the operator hook', async () => {
    server.behaviour = 'status-500';
    const source = createJwksKeySource(options());
    const error = await rejection(source.refresh());
    expect(error).toBeInstanceOf(KeySourceUnavailable);
    expect((error as Error).name).toBe('KeySourceUnavailable');
    expect((error as Error).message).toBe('identity provider keys unavailable: answered HTTP 500');
    const cause = (error as Error).cause;
    expect(cause).toBeInstanceOf(OutboundError);
    expect(cause).toMatchObject({ failure: 'status' });
    expect(refreshErrors).toEqual([cause]);
  });

  it('does not ask again while backing off, then asks once the backoff is over', async () => {
    server.behaviour = 'status-500';
    const source = createJwksKeySource(options());
    await rejection(source.refresh());
    clock += 99;
    await expect(source.refresh()).resolves.toBeUndefined();
    expect(server.hits).toBe(1);
    clock += 1;
    server.behaviour = 'ok';
    await expect(source.refresh()).resolves.toBeUndefined();
    expect(server.hits).toBe(2);
  });

  it('shares one fetch between concurrent requests', async () => {
    const verifier = verifierWith();
    const token = await server.sign(first);
    await Promise.all(Array.from({ length: 5 }, () => verifier.verify(token)));
    expect(server.hits).toBe(1);
  });

  it('accepts an empty key set, which then matches no token', async () => {
    server.keys = [];
    const verifier = verifierWith();
    await expect(rejection(verifier.verify(await server.sign(first)))).resolves.toMatchObject({
      name: 'TokenRejected',
      reason: 'no matching signing key',
    });
  });
});

describe('answers that are not a key set', () => {
  it.each([
    ['null', 'null'],
    ['a string', '"keys"'],
    ['an array', '[]'],
    ['an object without keys', '{}'],
    ['keys that are not an array', '{"keys":{"kty":"EC"}}'],
    ['a null key', '{"keys":[null]}'],
    ['a number among the keys', '{"keys":[{"kty":"EC"},1]}'],
  ])('refuses %s', async (_label, raw) => {
    server.behaviour = 'raw';
    server.raw = raw;
    const error = await rejection(createJwksKeySource(options()).refresh());
    expect(error).toBeInstanceOf(KeySourceUnavailable);
    expect((error as Error).message).toBe(
      'identity provider keys unavailable: answer is not a JSON Web Key Set',
    );
  });

  it('refuses a key set above the configured size', async () => {
    server.behaviour = 'raw';
    server.raw = JSON.stringify({ keys: [first.publicJwk], padding: 'x'.repeat(5000) });
    const error = await rejection(createJwksKeySource(options()).refresh());
    expect((error as Error).message).toBe(
      'identity provider keys unavailable: response body exceeds 4096 bytes',
    );
  });

  it('gives up at the configured deadline', async () => {
    server.behaviour = 'stall-body';
    const started = Date.now();
    const error = await rejection(createJwksKeySource(options({ timeoutMs: 150 })).refresh());
    expect((error as Error).message).toBe(
      'identity provider keys unavailable: no complete answer within 150 ms',
    );
    // The stalling server ends its body after 60 s: ending well before that is the deadline's
    // doing, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it.each<JwksBehaviour>(['status-500', 'html', 'not-a-key-set', 'stall-body', 'endless', 'reset'])(
    'reports a provider that answers %s as unavailable, not as a bad token',
    async (behaviour) => {
      server.behaviour = behaviour;
      // Only a stall needs the deadline; the others are refused for what they answer.
      const timeoutMs = behaviour === 'stall-body' ? STALL_DEADLINE_MS : undefined;
      const error = await rejection(
        verifierWith(timeoutMs ? { timeoutMs } : {}).verify(await server.sign(first)),
      );
      expect(error).toBeInstanceOf(KeySourceUnavailable);
      expect(error).not.toBeInstanceOf(TokenRejected);
    },
  );

  it('reports a published key that cannot be imported as unavailable, not as a bad token', async () => {
    const broken = await signingKey('key-broken');
    // An EC key whose point is not on the curve: the provider's mistake, not the client's.
    server.keys = [{ ...broken, publicJwk: { ...broken.publicJwk, x: broken.publicJwk.y } }];
    const error = await rejection(verifierWith().verify(await server.sign(broken)));
    expect(error).toBeInstanceOf(KeySourceUnavailable);
  });
});

describe('defaults', () => {
  it('accepts a key set of 200 KiB, the default size cap being 256 KiB', async () => {
    server.behaviour = 'raw';
    server.raw = JSON.stringify({ keys: [first.publicJwk], padding: 'x'.repeat(200 * 1024) });
    const verifier = createVerifier({ issuer: server.issuer, audience: AUDIENCE, jwks: { url: server.url } });
    await expect(verifier.verify(await server.sign(first))).resolves.toMatchObject({ sub: 'jwks-user' });
  });

  it('keeps keys for ten minutes and backs off for a second, by default', async () => {
    // The defaults on the test's clock (only `now` given): waiting out real seconds would race
    // a loaded machine, and a moved clock tells the exact edges.
    const now = () => clock;
    const source = createJwksKeySource({ url: server.url, now });
    const verifier = createVerifier({
      issuer: server.issuer,
      audience: AUDIENCE,
      jwks: { url: server.url, now },
    });
    const token = await server.sign(first);
    await verifier.verify(token);
    clock += 10 * 60_000; // exactly the default age: still fresh
    await verifier.verify(token);
    expect(server.hits).toBe(1);
    clock += 1;
    await verifier.verify(token);
    await expect.poll(() => server.hits).toBe(2);
    server.behaviour = 'status-500';
    await rejection(source.refresh());
    expect(server.hits).toBe(3);
    clock += 999; // backing off: no request
    await expect(source.refresh()).resolves.toBeUndefined();
    expect(server.hits).toBe(3);
    clock += 1;
    await rejection(source.refresh());
    expect(server.hits).toBe(4);
  });

  it('refuses a key set above 256 KiB', async () => {
    server.behaviour = 'raw';
    server.raw = JSON.stringify({ keys: [first.publicJwk], padding: 'x'.repeat(257 * 1024) });
    const error = await rejection(createJwksKeySource({ url: server.url }).refresh());
    expect((error as Error).message).toMatch(/exceeds 262144 bytes$/);
  });
});

describe('cache age', () => {
  it('uses the keys until they are older than maxAgeMs, then refreshes in the background', async () => {
    const verifier = verifierWith();
    const token = await server.sign(first);
    await verifier.verify(token);
    clock += 5000; // exactly maxAgeMs: still fresh
    await verifier.verify(token);
    expect(server.hits).toBe(1);
    clock += 1;
    await verifier.verify(token);
    await expect.poll(() => server.hits).toBe(2);
    await verifier.verify(token);
    expect(server.hits).toBe(2);
  });

  it('keeps the old keys when the background refresh fails, backs off before the next, and recovers', async () => {
    const verifier = verifierWith();
    const token = await server.sign(first);
    await verifier.verify(token);
    server.behaviour = 'status-500';
    clock += 5001;
    await expect(verifier.verify(token)).resolves.toMatchObject({ sub: 'jwks-user' });
    await expect.poll(() => server.hits).toBe(2);
    // The operator hook hears of a failed background refresh too.
    await expect.poll(() => refreshErrors.map((error) => error.message)).toEqual(['answered HTTP 500']);
    clock += 99;
    await verifier.verify(token);
    expect(server.hits).toBe(2);
    // After the backoff the next request tries again, and the keys are fresh once more.
    server.behaviour = 'ok';
    clock += 1;
    await verifier.verify(token);
    await expect.poll(() => server.hits).toBe(3);
    clock += 1;
    await verifier.verify(token);
    expect(server.hits).toBe(3);
  });
});

describe('backoff without any keys', () => {
  it('doubles from minBackoffMs up to maxBackoffMs, failing fast in between', async () => {
    server.behaviour = 'status-500';
    const verifier = verifierWith();
    const token = await server.sign(first);
    const attempt = async (expectedHits: number) => {
      const error = await rejection(verifier.verify(token));
      expect(error).toBeInstanceOf(KeySourceUnavailable);
      expect(server.hits).toBe(expectedHits);
      return error as Error;
    };
    expect((await attempt(1)).message).toBe('identity provider keys unavailable: answered HTTP 500');
    // Failing fast: no fetch, and no reason to give.
    expect((await attempt(1)).message).toBe('identity provider keys unavailable');
    for (const [wait, hits] of [
      [100, 2],
      [199, 2],
      [1, 3],
      [399, 3],
      [1, 4],
      [400, 5],
      [400, 6],
    ] as const) {
      clock += wait;
      await attempt(hits);
    }
    // The provider is back: the first attempt after the backoff gets the keys.
    server.behaviour = 'ok';
    clock += 400;
    await expect(verifier.verify(token)).resolves.toMatchObject({ sub: 'jwks-user' });
  });
});

describe('key rotation', () => {
  it('refetches for an unknown kid only once the cooldown is over, then not again within it', async () => {
    const verifier = verifierWith();
    await verifier.verify(await server.sign(first));
    server.keys = [first, second];
    const rotated = await server.sign(second);
    clock += 2000; // exactly the cooldown: not yet
    await expect(rejection(verifier.verify(rotated))).resolves.toMatchObject({
      reason: 'no matching signing key',
    });
    expect(server.hits).toBe(1);
    clock += 1;
    await expect(verifier.verify(rotated)).resolves.toMatchObject({ sub: 'jwks-user' });
    expect(server.hits).toBe(2);
    // The cooldown starts again at that refetch: kids the new set lacks too cost no request.
    const forged = await signingKey('key-forged');
    for (let i = 0; i < 3; i++) {
      await expect(rejection(verifier.verify(await server.sign(forged)))).resolves.toMatchObject({
        name: 'TokenRejected',
        reason: 'no matching signing key',
      });
    }
    expect(server.hits).toBe(2);
  });

  it('lets the refused answer stand when the refetch fails', async () => {
    const verifier = verifierWith();
    await verifier.verify(await server.sign(first));
    server.behaviour = 'status-500';
    clock += 2001;
    const error = await rejection(verifier.verify(await server.sign(second)));
    expect(error).toBeInstanceOf(TokenRejected);
    expect(error).toMatchObject({ reason: 'no matching signing key' });
    expect(server.hits).toBe(2);
    // Backing off now: the old keys still verify, and no kid makes it ask again.
    clock += 50;
    await expect(verifier.verify(await server.sign(first))).resolves.toBeTruthy();
    await expect(rejection(verifier.verify(await server.sign(second)))).resolves.toBeInstanceOf(
      TokenRejected,
    );
    expect(server.hits).toBe(2);
  });

  it('does not refetch for a kid the key set holds twice', async () => {
    const twin = { ...second, kid: 'key-1', publicJwk: { ...second.publicJwk, kid: 'key-1' } };
    server.keys = [first, twin];
    const verifier = verifierWith();
    await expect(rejection(verifier.verify(await server.sign(first)))).resolves.toMatchObject({
      name: 'TokenRejected',
      reason: 'no matching signing key',
    });
    clock += 2001;
    await rejection(verifier.verify(await server.sign(first)));
    expect(server.hits).toBe(1);
  });
});

describe('a provider outage through the API', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => db?.dispose());

  it.each<JwksBehaviour>(['status-500', 'html', 'stall-body', 'endless'])(
    'answers 503 SERVICE_UNAVAILABLE when the provider answers %s',
    async (behaviour) => {
      server.behaviour = behaviour;
      const timeoutMs = behaviour === 'stall-body' ? STALL_DEADLINE_MS : undefined;
      const app = await buildApp({ db: db.db, verifier: verifierWith(timeoutMs ? { timeoutMs } : {}) });
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

describe('key rotation at the provider, through the API', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => db?.dispose());

  it('takes a new key without a restart, refuses a removed one after the cache age, and fails closed while the provider is down', async () => {
    const app = await buildApp({ db: db.db, verifier: verifierWith() });
    const roles = async (key: SigningKey) =>
      app.inject({
        method: 'GET',
        url: '/api/v1/roles',
        headers: { authorization: `Bearer ${await server.sign(key)}` },
      });
    try {
      expect((await roles(first)).statusCode).toBe(200);
      // The provider rotates: it publishes key-2 and drops key-1.
      server.keys = [second];
      clock += 2001; // past the refetch cooldown
      expect((await roles(second)).statusCode).toBe(200);
      expect(server.hits).toBe(2);
      // That refetch already replaced the cached set: key-1 is gone at once.
      const removed = await roles(first);
      expect(removed.statusCode).toBe(401);
      expect(removed.headers['www-authenticate']).toContain('no matching signing key');

      // A removal seen only through the cache age: key-3 published, then taken away.
      const third = await signingKey('key-3');
      server.keys = [second, third];
      clock += 2001;
      expect((await roles(third)).statusCode).toBe(200);
      server.keys = [second];
      clock += 4999; // within maxAgeMs of the last fetch: the cached key-3 still verifies
      expect((await roles(third)).statusCode).toBe(200);
      clock += 2; // older than maxAgeMs: this request starts the background refresh
      expect((await roles(third)).statusCode).toBe(200);
      await expect.poll(() => server.hits).toBe(4);
      // The refresh's request has arrived; its answer replaces the cached set a moment later
      // (on a loaded machine, after the next request may have been verified with the old set).
      await expect.poll(async () => (await roles(third)).statusCode).toBe(401);
      expect(server.hits).toBe(4);

      // The provider goes down: the cached key keeps verifying, an unknown kid is refused.
      server.behaviour = 'status-500';
      clock += 10_000;
      expect((await roles(second)).statusCode).toBe(200);
      const forged = await roles(await signingKey('key-forged'));
      expect(forged.statusCode).toBe(401);
      expect(forged.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'invalid token' } });
    } finally {
      await app.close();
    }
  });
});
