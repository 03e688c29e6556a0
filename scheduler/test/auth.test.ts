import { generateKeyPair } from 'jose';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimToUuid, identityFromClaims } from '../src/auth/identity.ts';
import { Provisioner } from '../src/auth/provisioning.ts';
import { defaultClaimNames as defaultClaims } from '../src/config.ts';
import {
  createTestContext,
  FORBIDDEN_BODY,
  hmacWithPublicKey,
  INVALID_TOKEN_BODY,
  MISSING_TOKEN_BODY,
  type TestContext,
  tenantWireId,
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
    const response = await get(await ctx.token({ role: 'admin' }));
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

  it('takes the highest known role from an array claim', async () => {
    const response = await ctx.request('POST', '/api/v1/roles', {
      token: await ctx.token({ role: ['offline_access', 'employee', 'admin'] }),
      body: { name: 'From array claim' },
    });
    expect(response.statusCode).toBe(201);
  });
});

describe('claim mapping', () => {
  it('maps a non-UUID subject to a stable UUIDv5 per issuer', () => {
    const a = claimToUuid('https://one', 'alice');
    expect(a).toMatch(/^[0-9a-f]{12}5[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(claimToUuid('https://one', 'alice')).toBe(a);
    expect(claimToUuid('https://two', 'alice')).not.toBe(a);
  });

  it('keeps a UUID subject, hyphenated or not', () => {
    expect(claimToUuid('x', '3F2504E0-4F89-41D3-9A0C-0305E82C3301')).toBe('3f2504e04f8941d39a0c0305e82c3301');
    expect(claimToUuid('x', '3f2504e04f8941d39a0c0305e82c3301')).toBe('3f2504e04f8941d39a0c0305e82c3301');
  });

  it('reads a dotted role path such as Keycloak realm roles', () => {
    const identity = identityFromClaims(
      { sub: 'u', org: { id: 'acme' }, realm_access: { roles: ['uma_authorization', 'employee'] } },
      'iss',
      { ...defaultClaims, tenant: 'org.id', role: 'realm_access.roles' },
    );
    expect(identity).toMatchObject({ role: 'employee', tenantId: claimToUuid('iss', 'acme') });
  });
});

describe('just-in-time provisioning', () => {
  it('creates the tenant with VAPID keys and default settings, and the user, from the first token', async () => {
    const caller = await ctx.caller('admin', 'fresh-tenant', 'first-admin', {
      name: 'Ada',
      email: 'ada@example.test',
    });
    const settings = await caller.request('GET', '/api/v1/tenant/settings');
    expect(settings.statusCode).toBe(200);
    expect(settings.json()).toMatchObject({
      tenant_id: tenantWireId('fresh-tenant'),
      time_tracking_enabled: false,
      timezone: 'UTC',
    });

    const tenant = await ctx.db.db
      .selectFrom('tenants')
      .selectAll()
      .where('id', '=', claimToUuid(TEST_ISSUER, 'fresh-tenant'))
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
    const provisioner = new Provisioner(ctx.db.db.withPlugin(counting));
    const identity = {
      tenantId: claimToUuid(TEST_ISSUER, 'memo-tenant'),
      userId: claimToUuid(TEST_ISSUER, 'memo-user'),
      role: 'employee' as const,
      customerId: null,
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

  it('provisions one tenant under concurrent first requests', async () => {
    const tokens = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ctx.token({ role: 'admin', tenant: 'race-tenant', sub: `racer-${i}` }),
      ),
    );
    const responses = await Promise.all(tokens.map((token) => get(token)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const count = await ctx.db.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', claimToUuid(TEST_ISSUER, 'race-tenant'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(8);
  });
});
