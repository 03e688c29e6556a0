import { Writable } from 'node:stream';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createVerifier, readPublicKeyFile } from '../src/auth/verifier.ts';
import { createLogger } from '../src/logger.ts';
import {
  createTestContext,
  FORBIDDEN_BODY,
  hmacWithPublicKey,
  INVALID_TOKEN_BODY,
  MISSING_TOKEN_BODY,
  type TestContext,
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
