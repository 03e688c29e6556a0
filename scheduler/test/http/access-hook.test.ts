import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { KeySourceUnavailable } from '../../src/auth/errors.ts';
import type { TokenVerifier } from '../../src/auth/verifier.ts';
import { type App, identityOf } from '../../src/http/types.ts';
import {
  createTestContext,
  FORBIDDEN_BODY,
  hmacWithPublicKey,
  INVALID_TOKEN_BODY,
  MISSING_TOKEN_BODY,
  noGeocoder,
  type TestContext,
  tenantWireId,
  uniqueName,
} from '../support/context.ts';
import type { TestDatabase } from '../support/database.ts';
import {
  buildProbeApp,
  capturingLogger,
  expectError,
  type LogLine,
  type ProbeApp,
} from '../support/probe-app.ts';
import { signToken, TEST_AUDIENCE, TEST_ISSUER, type TestKeys, unsecuredToken } from '../support/tokens.ts';

/**
 * The access hook (src/http/access-hook.ts) on probe routes declared the way feature
 * routes are: who gets past it, what it answers and logs for a bad token, and the tenant
 * feature gate (`config.feature`), checked before the role; then every kind of bad
 * token on a feature route.
 */
let probe: ProbeApp;
let db: TestDatabase;
let keys: TestKeys;
let app: App;
let logs: LogLine[];

beforeAll(async () => {
  probe = await buildProbeApp((app) => {
    const whoAmI = async (request: Parameters<typeof identityOf>[0]) => identityOf(request);
    app.get('/api/v1/probe/authenticated', { config: { access: 'authenticated' } }, whoAmI);
    app.get('/api/v1/probe/member', { config: { access: 'member' } }, whoAmI);
    app.get('/api/v1/probe/admin', { config: { access: 'admin' } }, whoAmI);
    app.get('/api/v1/probe/default', whoAmI);
    app.get('/api/v1/probe/public', { config: { access: 'public' } }, async () => ({ public: true }));
    app.get('/probe/outside', async () => ({ outside: true }));
    // Declared the way the time-tracking routes are: off means 404 for every caller.
    app.get(
      '/api/v1/time-tracking/probe',
      { config: { access: 'admin', feature: 'time_tracking' } },
      async () => ({
        ok: true,
      }),
    );
  });
  ({ app, db, keys, logs } = probe);
});
afterAll(async () => probe?.close());
beforeEach(() => {
  logs.length = 0;
});

const get = (url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url, headers });
const tokenFor = (
  role: string,
  extra: Parameters<typeof signToken>[1]['extra'] = {},
  tenant = uniqueName('pipe'),
) => signToken(keys, { role, tenant, sub: `${role}-1`, extra });
const bearer = async (role: string) => ({ authorization: `Bearer ${await tokenFor(role)}` });

