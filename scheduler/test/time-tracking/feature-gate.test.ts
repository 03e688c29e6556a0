import { afterEach, describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, type RouteInfo, useRouteTests } from '../support/context.ts';
import { tenantOf } from '../support/scheduling.ts';
import { assignedShift, ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';

/**
 * The feature gate over the whole time-tracking surface, as the app registered it: every
 * route x every role with the flag off and on, and a flag switched off while minutes are
 * on the books (hidden, never lost).
 */
const t = useRouteTests();
afterEach(async () => {
  expect(await ledgerMismatches(t.ctx.db.owner)).toEqual([]);
});

const NOT_FOUND_BODY = { error: { code: 'NOT_FOUND', message: 'resource not found' } };

function timeRoutes(): RouteInfo[] {
  const routes = t.ctx.routes.filter(
    (r) =>
      r.url.startsWith('/api/v1/time-tracking/') || /^\/api\/v1\/me\/assignments\/:id\/clock-/.test(r.url),
  );
  expect(routes.map((r) => `${r.method} ${r.url}`).sort()).toEqual([
    'GET /api/v1/time-tracking/balance',
    'GET /api/v1/time-tracking/balance/:user_id',
    'GET /api/v1/time-tracking/balances',
    'GET /api/v1/time-tracking/balances.csv',
    'GET /api/v1/time-tracking/entries',
    'GET /api/v1/time-tracking/entries/:id',
    'GET /api/v1/time-tracking/export.csv',
    'GET /api/v1/time-tracking/ledger',
    'GET /api/v1/time-tracking/ledger/:user_id',
    'GET /api/v1/time-tracking/payouts/:user_id',
    'GET /api/v1/time-tracking/payouts/me',
    'POST /api/v1/me/assignments/:id/clock-in',
    'POST /api/v1/me/assignments/:id/clock-out',
    'POST /api/v1/time-tracking/entries',
    'POST /api/v1/time-tracking/entries/:id/confirm',
    'POST /api/v1/time-tracking/payouts',
  ]);
  return routes;
}

/** The employee's entry, once recorded (GET /entries/{id} reads it). */
let entryId = '0'.repeat(32);

const queries: Record<string, string> = {
  '/api/v1/time-tracking/export.csv': '?from=2030-07-01T00:00:00Z&to=2030-08-01T00:00:00Z',
};

/** Records the entry first, so the reads of one entry have one to read. */
const entriesFirst = (routes: RouteInfo[]) =>
  [...routes].sort((a, b) => Number(!isRecordTime(a)) - Number(!isRecordTime(b)));
const isRecordTime = (route: RouteInfo) => route.method === 'POST' && route.url.endsWith('/entries');

/** A JSON body as a value, a CSV file as its text. */
const bodyOf = (response: {
  headers: Record<string, unknown>;
  body: string;
  json(): Record<string, unknown>;
}): Record<string, unknown> | string =>
  String(response.headers['content-type']).startsWith('text/csv') ? response.body : response.json();

/**
 * Past the gate and the role check, the answers that are not a plain success: the entry
 * is an admin's, confirmed already; the seat is the employee's (the admin's is 404), on
 * 2 July 2030, far from now (409 for its holder). Each shows the route ran.
 */
const onAnswers: Record<string, { admin: number; employee?: number }> = {
  'POST /api/v1/time-tracking/entries/:id/confirm': { admin: 409 },
  'POST /api/v1/me/assignments/:id/clock-in': { admin: 404, employee: 409 },
  'POST /api/v1/me/assignments/:id/clock-out': { admin: 404, employee: 409 },
};

const isClock = (route: RouteInfo) => route.url.startsWith('/api/v1/me/assignments/');

/** A valid call of each route: the user is the employee, the entry gives 60 minutes overtime. */
async function call(caller: Caller, route: RouteInfo, assignment: string) {
  const id = isClock(route) ? assignment : entryId;
  const url = `${route.url.replace(':user_id', t.employee.userId).replace(':id', id)}${queries[route.url] ?? ''}`;
  const bodies: Record<string, unknown> = {
    '/api/v1/time-tracking/entries': {
      shift_assignment_id: assignment,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T15:00:00Z',
    },
    '/api/v1/time-tracking/payouts': { user_id: t.employee.userId, minutes: 1 },
  };
  const response = await caller.request(route.method, url, bodies[route.url]);
  if (isRecordTime(route) && response.statusCode < 300) entryId = response.json().id;
  return response;
}

describe('time tracking behind time_tracking_enabled', () => {
  it('answers every route 404 for every role while off, and by role once on', async () => {
    const routes = timeRoutes();
    await setTimeTracking(t.admin, true);
    const assignment = await assignedShift(t.admin, t.employee);
    await setTimeTracking(t.admin, false);
    const callers = { admin: t.admin, employee: t.employee };
    for (const route of routes) {
      for (const [role, caller] of Object.entries(callers)) {
        const response = await call(caller, route, assignment);
        expect(response.statusCode, `off: ${role} ${route.method} ${route.url}`).toBe(404);
        expect(response.json()).toEqual(NOT_FOUND_BODY);
      }
    }
    // A customer of the tenant: the gate is the tenant's, so it answers first too.
    const tenantCustomer = await t.ctx.caller('customer', tenantOf(t.admin), 'customer-1', {
      customer: 'c-1',
    });
    for (const route of routes) {
      const response = await call(tenantCustomer, route, assignment);
      expect(response.statusCode, `off: customer ${route.method} ${route.url}`).toBe(404);
      expect(response.json()).toEqual(NOT_FOUND_BODY);
    }

    await setTimeTracking(t.admin, true);
    // Entries before payouts, so the payout has minutes to take.
    for (const route of entriesFirst(routes)) {
      const name = `${route.method} ${route.url}`;
      const asAdmin = await call(t.admin, route, assignment);
      expect(asAdmin.statusCode, `on: admin ${name}: ${asAdmin.body}`).toBe(
        onAnswers[name]?.admin ?? (route.method === 'POST' ? 201 : 200),
      );
      const asEmployee = await call(t.employee, route, assignment);
      if (route.access === 'admin') {
        expect(asEmployee.statusCode, `on: employee ${name}`).toBe(403);
        expect(asEmployee.json()).toEqual(FORBIDDEN_BODY);
      } else {
        expect(route.access, name).toBe('member');
        expect(asEmployee.statusCode, `on: employee ${name}: ${asEmployee.body}`).toBe(
          onAnswers[name]?.employee ?? 200,
        );
      }
      const asCustomer = await call(tenantCustomer, route, assignment);
      expect(asCustomer.statusCode, `on: customer ${name}`).toBe(403);
      expect(asCustomer.json()).toEqual(FORBIDDEN_BODY);
    }
  });

  it('still answers 401 without a token, on and off', async () => {
    for (const enabled of [false, true]) {
      await setTimeTracking(t.admin, enabled);
      for (const route of timeRoutes()) {
        const response = await t.ctx.request(route.method, route.url.replace(':user_id', t.employee.userId));
        expect(response.statusCode, `${enabled} ${route.url}`).toBe(401);
      }
    }
  });

  it('hides the books while off and shows the same books once on again', async () => {
    await setTimeTracking(t.admin, true);
    const assignment = await assignedShift(t.admin, t.employee);
    const routes = timeRoutes();
    const entries = routes.find(isRecordTime);
    const payouts = routes.find((r) => r.method === 'POST' && r.url.endsWith('/payouts'));
    if (!entries || !payouts) throw new Error('routes missing');
    expect((await call(t.admin, entries, assignment)).statusCode).toBe(201);
    expect((await call(t.admin, payouts, assignment)).statusCode).toBe(201);
    const reads = routes.filter((r) => r.method === 'GET');
    const snapshot = async () =>
      Promise.all(reads.map(async (route) => bodyOf(await call(t.admin, route, assignment))));
    const before = await snapshot();
    expect(
      before.find(
        (body) =>
          typeof body === 'object' &&
          body.balance_minutes !== undefined &&
          body.user_id === t.employee.userId,
      ),
    ).toMatchObject({
      balance_minutes: 59,
    });

    await setTimeTracking(t.admin, false);
    for (const route of routes) {
      const response = await call(t.admin, route, assignment);
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(404);
    }
    await setTimeTracking(t.admin, true);
    expect(await snapshot()).toEqual(before);
  });
});
