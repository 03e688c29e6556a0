import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestContext,
  FORBIDDEN_BODY,
  hmacWithPublicKey,
  INVALID_TOKEN_BODY,
  MISSING_TOKEN_BODY,
  type RouteInfo,
  type TestContext,
} from '../support/context.ts';
import { capturingLogger, type LogLine } from '../support/probe-app.ts';
import { TEST_AUDIENCE, TEST_ISSUER, unsecuredToken } from '../support/tokens.ts';

/**
 * Every route under /api/v1, as the app registered it: the matrix grows with the app,
 * so a new route cannot ship without its 401s and 403s.
 */
let ctx: TestContext;
let apiRoutes: RouteInfo[];
const bad: Record<string, string> = {};

/** The app's log: why a refusal was made is written here, never in the body. */
const logs: LogLine[] = [];

beforeAll(async () => {
  ctx = await createTestContext({ logger: capturingLogger(logs) });
  apiRoutes = ctx.routes.filter((r) => r.url.startsWith('/api/v1/'));
  const claims = { sub: 'x', tenant_id: 'tenant-a', role: 'admin', iss: TEST_ISSUER, aud: TEST_AUDIENCE };
  bad.expired = await ctx.token({ role: 'admin', expiresIn: -60 * 60 });
  bad['wrong issuer'] = await ctx.token({ role: 'admin', issuer: 'https://other.example' });
  bad['wrong audience'] = await ctx.token({ role: 'admin', audience: 'other' });
  bad['alg none'] = unsecuredToken({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 });
  bad['HS256 with the public key'] = hmacWithPublicKey(ctx.keys.publicPem, {
    ...claims,
    exp: Math.floor(Date.now() / 1000) + 600,
  });
  const valid = await ctx.token({ role: 'admin' });
  bad['bad signature'] = `${valid.slice(0, valid.lastIndexOf('.') + 1)}${'A'.repeat(86)}`;
  // Gated routes answer 404 while their feature is off; switched on, the role check shows.
  const admin = await ctx.caller('admin');
  const enabled = await admin.request('PATCH', '/api/v1/tenant/settings', { time_tracking_enabled: true });
  if (enabled.statusCode !== 200) throw new Error(`enabling time tracking: ${enabled.body}`);
});
afterAll(async () => ctx?.close());

/** A concrete URL for a route pattern; ids need not exist, checks run before data access. */
const concrete = (url: string) => url.replace(/:[a-z_]+/g, '0123456789abcdef0123456789abcdef');

