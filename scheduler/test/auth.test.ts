import { Writable } from 'node:stream';
import { generateKeyPair, type JWTPayload } from 'jose';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { claimToUuid, identityFromClaims } from '../src/auth/identity.ts';
import { createVerifier, readPublicKeyFile } from '../src/auth/verifier.ts';
import { defaultClaimNames as defaultClaims } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { Provisioner } from '../src/tenants/provisioning.ts';
import {
  createTestContext,
  FORBIDDEN_BODY,
  hmacWithPublicKey,
  INVALID_TOKEN_BODY,
  MISSING_TOKEN_BODY,
  type TestContext,
  tenantWireId,
  uniqueName,
} from './support/context.ts';
import { signToken, TEST_AUDIENCE, TEST_ISSUER, unsecuredToken } from './support/tokens.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => ctx?.close());

const get = (token?: string, headers?: Record<string, string>) =>
  ctx.request('GET', '/api/v1/roles', { ...(token ? { token } : {}), ...(headers ? { headers } : {}) });

describe('bearer token checks', () => {
  it('accepts a valid token', async () => {
    const response = await get(await ctx.token({ role: 'admin', tenant: uniqueName('valid') }));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([]);
  });

  it('answers 401 "missing bearer token" without an Authorization header', async () => {
    const response = await get();
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(MISSING_TOKEN_BODY);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });

  it.each([
    ['a Basic header', 'Basic YWRtaW46YWRtaW4='],
    ['a bare word', 'Bearer'],
    ['garbage', 'Bearer not-a-jwt'],
    ['three empty parts', 'Bearer ..'],
  ])('answers 401 "invalid token" for %s', async (_label, header) => {
    const response = await get(undefined, { authorization: header });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects an expired token', async () => {
    const response = await get(await ctx.token({ role: 'admin', expiresIn: -3600 }));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token from another issuer', async () => {
    const response = await get(await ctx.token({ role: 'admin', issuer: 'https://evil.example' }));
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token for another audience', async () => {
    const response = await get(await ctx.token({ role: 'admin', audience: 'another-api' }));
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token signed by another key', async () => {
    const { privateKey } = await generateKeyPair('EdDSA');
    const forged = await signToken(
      { ...ctx.keys, privateKey },
      { tenant: 'tenant-a', role: 'admin', sub: 'mallory' },
    );
    expect((await get(forged)).json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token whose payload was altered after signing', async () => {
    const [header, , signature] = (await ctx.token({ role: 'employee' })).split('.');
    const payload = Buffer.from(
      JSON.stringify({
        sub: 'employee-1',
        tenant_id: 'tenant-a',
        role: 'admin',
        iss: TEST_ISSUER,
        aud: TEST_AUDIENCE,
        exp: 9e9,
      }),
    ).toString('base64url');
    expect((await get(`${header}.${payload}.${signature}`)).json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects alg "none"', async () => {
    const token = unsecuredToken({
      sub: 'x',
      tenant_id: 'tenant-a',
      role: 'admin',
      iss: TEST_ISSUER,
      aud: TEST_AUDIENCE,
      exp: 9e9,
    });
    const response = await get(token);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects HS256 signed with the public key as the secret', async () => {
    const token = hmacWithPublicKey(ctx.keys.publicPem, {
      sub: 'x',
      tenant_id: 'tenant-a',
      role: 'admin',
      iss: TEST_ISSUER,
      aud: TEST_AUDIENCE,
      exp: Math.floor(Date.now() / 1000) + 600,
    });
    const response = await get(token);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token without a tenant claim', async () => {
    const token = await ctx.token({ role: 'admin', tenant: '' });
    expect((await get(token)).json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('answers 403 for a valid token whose role this API does not know', async () => {
    const response = await get(await ctx.token({ role: 'auditor' }));
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it('refuses a token without exp: it would be valid forever', async () => {
    const response = await get(await ctx.token({ role: 'admin', expiresIn: null }));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer error="invalid_token", error_description="token has no exp claim"',
    );
  });

  it('answers 401, never 500, for a lone surrogate in an id claim', async () => {
    for (const extra of [
      { sub: '\ud800' },
      { tenant: 'acme\udc00' },
      { role: 'customer', customer: '\ud83d' },
    ]) {
      const response = await get(await ctx.token({ role: 'admin', ...extra }));
      expect(response.statusCode, JSON.stringify(extra)).toBe(401);
      expect(response.json()).toEqual(INVALID_TOKEN_BODY);
      expect(response.headers['www-authenticate']).toContain('token has a malformed id claim');
    }
  });

  it('says why in WWW-Authenticate (RFC 6750) while the body stays fixed', async () => {
    const { privateKey } = await generateKeyPair('EdDSA');
    const cases: [string, string][] = [
      [await ctx.token({ role: 'admin', expiresIn: -3600 }), 'token expired'],
      [await ctx.token({ role: 'admin', issuer: 'https://evil.example' }), 'unexpected issuer'],
      [await ctx.token({ role: 'admin', audience: 'another-api' }), 'unexpected audience'],
      [
        await signToken({ ...ctx.keys, privateKey }, { tenant: 'tenant-a', role: 'admin', sub: 'm' }),
        'signature verification failed',
      ],
      ['not-a-jwt', 'malformed token'],
      [await ctx.token({ role: 'admin', tenant: '' }), 'token has no tenant claim'],
    ];
    for (const [token, reason] of cases) {
      const response = await get(token);
      expect(response.statusCode, reason).toBe(401);
      expect(response.json()).toEqual(INVALID_TOKEN_BODY);
      expect(response.headers['www-authenticate']).toBe(
        `Bearer error="invalid_token", error_description="${reason}"`,
      );
    }
    const missing = await get();
    expect(missing.headers['www-authenticate']).toBe('Bearer');
  });

  it('takes the highest known role from an array claim', async () => {
    const response = await ctx.request('POST', '/api/v1/roles', {
      token: await ctx.token({ role: ['offline_access', 'employee', 'admin'], tenant: uniqueName('array') }),
      body: { name: 'From array claim' },
    });
    expect(response.statusCode).toBe(201);
  });
});

describe('claim mapping', () => {
  const derivedV5 = /^[0-9a-f]{12}5[0-9a-f]{3}[89ab][0-9a-f]{15}$/;

  it('maps a non-UUID subject to a stable UUIDv5 per issuer', () => {
    const a = claimToUuid('https://one', 'alice');
    expect(a).toMatch(derivedV5);
    expect(claimToUuid('https://one', 'alice')).toBe(a);
    expect(claimToUuid('https://two', 'alice')).not.toBe(a);
  });

  it('keeps a canonical (lowercase, hyphenated) UUID that is not version 5', () => {
    expect(claimToUuid('x', '3f2504e0-4f89-41d3-9a0c-0305e82c3301')).toBe('3f2504e04f8941d39a0c0305e82c3301');
    expect(claimToUuid('x', '00000000-0000-0000-0000-000000000000')).toBe('0'.repeat(32));
  });

  it('derives every other spelling of a UUID, so two claim values never share an id', () => {
    const canonical = claimToUuid('x', '3f2504e0-4f89-41d3-9a0c-0305e82c3301');
    for (const spelling of ['3F2504E0-4F89-41D3-9A0C-0305E82C3301', '3f2504e04f8941d39a0c0305e82c3301']) {
      const id = claimToUuid('x', spelling);
      expect(id).toMatch(derivedV5);
      expect(id).not.toBe(canonical);
    }
  });

  it('cannot be steered into another identity: a claim equal to a derived id is derived again', () => {
    // alice's derived id, written as a UUID by a user who controls their own claim value
    const alice = claimToUuid('https://one', 'alice');
    const hyphenated = `${alice.slice(0, 8)}-${alice.slice(8, 12)}-${alice.slice(12, 16)}-${alice.slice(16, 20)}-${alice.slice(20)}`;
    for (const imitation of [alice, hyphenated]) {
      expect(claimToUuid('https://one', imitation)).not.toBe(alice);
    }
  });

  it('takes id claims exactly as sent: padding and number-or-text make different ids', () => {
    const idOf = (sub: unknown) => {
      const identity = identityFromClaims(
        { sub, tenant_id: 't', role: 'admin' } as unknown as JWTPayload,
        'iss',
        defaultClaims,
      );
      return typeof identity === 'string' ? identity : identity.userId;
    };
    const ids = [
      idOf('alice'),
      idOf(' alice'),
      idOf('alice\t'),
      idOf('42'),
      idOf(42),
      idOf('\u0000number:42'),
    ];
    expect(ids.at(-1)).toBe('malformed-claim');
    expect(new Set(ids.slice(0, 5)).size).toBe(5);
    expect(idOf('')).toBe('missing-subject');
  });

  it('reads a dotted role path such as Keycloak realm roles', () => {
    const identity = identityFromClaims(
      { sub: 'u', org: { id: 'acme' }, realm_access: { roles: ['uma_authorization', 'employee'] } },
      'iss',
      { ...defaultClaims, tenant: 'org.id', role: 'realm_access.roles' },
    );
    expect(identity).toMatchObject({ role: 'employee', tenantId: claimToUuid('iss', 'acme') });
  });

  it.each([
    ['sub', { sub: '\ud800', tenant_id: 't', role: 'admin' }],
    ['tenant', { sub: 'u', tenant_id: 'a\udfffb', role: 'admin' }],
    ['customer', { sub: 'u', tenant_id: 't', role: 'customer', customer_id: '\ud83d' }],
    ['an object', { sub: { id: 1 }, tenant_id: 't', role: 'admin' }],
    ['a fraction', { sub: 'u', tenant_id: 1.5, role: 'admin' }],
  ])('calls a malformed id claim (%s) malformed, never throws', (_label, payload) => {
    // Claims as an identity provider might send them, whatever jose's types expect.
    expect(identityFromClaims(payload as unknown as JWTPayload, 'iss', defaultClaims)).toBe(
      'malformed-claim',
    );
  });
});

describe('just-in-time provisioning', () => {
  it('creates the tenant with VAPID keys and default settings, and the user, from the first token', async () => {
    const tenantName = uniqueName('fresh-tenant');
    const caller = await ctx.caller('admin', tenantName, 'first-admin', {
      name: 'Ada',
      email: 'ada@example.test',
    });
    const settings = await caller.request('GET', '/api/v1/tenant/settings');
    expect(settings.statusCode).toBe(200);
    expect(settings.json()).toMatchObject({
      tenant_id: tenantWireId(tenantName),
      time_tracking_enabled: false,
      timezone: 'UTC',
    });

    const tenant = await ctx.db.db
      .selectFrom('tenants')
      .selectAll()
      .where('id', '=', claimToUuid(TEST_ISSUER, tenantName))
      .executeTakeFirstOrThrow();
    // P-256 public key, uncompressed point, base64url: 65 bytes -> 87 characters.
    expect(tenant.vapid_public_key).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(tenant.vapid_private_key).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const users = await caller.request('GET', '/api/v1/users');
    expect(users.json()).toEqual([
      expect.objectContaining({
        id: caller.userId,
        role: 'admin',
        display_name: 'Ada',
        email: 'ada@example.test',
      }),
    ]);
  });

  it('writes nothing for an identity it has already provisioned, and updates a changed one', async () => {
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        queries += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const provisioner = new Provisioner({ db: ctx.db.db.withPlugin(counting) });
    const identity = {
      tenantId: claimToUuid(TEST_ISSUER, uniqueName('memo-tenant')),
      userId: claimToUuid(TEST_ISSUER, 'memo-user'),
      role: 'employee' as const,
      customerId: null,
      customerClaim: null,
      issuer: TEST_ISSUER,
      name: 'Before',
      email: null,
    };
    await provisioner.ensure(identity);
    const first = queries;
    expect(first).toBeGreaterThan(0);
    await Promise.all([provisioner.ensure(identity), provisioner.ensure(identity)]);
    expect(queries).toBe(first);

    await provisioner.ensure({ ...identity, name: 'After' });
    expect(queries).toBeGreaterThan(first);
    const row = await ctx.db.db
      .selectFrom('users')
      .select(['display_name', 'role'])
      .where('tenant_id', '=', identity.tenantId)
      .where('id', '=', identity.userId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ display_name: 'After', role: 'employee' });
  });

  it('keeps the row at the latest token, also when a role goes back and forth', async () => {
    const tenant = uniqueName('flip');
    const roleInDb = async () =>
      (
        await ctx.db.db
          .selectFrom('users')
          .select('role')
          .where('tenant_id', '=', tenantWireId(tenant))
          .where('id', '=', claimToUuid(TEST_ISSUER, 'bob'))
          .executeTakeFirstOrThrow()
      ).role;
    for (const role of ['admin', 'customer', 'admin', 'employee', 'admin'] as const) {
      await get(await ctx.token({ role, tenant, sub: 'bob' }));
      expect(await roleInDb(), role).toBe(role);
    }
    const admin = await ctx.token({ role: 'admin', tenant, sub: 'bob' });
    const users = await ctx.request('GET', '/api/v1/users', { token: admin });
    expect(users.json().map((u: { role: string }) => u.role)).toEqual(['admin']);
  });

  it('trusts its memo for five minutes, then writes again (other processes may have changed the row)', async () => {
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        queries += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    let now = new Date('2026-11-22T10:00:00Z');
    const provisioner = new Provisioner({ db: ctx.db.db.withPlugin(counting), clock: { now: () => now } });
    const identity = {
      tenantId: claimToUuid(TEST_ISSUER, uniqueName('ttl')),
      userId: claimToUuid(TEST_ISSUER, 'ttl-user'),
      role: 'employee' as const,
      customerId: null,
      customerClaim: null,
      issuer: TEST_ISSUER,
      name: null,
      email: null,
    };
    await provisioner.ensure(identity);
    const first = queries;
    now = new Date(now.getTime() + 5 * 60_000 - 1);
    await provisioner.ensure(identity);
    expect(queries).toBe(first);
    now = new Date(now.getTime() + 1);
    await provisioner.ensure(identity);
    expect(queries).toBeGreaterThan(first);
  });

  it('provisions one tenant under concurrent first requests', async () => {
    const raceTenant = uniqueName('race-tenant');
    const tokens = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ctx.token({ role: 'admin', tenant: raceTenant, sub: `racer-${i}` }),
      ),
    );
    const responses = await Promise.all(tokens.map((token) => get(token)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const count = await ctx.db.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', claimToUuid(TEST_ISSUER, raceTenant))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(8);
  });
});

describe('rejection log', () => {
  it('records why a token was refused, at info level, without the token', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const app = await buildApp({
      db: ctx.db.db,
      verifier: createVerifier({
        issuer: TEST_ISSUER,
        audience: TEST_AUDIENCE,
        publicKey: readPublicKeyFile(ctx.keys.publicKeyFile),
      }),
      logger: createLogger('info', { interactive: false, destination }),
    });
    const token = await ctx.token({ role: 'admin', expiresIn: -3600 });
    const response = await app.inject({
      method: 'GET',
      url: '/api/v1/roles',
      headers: { authorization: `Bearer ${token}` },
    });
    await app.close();
    expect(response.statusCode).toBe(401);
    const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string; reason?: string });
    expect(entries).toContainEqual(
      expect.objectContaining({ level: 30, msg: 'bearer token rejected', reason: 'token expired' }),
    );
    expect(lines.join('\n')).not.toContain(token);
  });
});
