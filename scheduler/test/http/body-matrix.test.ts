import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DECISION_REQUEST_TITLE } from '../../src/http/schemas.ts';
import { type Caller, createTestContext, type RouteInfo, type TestContext } from '../support/context.ts';

/**
 * One rule for request bodies over every write the app registered (not a list kept
 * here): a partial update (PATCH) names at least one field, so `{}` is 422; an action
 * that takes no body (publish, approve, accept, read-all, delete...) accepts none or
 * `{}` and refuses any field, 422 naming it. Validation comes before any record is read,
 * so path ids that name nothing are enough.
 */
let ctx: TestContext;
let admin: Caller;
let writes: RouteInfo[];

beforeAll(async () => {
  ctx = await createTestContext();
  admin = await ctx.caller('admin');
  writes = ctx.routes.filter(
    (route) => route.url.startsWith('/api/v1/') && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method),
  );
  // Gated routes answer their feature's 404 unless it is on; on, their bodies are read.
  const enabled = await admin.request('PATCH', '/api/v1/tenant/settings', { time_tracking_enabled: true });
  if (enabled.statusCode !== 200) throw new Error(enabled.body);
});
afterAll(async () => ctx?.close());

const anId = '0123456789abcdef0123456789abcdef';
/** A concrete URL for a route: ids that name nothing, a count of pieces that is one. */
const concrete = (route: RouteInfo) => route.url.replace(/:n\b/, '2').replace(/:[a-z_]+/g, anId);
const label = (route: RouteInfo) => `${route.method} ${route.url}`;

/** The fields a route's body declares; none for a route that takes no body. */
const fieldsOf = (route: RouteInfo): string[] =>
  Object.keys((route.schema.body as { properties?: object } | undefined)?.properties ?? {});
const bodiless = (route: RouteInfo) => fieldsOf(route).length === 0;

describe('request bodies on every write route', () => {
  it('covers the writes of this release, the bodiless actions among them', () => {
    expect(writes.length).toBeGreaterThan(40);
    const actions = writes.filter(bodiless).map(label);
    for (const expected of [
      'PATCH /api/v1/tenant/settings',
      'PATCH /api/v1/forms/:id',
      'PATCH /api/v1/shifts/:id/slots/:slot_id',
    ]) {
      expect(writes.map(label)).toContain(expected);
    }
    for (const expected of [
      'POST /api/v1/events/:id/publish',
      'POST /api/v1/shifts/:id/publish',
      'POST /api/v1/shifts/:shift_id/slots/:slot_id/claim',
      'POST /api/v1/offers/:id/accept',
      'POST /api/v1/notifications/read-all',
      'POST /api/v1/me/calendar-token',
      'DELETE /api/v1/roles/:id',
    ]) {
      expect(actions).toContain(expected);
    }
  });

  it('declares a body schema on every write, so no route reads a body nobody checks', () => {
    expect(writes.filter((route) => route.schema.body === undefined).map(label)).toEqual([]);
  });

  it('answers 422 to an empty PATCH on every PATCH route', async () => {
    const patches = writes.filter((route) => route.method === 'PATCH');
    expect(patches.length).toBeGreaterThanOrEqual(6);
    for (const route of patches) {
      const response = await admin.request('PATCH', concrete(route), {});
      expect(response.statusCode, `${label(route)}: ${response.body}`).toBe(422);
      const { error } = response.json() as { error: { code: string; message: string } };
      expect(error.code, label(route)).toBe('VALIDATION_FAILED');
      // A partial update wants one field at least; a full replacement names the one it lacks.
      expect(error.message, label(route)).toMatch(
        /^(body: must NOT have fewer than 1 properties|[a-z_]+: is required)$/,
      );
    }
  });

  it('answers 422 naming the field to a field sent to any action that takes no body', async () => {
    const actions = writes.filter(bodiless);
    expect(actions.length).toBeGreaterThan(20);
    for (const route of actions) {
      const response = await admin.request(route.method, concrete(route), { unexpected: 1 });
      expect(response.statusCode, `${label(route)}: ${response.body}`).toBe(422);
      expect(response.json(), label(route)).toEqual({
        error: { code: 'VALIDATION_FAILED', message: 'unexpected: is not an allowed field' },
      });
    }
  });

  it('takes an action with no body, an empty body, or {} alike', async () => {
    for (const route of writes.filter(bodiless)) {
      for (const sent of [
        () => ctx.request(route.method, concrete(route), { token: admin.token }),
        () => ctx.request(route.method, concrete(route), { token: admin.token, rawBody: '' }),
        () => ctx.request(route.method, concrete(route), { token: admin.token, body: {} }),
      ]) {
        const response = await sent();
        // The id names nothing, so most answer 404; none refuses the body.
        expect(response.statusCode, `${label(route)}: ${response.body}`).not.toBe(422);
        expect(response.statusCode, `${label(route)}: ${response.body}`).toBeLessThan(500);
      }
    }
  });

  it('takes an admin’s decision with no body, an empty one, {} or null alike, as an action', async () => {
    const decisions = writes.filter(
      (route) => (route.schema.body as { title?: string } | undefined)?.title === DECISION_REQUEST_TITLE,
    );
    expect(decisions.map(label).sort()).toEqual([
      'POST /api/v1/offers/:id/approve',
      'POST /api/v1/offers/:id/reject',
      'POST /api/v1/time-off/:id/approve',
      'POST /api/v1/time-off/:id/reject',
    ]);
    for (const route of decisions) {
      for (const rawBody of [undefined, '', '{}', 'null']) {
        const response = await ctx.request(route.method, concrete(route), {
          token: admin.token,
          ...(rawBody === undefined ? {} : { rawBody }),
        });
        // The id names nothing: 404, never a refusal of the body.
        expect(response.statusCode, `${label(route)} ${rawBody}: ${response.body}`).toBe(404);
      }
    }
  });

  it('refuses a field on every write that takes a body too', async () => {
    for (const route of writes.filter((r) => !bodiless(r))) {
      const response = await admin.request(route.method, concrete(route), { unexpected: 1 });
      expect(response.statusCode, `${label(route)}: ${response.body}`).toBe(422);
    }
  });
});