async function as(role: 'admin' | 'employee' | 'customer', tenant: string) {
  const token = await signToken(keys, { role, tenant, sub: `${role}-1` });
  return (method: 'GET' | 'PATCH', url: string, body?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
}

describe('access hook', () => {
  it.each([
    ['authenticated', ['admin', 'employee', 'customer'], []],
    ['member', ['admin', 'employee'], ['customer']],
    ['admin', ['admin'], ['employee', 'customer']],
    ['default', ['admin'], ['employee', 'customer']],
  ])('lets the right roles through to a route with %s access', async (access, allowed, refused) => {
    for (const role of allowed) {
      const response = await get(`/api/v1/probe/${access}`, await bearer(role));
      expect(response.statusCode, `${role} on ${access}`).toBe(200);
      expect(response.json()).toMatchObject({ role });
    }
    for (const role of refused) {
      const response = await get(`/api/v1/probe/${access}`, await bearer(role));
      expectError(response, 403, 'FORBIDDEN', 'forbidden');
      expect(response.headers.connection).toBe('close');
    }
  });

  it('sets the identity of the caller on the request, provisioned', async () => {
    const tenant = uniqueName('pipe');
    const token = await signToken(keys, {
      role: 'customer',
      tenant,
      sub: 'cust-9',
      customer: 'c-9',
      name: 'Cy',
      email: 'cy@example.test',
    });
    const response = await get('/api/v1/probe/authenticated', { authorization: `Bearer ${token}` });
    expect(response.json()).toEqual({
      tenantId: tenantWireId(tenant),
      userId: tenantWireId('cust-9'),
      role: 'customer',
      customerId: tenantWireId('c-9'),
      customerClaim: 'c-9',
      issuer: TEST_ISSUER,
      name: 'Cy',
      email: 'cy@example.test',
    });
    const tenantRow = await db.owner
      .selectFrom('tenants')
      .select('id')
      .where('id', '=', tenantWireId(tenant))
      .executeTakeFirst();
    expect(tenantRow).toBeDefined();
  });

  it('needs no token for public routes, inside the API or outside it', async () => {
    expect((await get('/api/v1/probe/public')).json()).toEqual({ public: true });
    expect((await get('/probe/outside')).json()).toEqual({ outside: true });
  });

  it('accepts the scheme in any case, with any number of spaces, and padding around the header', async () => {
    const token = await tokenFor('admin');
    for (const authorization of [
      `bearer ${token}`,
      `BEARER ${token}`,
      `Bearer    ${token}`,
      `  Bearer ${token} `,
    ]) {
      expect((await get('/api/v1/probe/admin', { authorization })).statusCode, authorization).toBe(200);
    }
  });

  it.each([
    ['text before the scheme', (t: string) => `xBearer ${t}`],
    ['text after the token', (t: string) => `Bearer ${t} more`],
    ['a tab for a space', (t: string) => `Bearer\t${t}`],
    ['no space at all', (t: string) => `Bearer${t}`],
    ['a character no token has', (t: string) => `Bearer ${t}!`],
    ['padding inside the token', (t: string) => `Bearer ${t.slice(0, 10)}=${t.slice(10)}`],
  ])('refuses an Authorization header with %s', async (_label, header) => {
    const response = await get('/api/v1/probe/admin', { authorization: header(await tokenFor('admin')) });
    expectError(response, 401, 'UNAUTHORIZED', 'invalid token');
    expect(response.headers['www-authenticate']).toBe(
      'Bearer error="invalid_token", error_description="malformed authorization header"',
    );
    expect(response.headers.connection).toBe('close');
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'bearer token rejected',
        reason: 'malformed authorization header',
      }),
    );
  });

  it('allows base64 padding at the end of the token (the verifier ignores it)', async () => {
    const response = await get('/api/v1/probe/admin', {
      authorization: `Bearer ${await tokenFor('admin')}==`,
    });
    expect(response.statusCode).toBe(200);
  });

  it('treats an empty or blank Authorization header as no token', async () => {
    for (const authorization of ['', '   ']) {
      const response = await get('/api/v1/probe/member', { authorization });
      expectError(response, 401, 'UNAUTHORIZED', 'missing bearer token');
      expect(response.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('refuses a token without a subject, saying so', async () => {
    const response = await get('/api/v1/probe/member', {
      authorization: `Bearer ${await signToken(keys, { role: 'admin', tenant: 't', sub: '' })}`,
    });
    expectError(response, 401, 'UNAUTHORIZED', 'invalid token');
    expect(response.headers['www-authenticate']).toBe(
      'Bearer error="invalid_token", error_description="token has no subject claim"',
    );
  });

  it('logs why a verified token gets 403 when it carries no known role', async () => {
    const response = await get('/api/v1/probe/authenticated', await bearer('auditor'));
    expectError(response, 403, 'FORBIDDEN', 'forbidden');
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'token verified but carries no known role',
        reason: 'no-known-role',
        reqId: response.headers['x-request-id'],
      }),
    );
  });

  it('gives a deactivated user the fixed 403 on every access level, the reason only in the log', async () => {
    const tenant = uniqueName('pipe');
    const admin = await as('admin', tenant);
    const gone = await signToken(keys, { role: 'admin', tenant, sub: 'gone-1' });
    const goneHeaders = { authorization: `Bearer ${gone}` };
    expect((await get('/api/v1/probe/admin', goneHeaders)).statusCode).toBe(200);
    const deactivated = await admin('PATCH', `/api/v1/users/${tenantWireId('gone-1')}`, { active: false });
    expect(deactivated.statusCode, deactivated.body).toBe(200);
    logs.length = 0;
    for (const url of [
      '/api/v1/probe/authenticated',
      '/api/v1/probe/member',
      '/api/v1/probe/admin',
      '/api/v1/probe/default',
      '/api/v1/time-tracking/probe',
    ]) {
      const response = await get(url, goneHeaders);
      expectError(response, 403, 'FORBIDDEN', 'forbidden');
      expect(response.body, url).toBe('{"error":{"code":"FORBIDDEN","message":"forbidden"}}');
      expect(response.headers.connection).toBe('close');
      expect(logs, url).toContainEqual(
        expect.objectContaining({
          level: 30,
          msg: 'access refused',
          reason: 'user is deactivated',
          reqId: response.headers['x-request-id'],
        }),
      );
    }
    // A role too low says nothing more in the log than it always did.
    logs.length = 0;
    const employee = await get('/api/v1/probe/admin', await bearer('employee'));
    expectError(employee, 403, 'FORBIDDEN', 'forbidden');
    expect(logs.filter((line) => line.msg === 'access refused')).toEqual([]);
  });

  it('logs the reason a token was rejected under the request id, never the token', async () => {
    const token = await signToken(keys, { role: 'admin', tenant: 't', sub: 's', expiresIn: -3600 });
    const response = await get('/api/v1/probe/member', { authorization: `Bearer ${token}` });
    expect(response.statusCode).toBe(401);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'bearer token rejected',
        reason: 'token expired',
        reqId: response.headers['x-request-id'],
      }),
    );
    expect(JSON.stringify(logs)).not.toContain(token);
  });
});