describe('access matrix over every /api/v1 route', () => {
  it('covers the routes of this release', () => {
    const listed = apiRoutes.map((r) => `${r.method} ${r.url}`);
    for (const expected of [
      'GET /api/v1/tenant/settings',
      'PATCH /api/v1/tenant/settings',
      'GET /api/v1/roles',
      'POST /api/v1/roles',
      'DELETE /api/v1/roles/:id',
      'GET /api/v1/locations',
      'POST /api/v1/locations',
      'DELETE /api/v1/locations/:id',
      'GET /api/v1/users',
      'GET /api/v1/users/:id',
      'POST /api/v1/users/:id/qualifications/:role_id',
      'DELETE /api/v1/users/:id/qualifications/:role_id',
      'GET /api/v1/me/qualifications',
      'GET /api/v1/events',
      'POST /api/v1/events',
      'GET /api/v1/events/:id',
      'PATCH /api/v1/events/:id',
      'DELETE /api/v1/events/:id',
      'POST /api/v1/events/:id/publish',
      'POST /api/v1/events/:id/documents/upload',
      'GET /api/v1/events/:event_id/shifts',
      'POST /api/v1/events/:event_id/shifts/bulk',
      'GET /api/v1/shifts',
      'POST /api/v1/shifts',
      'GET /api/v1/shifts/:id',
      'PATCH /api/v1/shifts/:id',
      'DELETE /api/v1/shifts/:id',
      'POST /api/v1/shifts/:id/publish',
      'POST /api/v1/shifts/publish',
      'POST /api/v1/shifts/:id/split/:n',
      'GET /api/v1/shifts/:id/slots',
      'POST /api/v1/shifts/:id/slots',
      'PATCH /api/v1/shifts/:id/slots/:slot_id',
      'DELETE /api/v1/shifts/:id/slots/:slot_id',
      'POST /api/v1/shifts/:shift_id/slots/:slot_id/claim',
      'POST /api/v1/shifts/:shift_id/slots/:slot_id/assign',
      'GET /api/v1/shifts/:shift_id/assignments',
      'DELETE /api/v1/shifts/:shift_id/assignments/:assignment_id',
      'GET /api/v1/me/assignments',
      'POST /api/v1/assignments/:id/offer',
      'GET /api/v1/offers',
      'POST /api/v1/offers/:id/accept',
      'POST /api/v1/offers/:id/approve',
      'POST /api/v1/offers/:id/reject',
      'DELETE /api/v1/offers/:id',
      'GET /api/v1/time-tracking/balance',
      'GET /api/v1/time-tracking/balances',
      'GET /api/v1/time-tracking/balance/:user_id',
      'POST /api/v1/time-tracking/entries',
      'POST /api/v1/time-tracking/payouts',
      'GET /api/v1/time-tracking/payouts/me',
      'GET /api/v1/time-tracking/payouts/:user_id',
      'GET /api/v1/time-tracking/ledger/:user_id',
      'GET /api/v1/me',
      'PATCH /api/v1/me',
      'POST /api/v1/users',
      'PATCH /api/v1/users/:id',
      'GET /api/v1/push-subscriptions',
      'DELETE /api/v1/push-subscriptions/:id',
      'GET /api/v1/time-tracking/entries',
      'GET /api/v1/time-tracking/entries/:id',
      'GET /api/v1/time-tracking/ledger',
      'GET /api/v1/time-tracking/export.csv',
      'GET /api/v1/time-tracking/balances.csv',
      'GET /api/v1/audit-log',
      'POST /api/v1/me/time-off',
      'GET /api/v1/time-off',
      'POST /api/v1/time-off/:id/approve',
      'POST /api/v1/time-off/:id/reject',
      'DELETE /api/v1/time-off/:id',
      'POST /api/v1/webhooks',
      'GET /api/v1/webhooks',
      'DELETE /api/v1/webhooks/:id',
      'GET /api/v1/webhooks/:id/deliveries',
    ]) {
      expect(listed).toContain(expected);
    }
  });

  it('answers 401 "missing bearer token" on every route without a token', async () => {
    for (const route of apiRoutes) {
      const response = await ctx.request(route.method, concrete(route.url));
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(401);
      expect(response.json()).toEqual(MISSING_TOKEN_BODY);
    }
  });

  it('answers 401 "invalid token" on every route for every kind of bad token', async () => {
    for (const route of apiRoutes) {
      for (const [kind, token] of Object.entries(bad)) {
        const response = await ctx.request(route.method, concrete(route.url), { token });
        expect(response.statusCode, `${kind}: ${route.method} ${route.url}`).toBe(401);
        expect(response.json()).toEqual(INVALID_TOKEN_BODY);
      }
    }
  });

  it('answers the fixed 403 to an employee on every admin route', async () => {
    const employee = await ctx.caller('employee');
    const adminRoutes = apiRoutes.filter((r) => r.access === 'admin');
    expect(adminRoutes.length).toBeGreaterThan(5);
    for (const route of adminRoutes) {
      const response = await employee.request(route.method, concrete(route.url), { name: 'x' });
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
  });

  it('answers the fixed 403 to a customer on every route outside the form surface', async () => {
    const customer = await ctx.caller('customer', 'tenant-a', 'customer-1', { customer: 'cust-1' });
    for (const route of apiRoutes.filter((r) => !r.url.startsWith('/api/v1/f/'))) {
      const response = await customer.request(route.method, concrete(route.url));
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
  });

  it('answers the fixed 403 to a deactivated admin and employee on every route but the public ones, logging why', async () => {
    const admin = await ctx.caller('admin');
    const deactivatedAdmin = await ctx.caller('admin', 'tenant-a', 'admin-gone');
    const deactivatedEmployee = await ctx.caller('employee', 'tenant-a', 'employee-gone');
    for (const user of [deactivatedAdmin, deactivatedEmployee]) {
      const response = await admin.request('PATCH', `/api/v1/users/${user.userId}`, { active: false });
      expect(response.statusCode, response.body).toBe(200);
    }
    // The form surface included: a deactivated member cannot submit either.
    const routes = ctx.routes.filter((r) => r.access !== 'public');
    expect(routes.length).toBeGreaterThan(50);
    for (const user of [deactivatedAdmin, deactivatedEmployee]) {
      for (const route of routes) {
        const response = await user.request(route.method, concrete(route.url), { name: 'x' });
        expect(response.statusCode, `${route.method} ${route.url}`).toBe(403);
        expect(response.json()).toEqual(FORBIDDEN_BODY);
        expect(logs, `${route.method} ${route.url}`).toContainEqual(
          expect.objectContaining({
            msg: 'access refused',
            reason: 'user is deactivated',
            reqId: response.headers['x-request-id'],
          }),
        );
      }
    }
  });

  it('gives the same 403 body before validation, so a wrong role learns nothing about the input', async () => {
    const employee = await ctx.caller('employee');
    const response = await ctx.request('POST', '/api/v1/roles', {
      token: employee.token,
      rawBody: '{not json',
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});
