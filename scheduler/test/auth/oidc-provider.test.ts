import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { createVerifier } from '../../src/auth/verifier.ts';
import type { App } from '../../src/http/types.ts';
import { FORBIDDEN_BODY, INVALID_TOKEN_BODY } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * Tokens from a real OpenID provider (oidc-provider, client credentials grant, JWT access
 * tokens signed ES256), verified through its JWKS endpoint as AUTH_JWKS_URL does.
 */
const API_AUDIENCE = 'urn:scheduler:api';
const clientRoles: Record<string, string> = { 'admin-app': 'admin', 'employee-app': 'employee' };

let server: Server;
let issuer: string;
let db: TestDatabase;
let app: App;

async function tokenFor(clientId: string): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:secret-${clientId}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'api', resource: API_AUDIENCE }),
  });
  const body = (await response.json()) as { access_token?: string; error?: string };
  if (!body.access_token) throw new Error(`token request failed: ${JSON.stringify(body)}`);
  return body.access_token;
}

beforeAll(async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key-1', use: 'sig', alg: 'ES256' };
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: Object.keys(clientRoles).map((id) => ({
      client_id: id,
      client_secret: `secret-${id}`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
    })),
    jwks: { keys: [jwk] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => API_AUDIENCE,
        getResourceServerInfo: () => ({
          scope: 'api',
          audience: API_AUDIENCE,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    extraTokenClaims: async (_ctx, token) => ({
      tenant_id: 'oidc-tenant',
      role: clientRoles[String((token as { clientId?: string }).clientId)] ?? 'none',
    }),
  });
  server.on('request', provider.callback());

  db = await openTestDatabase();
  app = await buildApp({
    db: db.db,
    verifier: createVerifier({ issuer, audience: API_AUDIENCE, jwks: { url: new URL(`${issuer}/jwks`) } }),
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await db?.dispose();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe('tokens from an OpenID provider via its JWKS endpoint', () => {
  it('lets an admin client create and list roles', async () => {
    const token = await tokenFor('admin-app');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/roles',
      headers,
      payload: { name: 'From OIDC' },
    });
    expect(created.statusCode).toBe(201);
    const list = await app.inject({ method: 'GET', url: '/api/v1/roles', headers });
    expect(list.json().map((r: { name: string }) => r.name)).toEqual(['From OIDC']);
  });

  it('answers the fixed 403 to an employee client on an admin route', async () => {
    const token = await tokenFor('employee-app');
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/roles',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: { name: 'Nope' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it('rejects the provider token at an API expecting another audience', async () => {
    const other = await buildApp({
      db: db.db,
      verifier: createVerifier({ issuer, audience: 'urn:other', jwks: { url: new URL(`${issuer}/jwks`) } }),
    });
    const response = await other.inject({
      method: 'GET',
      url: '/api/v1/roles',
      headers: { authorization: `Bearer ${await tokenFor('admin-app')}` },
    });
    await other.close();
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it('answers 503 when the key set cannot be fetched', async () => {
    const token = await tokenFor('admin-app');
    const unreachable = await buildApp({
      db: db.db,
      verifier: createVerifier({
        issuer,
        audience: API_AUDIENCE,
        jwks: { url: new URL('http://127.0.0.1:9/jwks') },
      }),
    });
    const response = await unreachable.inject({
      method: 'GET',
      url: '/api/v1/roles',
      headers: { authorization: `Bearer ${token}` },
    });
    await unreachable.close();
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: { code: 'SERVICE_UNAVAILABLE', message: 'identity provider keys unavailable' },
    });
  });
});
