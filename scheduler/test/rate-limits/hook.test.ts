import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import { buildApp } from '../../src/app.ts';
import { claimToUuid } from '../../src/auth/identity.ts';
import { createVerifier, readPublicKeyFile } from '../../src/auth/verifier.ts';
import type { RateLimits } from '../../src/config.ts';
import type { App } from '../../src/http/types.ts';
import { TenantTurns } from '../../src/rate-limits/tenant-turns.ts';
import { createTestContext, noGeocoder, type TestContext, uniqueName } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildProbeApp, type ProbeApp } from '../support/probe-app.ts';
import { createTestKeys, signToken, TEST_AUDIENCE, TEST_ISSUER } from '../support/tokens.ts';

/**
 * The API's rate limits through its routes (src/rate-limits/hook.ts): a token bucket per
 * user and one per tenant, every request with a caller taking from both, 429
 * RATE_LIMITED with Retry-After in whole seconds when either is empty. The same
 * boundaries hold for both stores; the clock is the app's own, moved by the test, never
 * waited on.
 */
let now = Date.parse('2030-01-01T12:00:00Z');
const clock = { now: () => new Date(now) };
const limits: RateLimits = { tenant: { burst: 6, perSecond: 1 }, user: { burst: 4, perSecond: 0.5 } };
const stores = ['process', 'database'] as const;
const contexts = new Map<string, TestContext>();

beforeAll(async () => {
  for (const store of stores)
    contexts.set(store, await createTestContext({ clock, rateLimits: { store, limits } }));
});
afterAll(async () => {
  for (const ctx of contexts.values()) await ctx.close();
});

/** A request of `sub` of `tenant` (each a user of their own), its status and, refused, its answer. */
function sender(ctx: TestContext) {
  return async (tenant: string, sub: string, role: 'admin' | 'employee' = 'admin', url = '/api/v1/roles') => {
    const response = await ctx.request('GET', url, { token: await ctx.token({ role, tenant, sub }) });
    return response.statusCode === 429
      ? { status: 429, retryAfter: response.headers['retry-after'], body: response.json() }
      : { status: response.statusCode };
  };
}

const tooMany = (whose: 'user' | 'tenant', seconds: number) => ({
  status: 429,
  retryAfter: String(seconds),
  body: {
    error: {
      code: 'RATE_LIMITED',
      message: `too many requests for this ${whose}; try again in ${seconds} s`,
    },
  },
});