describe('access hook with a failing verifier', () => {
  let failing: App;
  let verifyError: Error;

  beforeAll(async () => {
    const verifier: TokenVerifier = {
      issuer: TEST_ISSUER,
      warmUp: async () => {},
      verify: async () => {
        throw verifyError;
      },
    };
    failing = await buildApp({ db: db.db, verifier, geocoder: noGeocoder, logger: capturingLogger(logs) });
    await failing.ready();
  });
  afterAll(async () => failing?.close());

  it('answers 503 when the key source is unavailable, and warns with the cause', async () => {
    verifyError = new KeySourceUnavailable('identity provider keys unavailable: answered HTTP 502');
    const response = await failing.inject({
      method: 'GET',
      url: '/api/v1/roles',
      headers: { authorization: 'Bearer a.b.c' },
    });
    expectError(response, 503, 'SERVICE_UNAVAILABLE', 'identity provider keys unavailable');
    expect(response.headers.connection).not.toBe('close');
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'identity provider keys unavailable',
        err: expect.objectContaining({ message: 'identity provider keys unavailable: answered HTTP 502' }),
      }),
    );
  });

  it('answers 500 for anything else the verifier throws, logging it', async () => {
    verifyError = new Error('verifier bug');
    const response = await failing.inject({
      method: 'GET',
      url: '/api/v1/roles',
      headers: { authorization: 'Bearer a.b.c' },
    });
    const id = response.headers['x-request-id'];
    expectError(response, 500, 'INTERNAL', `internal error (request id ${id})`);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'unhandled error',
        reqId: id,
        err: expect.objectContaining({ message: 'verifier bug' }),
      }),
    );
  });
});

