import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createVerifier, readPublicKeyFile } from '../src/auth/verifier.ts';
import type { App } from '../src/http/types.ts';
import { FORBIDDEN_BODY, MISSING_TOKEN_BODY, tenantWireId, uniqueName } from './support/context.ts';
import { openTestDatabase, type TestDatabase } from './support/database.ts';
import { createTestKeys, signToken, TEST_AUDIENCE, TEST_ISSUER, type TestKeys } from './support/tokens.ts';

/**
 * The tenant feature gate (`config.feature`), on a probe route declared the way the
 * time-tracking routes will be: off means 404 for every caller, checked before the role.
 */
let db: TestDatabase;
let app: App;
let keys: TestKeys;

beforeAll(async () => {
  db = await openTestDatabase();
  keys = await createTestKeys();
  app = await buildApp({
    db: db.db,
    verifier: createVerifier({
      issuer: TEST_ISSUER,
      audience: TEST_AUDIENCE,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    }),
  });
  app.get(
    '/api/v1/time-tracking/probe',
    { config: { access: 'admin', feature: 'time_tracking' } },
    async () => ({
      ok: true,
    }),
  );
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await db?.dispose();
});

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
    await db.db.deleteFrom('tenant_settings').where('tenant_id', '=', tenantWireId(tenant)).execute();
    const response = await admin('GET', '/api/v1/time-tracking/probe');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'resource not found' } });
  });
});