describe.each(stores)('the rate limits kept in the %s', (store) => {
  let send: ReturnType<typeof sender>;
  beforeAll(() => {
    send = sender(contexts.get(store) as TestContext);
  });

  it('gives each user a bucket of their own, and each tenant one its users share', async () => {
    const tenant = uniqueName('busy');
    // The user's 4: the first user's fifth request is refused by their own bucket.
    for (let i = 1; i <= 4; i++) expect(await send(tenant, 'ann'), `#${i}`).toEqual({ status: 200 });
    expect(await send(tenant, 'ann')).toEqual(tooMany('user', 2));
    // The tenant's 6: a colleague gets the 2 left, then the tenant's bucket refuses.
    expect(await send(tenant, 'bob')).toEqual({ status: 200 });
    expect(await send(tenant, 'bob')).toEqual({ status: 200 });
    expect(await send(tenant, 'bob')).toEqual(tooMany('tenant', 1));
    expect(await send(tenant, 'cy')).toEqual(tooMany('tenant', 1));
    // Another tenant is not slowed at all, nor one of its users with the same name.
    const other = uniqueName('quiet');
    for (let i = 1; i <= 4; i++) expect(await send(other, 'ann'), `#${i}`).toEqual({ status: 200 });
  });

  it('refills each bucket as the clock moves, with Retry-After the exact whole seconds to wait', async () => {
    const tenant = uniqueName('steady');
    for (let i = 1; i <= 4; i++) expect((await send(tenant, 'ann')).status).toBe(200);
    // Half a token a second: a quarter after half a second, so 1.5 s to go, said as 2.
    now += 500;
    expect(await send(tenant, 'ann')).toEqual(tooMany('user', 2));
    // Three quarters after 1.5 s: half a second to go, said as 1.
    now += 1000;
    expect(await send(tenant, 'ann')).toEqual(tooMany('user', 1));
    // A token after 2 s: one request through, the next refused again, with the full wait.
    now += 500;
    expect(await send(tenant, 'ann')).toEqual({ status: 200 });
    expect(await send(tenant, 'ann')).toEqual(tooMany('user', 2));
    // A bucket never fills beyond its burst, however long it rests.
    now += 3_600_000;
    for (let i = 1; i <= 4; i++) expect((await send(tenant, 'ann')).status, `#${i}`).toBe(200);
    expect((await send(tenant, 'ann')).status).toBe(429);
  });

  it('takes nothing from either bucket for a refused request, or one the access checks refused', async () => {
    const tenant = uniqueName('patient');
    for (let i = 1; i <= 4; i++) expect((await send(tenant, 'ann')).status).toBe(200);
    // Refused requests as fast as can be: none of them takes the tenant's last 2 tokens.
    for (let i = 1; i <= 10; i++) expect((await send(tenant, 'ann')).status).toBe(429);
    // An employee on an admin route is refused before the limits (403), and takes nothing.
    for (let i = 1; i <= 10; i++) {
      expect((await send(tenant, 'eve', 'employee', '/api/v1/audit-log')).status).toBe(403);
    }
    expect(await send(tenant, 'bob')).toEqual({ status: 200 });
    expect(await send(tenant, 'bob')).toEqual({ status: 200 });
    expect(await send(tenant, 'bob')).toEqual(tooMany('tenant', 1));
  });

  it('counts every request of a caller, not only the ones that change something', async () => {
    const tenant = uniqueName('sloppy');
    const ctx = contexts.get(store) as TestContext;
    const token = await ctx.token({ role: 'admin', tenant, sub: 'ann' });
    // A body that breaks the schema is 422, after the limits: it took its token.
    for (let i = 1; i <= 4; i++) {
      expect((await ctx.request('POST', '/api/v1/roles', { token, body: {} })).statusCode).toBe(422);
    }
    expect((await ctx.request('POST', '/api/v1/roles', { token, body: { name: 'Late' } })).statusCode).toBe(
      429,
    );
  });

  it('never limits the routes without a caller: health and the API document', async () => {
    const tenant = uniqueName('drained');
    for (let i = 1; i <= 4; i++) expect((await send(tenant, 'ann')).status).toBe(200);
    expect((await send(tenant, 'ann')).status).toBe(429);
    const ctx = contexts.get(store) as TestContext;
    for (let i = 1; i <= 10; i++) {
      expect((await ctx.request('GET', '/health')).statusCode).toBe(200);
      expect((await ctx.request('GET', '/api/docs/openapi.json')).statusCode).toBe(200);
    }
  });
});

describe('the rate limits in the API document', () => {
  it('declare 429 with Retry-After on every route that takes a caller, and on no other', async () => {
    const ctx = contexts.get('process') as TestContext;
    const document = (await ctx.request('GET', '/api/docs/openapi.json')).json() as {
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
    };
    const withCaller: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const declared = operation.responses['429'] as
          | {
              headers?: Record<string, unknown>;
              content: { 'application/json': { examples: Record<string, unknown> } };
            }
          | undefined;
        const route = `${method.toUpperCase()} ${path}`;
        if (path.startsWith('/api/v1/')) {
          withCaller.push(route);
          expect(declared?.headers?.['Retry-After'], route).toEqual({
            description: 'Whole seconds until the request may be let through again',
            schema: { type: 'integer', minimum: 1, examples: [1] },
          });
          expect(Object.keys(declared?.content['application/json'].examples ?? {}), route).toContain(
            'RATE_LIMITED',
          );
        } else {
          expect(declared, route).toBeUndefined();
        }
      }
    }
    expect(withCaller).toContain('GET /api/v1/roles');
    expect(withCaller).toContain('POST /api/v1/f/{slug}/submit');
  });
});