describe('tenant feature gate', () => {
  it('answers 404 to every caller while the feature is off, before the role check', async () => {
    const tenant = uniqueName('gate');
    for (const role of ['admin', 'employee', 'customer'] as const) {
      const response = await (await as(role, tenant))('GET', '/api/v1/time-tracking/probe');
      expect(response.statusCode, role).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'resource not found' } });
    }
  });

  it('still answers 401 without a token', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/v1/time-tracking/probe' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(MISSING_TOKEN_BODY);
  });

  it('opens for the tenant that switches it on, and only for that tenant', async () => {
    const tenant = uniqueName('gate');
    const other = uniqueName('gate');
    const admin = await as('admin', tenant);
    const otherAdmin = await as('admin', other);
    await otherAdmin('GET', '/api/v1/time-tracking/probe');
    const enabled = await admin('PATCH', '/api/v1/tenant/settings', { time_tracking_enabled: true });
    expect(enabled.statusCode).toBe(200);
    expect((await admin('GET', '/api/v1/time-tracking/probe')).json()).toEqual({ ok: true });
    const employee = await (await as('employee', tenant))('GET', '/api/v1/time-tracking/probe');
    expect(employee.statusCode).toBe(403);
    expect(employee.json()).toEqual(FORBIDDEN_BODY);
    expect((await otherAdmin('GET', '/api/v1/time-tracking/probe')).statusCode).toBe(404);
  });

  it('treats every feature as off for a tenant whose settings are gone', async () => {
    const tenant = uniqueName('gate');
    const admin = await as('admin', tenant);
    expect(
      (await admin('PATCH', '/api/v1/tenant/settings', { time_tracking_enabled: true })).statusCode,
    ).toBe(200);
    await db.owner.deleteFrom('tenant_settings').where('tenant_id', '=', tenantWireId(tenant)).execute();
    const response = await admin('GET', '/api/v1/time-tracking/probe');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'resource not found' } });
  });
});

describe('bearer tokens on a feature route', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx?.close());

  const getRoles = (token?: string, headers?: Record<string, string>) =>
    ctx.request('GET', '/api/v1/roles', { ...(token ? { token } : {}), ...(headers ? { headers } : {}) });

  it('accepts a valid token', async () => {
    const response = await getRoles(await ctx.token({ role: 'admin', tenant: uniqueName('valid') }));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([]);
  });

  it('answers 401 "missing bearer token" without an Authorization header', async () => {
    const response = await getRoles();
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
    const response = await getRoles(undefined, { authorization: header });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects an expired token', async () => {
    const response = await getRoles(await ctx.token({ role: 'admin', expiresIn: -3600 }));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token from another issuer', async () => {
    const response = await getRoles(await ctx.token({ role: 'admin', issuer: 'https://evil.example' }));
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token for another audience', async () => {
    const response = await getRoles(await ctx.token({ role: 'admin', audience: 'another-api' }));
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token signed by another key', async () => {
    const { privateKey } = await generateKeyPair('EdDSA');
    const forged = await signToken(
      { ...ctx.keys, privateKey },
      { tenant: 'tenant-a', role: 'admin', sub: 'mallory' },
    );
    expect((await getRoles(forged)).json()).toEqual(INVALID_TOKEN_BODY);
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
    expect((await getRoles(`${header}.${payload}.${signature}`)).json()).toEqual(INVALID_TOKEN_BODY);
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
    const response = await getRoles(token);
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
    const response = await getRoles(token);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('rejects a token without a tenant claim', async () => {
    const token = await ctx.token({ role: 'admin', tenant: '' });
    expect((await getRoles(token)).json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('refuses a token without exp: it would be valid forever', async () => {
    const response = await getRoles(await ctx.token({ role: 'admin', expiresIn: null }));
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
      const response = await getRoles(await ctx.token({ role: 'admin', ...extra }));
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
      const response = await getRoles(token);
      expect(response.statusCode, reason).toBe(401);
      expect(response.json()).toEqual(INVALID_TOKEN_BODY);
      expect(response.headers['www-authenticate']).toBe(
        `Bearer error="invalid_token", error_description="${reason}"`,
      );
    }
    const missing = await getRoles();
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
