import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type RouteInfo, type TestContext } from '../support/context.ts';

/**
 * The OpenAPI document declares every status a route can send. For each route the app
 * registered (not a list kept here), every refusal the request pipeline makes on such a
 * route is provoked: no token, a role too low, a malformed, overlong or badly encoded path
 * id, a malformed, oversized, non-JSON or NUL-holding body, an unknown query parameter.
 * Each answer must carry the error shape and a status the operation declares. What a
 * handler refuses beyond these is sent at random by test/http/never-500.test.ts, which
 * holds those answers to the same rule.
 */
let ctx: TestContext;
let routes: RouteInfo[];
let declared: Map<string, Set<number>>;
let adminToken: string;
let employeeToken: string;
let customerToken: string;

const documentPath = (url: string) => url.replace(/:([a-z_]+)/g, '{$1}');
const keyOf = (method: string, url: string) => `${method.toLowerCase()} ${documentPath(url)}`;
const anId = '0123456789abcdef0123456789abcdef';

beforeAll(async () => {
  ctx = await createTestContext({ bodyLimitBytes: 2048 });
  routes = ctx.routes.filter((route) => !route.hidden);
  const document = (await ctx.request('GET', '/api/docs/openapi.json')).json() as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  declared = new Map();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      declared.set(`${method} ${path}`, new Set(Object.keys(operation.responses).map(Number)));
    }
  }
  adminToken = (await ctx.caller('admin')).token;
  employeeToken = (await ctx.caller('employee')).token;
  customerToken = (await ctx.caller('customer')).token;
  // Gated routes answer their feature's 404 unless it is on; on, their other answers show.
  const enabled = await ctx.request('PATCH', '/api/v1/tenant/settings', {
    token: adminToken,
    body: { time_tracking_enabled: true },
  });
  if (enabled.statusCode !== 200) throw new Error(enabled.body);
});
afterAll(async () => ctx?.close());

interface Probe {
  what: string;
  /** The status it must meet; 0: any declared one. */
  expected: number;
  send: () => Promise<LightMyRequestResponse>;
}

function probesFor(route: RouteInfo): Probe[] {
  const concrete = (value: string) => route.url.replace(/:[a-z_]+/g, value);
  const url = concrete(anId);
  const send =
    (target: string, options: Parameters<TestContext['request']>[2] = {}) =>
    () =>
      ctx.request(route.method, target, { token: adminToken, ...options });
  const probes: Probe[] = [];
  if (route.access !== 'public') {
    probes.push({ what: 'no token', expected: 401, send: send(url, { token: '' }) });
    if (route.access === 'admin') {
      probes.push({ what: 'an employee', expected: 403, send: send(url, { token: employeeToken }) });
    }
    if (route.access === 'member' || route.access === 'admin') {
      probes.push({ what: 'a customer', expected: 403, send: send(url, { token: customerToken }) });
    }
  }
  if (route.url.includes(':')) {
    probes.push(
      // Sent without a body: a route that requires one refuses that (422) before its id is read.
      {
        what: 'a malformed path id',
        expected: ['POST', 'PUT', 'PATCH'].includes(route.method) ? 0 : 404,
        send: send(concrete('not-an-id')),
      },
      { what: 'a path id over 100 characters', expected: 414, send: send(concrete('a'.repeat(101))) },
      { what: 'a badly encoded path', expected: 400, send: send(concrete('%E0%A4%A')) },
    );
  }
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)) {
    probes.push(
      { what: 'malformed JSON', expected: 400, send: send(url, { rawBody: '{"a":' }) },
      {
        what: 'a body that is not JSON',
        expected: 415,
        send: send(url, { rawBody: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      },
      {
        what: 'a body over the limit',
        expected: 413,
        send: send(url, { rawBody: JSON.stringify({ a: 'x'.repeat(4096) }) }),
      },
      { what: 'text holding NUL', expected: 422, send: send(url, { rawBody: '{"name":"a\\u0000b"}' }) },
    );
  }
  if (route.method === 'GET' && route.url.startsWith('/api/v1/')) {
    probes.push({
      what: 'an unknown query parameter',
      expected: 0,
      send: send(`${url}?surely_not_a_filter=1`),
    });
  }
  return probes;
}

describe('every status a route can send is declared', () => {
  it('holds for each refusal of the request pipeline on each registered route', async () => {
    expect(routes.length).toBeGreaterThan(50);
    const problems: string[] = [];
    for (const route of routes) {
      const statuses = declared.get(keyOf(route.method, route.url));
      if (!statuses) {
        problems.push(`${route.method} ${route.url}: not in the document`);
        continue;
      }
      for (const probe of probesFor(route)) {
        const response = await probe.send();
        const where = `${route.method} ${route.url}, ${probe.what}: ${response.statusCode}`;
        if (!statuses.has(response.statusCode)) problems.push(`${where} is not declared`);
        if (probe.expected !== 0 && response.statusCode !== probe.expected) {
          problems.push(`${where}, expected ${probe.expected}`);
        }
        if (response.statusCode >= 400 && !/^\{"error":\{"code":"[A-Z_]+","message":/.test(response.body)) {
          problems.push(`${where} without the error shape`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('declares 409 on every write: the answer to a database refusal no service foresaw', () => {
    const writes = routes.filter((route) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method));
    expect(writes.length).toBeGreaterThan(20);
    const undeclared = writes
      .filter((route) => !declared.get(keyOf(route.method, route.url))?.has(409))
      .map((route) => `${route.method} ${route.url}`);
    expect(undeclared).toEqual([]);
  });
});