describe('the default limits', () => {
  let db: TestDatabase;
  let app: App;
  beforeAll(async () => {
    db = await openTestDatabase();
    const keys = await createTestKeys();
    // Built as main.ts builds it without RATE_LIMIT_* settings: nothing about limits passed.
    app = await buildApp({
      db: db.db,
      geocoder: noGeocoder,
      clock,
      verifier: createVerifier({
        issuer: TEST_ISSUER,
        audience: TEST_AUDIENCE,
        publicKey: readPublicKeyFile(keys.publicKeyFile),
      }),
    });
    tokenOf = (tenant, sub) => signToken(keys, { role: 'admin', tenant, sub });
  });
  afterAll(async () => {
    await app?.close();
    await db?.dispose();
  });
  let tokenOf: (tenant: string, sub: string) => Promise<string>;

  /** A request that breaks the body's schema: 422 once let through, and no work for the database. */
  const cheap = async (token: string) =>
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/roles',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: '{}',
      })
    ).statusCode;

  it(
    'let a user send 200 at once and 20 a second, a tenant 1000 at once and 100 a second',
    async () => {
      const tenant = uniqueName('script');
      const tokens = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => tokenOf(tenant, `user-${n}`)));
      const [first, ...others] = tokens as [string, ...string[]];
      for (let i = 1; i <= 200; i++) expect(await cheap(first), `#${i}`).toBe(422);
      expect(await cheap(first)).toBe(429);
      // A twentieth of a second later, the user has one more.
      now += 50;
      expect(await cheap(first)).toBe(422);
      expect(await cheap(first)).toBe(429);
      // Five more users take the tenant's bucket down: the 799 left, and the 5 the clock gave it since.
      let letThrough = 0;
      for (const token of others.slice(0, 5))
        for (let i = 1; i <= 200; i++) if ((await cheap(token)) === 422) letThrough++;
      expect(letThrough).toBe(1000 - 201 + 5);
      // The seventh user has never sent a thing, and still the tenant's bucket refuses.
      const refused = await app.inject({
        method: 'GET',
        url: '/api/v1/roles',
        headers: { authorization: `Bearer ${others[5]}` },
      });
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json()).toEqual({
        error: { code: 'RATE_LIMITED', message: 'too many requests for this tenant; try again in 1 s' },
      });
    },
    1300 * 100,
  );
});

describe('the turns of a tenant’s requests', () => {
  let probe: ProbeApp;
  const turns = new TenantTurns({ concurrency: 1, queue: 1 });
  /** Buckets that never refuse here: the turns are what is tested. */
  const roomy: RateLimits = {
    tenant: { burst: 1000, perSecond: 1000 },
    user: { burst: 1000, perSecond: 1000 },
  };
  /** Requests inside the held route now, by name, each with its release. */
  const inside = new Map<string, () => void>();
  /** Names in the order their handler began. */
  const began: string[] = [];
  let entered: () => void = () => {};

  beforeAll(async () => {
    probe = await buildProbeApp(
      (app) => {
        // Held until the test lets it go: a request being handled for as long as the test wants.
        app.get<{ Querystring: { name: string } }>(
          '/api/v1/probe/held',
          { config: { access: 'member' } },
          async (request) => {
            const { name } = request.query;
            began.push(name);
            await new Promise<void>((release) => {
              inside.set(name, release);
              entered();
            });
            inside.delete(name);
            return { name };
          },
        );
      },
      { rateLimits: { store: 'process', limits: roomy }, tenantTurns: turns },
    );
  });
  afterAll(async () => probe?.close());

  const tokenOf = (tenant: string) => signToken(probe.keys, { role: 'admin', tenant, sub: 'ann' });
  /**
   * Sends a held request and waits until its handler holds it; answers its reply to come
   * (in an object: the reply is a thenable, which an async function would wait for).
   */
  async function hold(tenant: string, name: string) {
    const token = await tokenOf(tenant);
    const inHand = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const answer = probe.app.inject({
      method: 'GET',
      url: `/api/v1/probe/held?name=${name}`,
      headers: { authorization: `Bearer ${token}` },
    });
    // An answer before the handler holds it is a failure to show, not to wait on for ever.
    const early = await Promise.race([inHand.then(() => null), answer]);
    if (early) throw new Error(`answered ${early.statusCode} before held: ${early.body}`);
    return { answer: Promise.resolve(answer) };
  }
  const request = async (tenant: string, name: string) =>
    await probe.app.inject({
      method: 'GET',
      url: `/api/v1/probe/held?name=${name}`,
      headers: { authorization: `Bearer ${await tokenOf(tenant)}` },
    });

  it('lets a tenant’s request wait for its turn, refuses one more, and serves another tenant meanwhile', async () => {
    const busy = uniqueName('turns');
    const first = await hold(busy, 'a1');
    const waiting = request(busy, 'a2');
    // The other tenant has a turn of its own: served while the first holds the busy one's.
    const other = await hold(uniqueName('calm'), 'b1');
    // a2 waits (the queue holds one), so a third of the busy tenant is refused at once.
    const refused = await request(busy, 'a3');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toEqual({
      error: { code: 'RATE_LIMITED', message: 'too many requests at once for this tenant; try again in 1 s' },
    });
    expect(began).not.toContain('a2');
    inside.get('b1')?.();
    expect((await other.answer).json()).toEqual({ name: 'b1' });
    // The first answered: its turn goes to the one waiting.
    const secondIn = new Promise<void>((resolve) => {
      entered = resolve;
    });
    inside.get('a1')?.();
    expect((await first.answer).json()).toEqual({ name: 'a1' });
    await secondIn;
    inside.get('a2')?.();
    expect((await waiting).json()).toEqual({ name: 'a2' });
    expect(began.filter((name) => name !== 'b1' && name.startsWith('a'))).toEqual(['a1', 'a2']);
  });

  it('forgets a waiting request whose client hung up, which never reaches its handler', async () => {
    const tenant = uniqueName('hangup');
    // The turns are the tenant's by its id, as the access hook derives it from the claim.
    const waiting = () => turns.waiting(claimToUuid(TEST_ISSUER, tenant));
    const first = await hold(tenant, 'h1');
    const client = new AbortController();
    const abandoned = probe.app
      .inject({
        method: 'GET',
        url: '/api/v1/probe/held?name=h2',
        headers: { authorization: `Bearer ${await tokenOf(tenant)}` },
        signal: client.signal,
      })
      .catch((error: unknown) => error);
    await until(() => waiting() === 1);
    client.abort();
    await abandoned;
    // Gone from the queue as the connection closed, while h1 still holds the turn.
    expect(waiting()).toBe(0);
    const third = request(tenant, 'h3');
    await until(() => waiting() === 1);
    const thirdIn = new Promise<void>((resolve) => {
      entered = resolve;
    });
    inside.get('h1')?.();
    await first.answer;
    await thirdIn;
    inside.get('h3')?.();
    expect((await third).json()).toEqual({ name: 'h3' });
    expect(began).not.toContain('h2');
    expect(turns.tenants).toBe(0);
  });
});

describe('the turns under clients that come and go', () => {
  let probe: ProbeApp;
  const turns = new TenantTurns({ concurrency: 2, queue: 1000 });
  let base = '';

  beforeAll(async () => {
    probe = await buildProbeApp(
      (app) => {
        // A little work over a few turns of the event loop, so that a client may leave midway.
        app.get('/api/v1/probe/brief', { config: { access: 'member' } }, async () => {
          for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
          return { ok: true };
        });
      },
      {
        rateLimits: {
          store: 'process',
          limits: { tenant: { burst: 100_000, perSecond: 1000 }, user: { burst: 100_000, perSecond: 1000 } },
        },
        tenantTurns: turns,
      },
    );
    await probe.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(probe.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => probe?.close());

  it('gives every turn back, whenever its client hangs up: waiting, served or just answered', async () => {
    const tenant = uniqueName('comings');
    const token = await signToken(probe.keys, { role: 'admin', tenant, sub: 'ann' });
    const statuses = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const client = new AbortController();
        const answer = fetch(`${base}/api/v1/probe/brief`, {
          headers: { authorization: `Bearer ${token}` },
          signal: client.signal,
        });
        // Every other client hangs up after a different number of turns of the loop.
        if (i % 2 === 1)
          for (let turn = 0; turn < i % 17; turn++) await new Promise((resolve) => setImmediate(resolve));
        if (i % 2 === 1) client.abort();
        return answer.then(
          (response) => response.status,
          () => 'gone',
        );
      }),
    );
    expect(statuses.filter((status) => status !== 200 && status !== 'gone')).toEqual([]);
    // Once the server has seen every connection end, the tenant holds no turn and waits for none.
    await until(() => turns.tenants === 0);
    const after = await fetch(`${base}/api/v1/probe/brief`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.status).toBe(200);
  });
});
