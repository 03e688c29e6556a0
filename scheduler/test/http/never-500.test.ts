import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Storage } from '../../src/storage/object-storage.ts';
import { type Caller, createTestContext, type RouteInfo, type TestContext } from '../support/context.ts';
import { type S3Server, startS3Server } from '../support/s3-server.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';
import { bodyFor, queryFor } from '../support/schema-arbitrary.ts';

/**
 * Property: whatever a client sends to any registered route (bodies drawn from the
 * route's own schema and spoiled at random, path ids of real records, of another tenant
 * and of nothing, query strings, abused headers), the answer is never a 5xx, every error
 * has the error shape and a status the route declares, and a refused request changes
 * nothing in the database.
 */
let ctx: TestContext;
let s3: S3Server;
let admin: Caller;
let employee: Caller;
let customer: Caller;
let routes: RouteInfo[];
let ids: string[];
let slugs: string[];
let declared: Map<string, Set<number>>;

/** The tables that hold a tenant's rows, read from the migrated schema (none is left out). */
let tenantTables: string[];

/** Every table's rows of the tenant, as one fingerprint (owner's view, past the wall). */
async function fingerprint(tenantId: string): Promise<string> {
  const parts = tenantTables.map(
    (table) =>
      sql`SELECT ${table} AS t, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h
            FROM ${sql.table(table)} x WHERE x.tenant_id = ${tenantId}`,
  );
  const { rows } = await sql<{ t: string; h: string }>`${sql.join(parts, sql` UNION ALL `)}`.execute(
    ctx.db.owner,
  );
  return rows.map((row) => `${row.t}:${row.h}`).join(',');
}

beforeAll(async () => {
  // Object storage configured, so the document routes' handlers are fuzzed too.
  s3 = await startS3Server();
  ctx = await createTestContext({
    formSubmitLimit: { max: 1_000_000, windowMs: 3_600_000 },
    documents: { store: createS3Storage(s3.config), urlTtlSeconds: 900, maxBytes: 1024 * 1024 },
  });
  const { rows } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.columns
     WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY table_name`.execute(ctx.db.owner);
  tenantTables = rows.map((row) => row.table_name);
  ({ admin, employee } = await ctx.freshTenant());
  customer = await ctx.caller('customer', tenantOf(admin), 'fuzz-customer', { customer: 'c-1' });
  routes = ctx.routes.filter((route) => !route.hidden);
  // A tenant with one record of every kind, so path ids and body references can be real.
  await admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: true,
    notify_on_assignment: true,
  });
  const role = await newRole(admin);
  await qualify(admin, employee, role);
  const location = (await created(admin, '/api/v1/locations', { name: 'Hall' })).id;
  const event = await newEvent(admin);
  const shift = await newShift(admin, event, { roleId: role, capacities: [3, 2] });
  const assignment = (await created(employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {}))
    .id;
  const form = await created(admin, '/api/v1/forms', {
    title: 'Catering',
    fields: [
      { name: 'contact', label: 'Name', type: 'text', required: true },
      { name: 'guests', label: 'Guests', type: 'number' },
    ],
  });
  const submission = (await created(customer, `/api/v1/f/${form.slug}/submit`, { data: { contact: 'Dana' } }))
    .id;
  const other = await ctx.freshTenant();
  ids = [
    role,
    location,
    event,
    shift.id,
    ...shift.slots,
    assignment,
    form.id,
    submission,
    employee.userId,
    admin.userId,
    await newRole(other.admin),
    '00000000000000000000000000000000',
    '0123456789abcdef0123456789abcdef',
  ];
  slugs = [String(form.slug), 'no-such-form', 'x'];
  const document = (await ctx.request('GET', '/api/docs/openapi.json')).json() as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  declared = new Map();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      declared.set(`${method.toUpperCase()} ${path}`, new Set(Object.keys(operation.responses).map(Number)));
    }
  }
});
afterAll(async () => {
  await ctx?.close();
  await s3?.close();
});

const pathValue = (name: string) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(...(name === 'slug' ? slugs : name === 'n' ? ['2', '3', '97', '0'] : ids)),
    },
    // Not `.`, `..` or `%2e%2e`: the URL reader resolves those to another route before it is matched.
    {
      weight: 1,
      arbitrary: fc.constantFrom('not-an-id', 'a'.repeat(100), '%C0%AF', '%00', '0x7f', '-1', '%E2%80%AE'),
    },
    {
      weight: 1,
      arbitrary: fc
        .string({ minLength: 1, maxLength: 12, unit: 'grapheme-ascii' })
        .filter((text) => !/^\.{1,2}$/.test(text))
        .map(encodeURIComponent),
    },
  );

const contentTypes = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/JSON',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json, text/plain',
  '',
);

const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'x-forwarded-for',
    'accept',
    'accept-encoding',
    'x-request-id',
    'if-none-match',
    'range',
    'origin',
  ),
  fc.oneof(fc.string({ maxLength: 30, unit: 'grapheme-ascii' }), fc.constant('x'.repeat(8000))),
  { maxKeys: 3 },
);

const callers = () => fc.constantFrom(admin, admin, admin, employee, customer);

function request(route: RouteInfo) {
  const params = [...route.url.matchAll(/:([a-z_]+)/g)].map((m) => m[1] ?? '');
  return fc.record({
    path: fc.tuple(...params.map(pathValue)).map((values) => {
      let i = 0;
      return route.url.replace(/:[a-z_]+/g, () => values[i++] ?? '');
    }),
    query: route.method === 'GET' ? queryFor(route.schema.querystring, ids) : fc.constant(''),
    body: ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)
      ? bodyFor(route.schema.body, ids)
      : fc.constant(undefined),
    contentType: contentTypes,
    headers: extraHeaders,
    caller: callers(),
  });
}

const shape = /^\{"error":\{"code":"[A-Z_]+","message":"[^"]*(?:\\.[^"]*)*"\}\}$/;

/** Random requests, each followed by a look at every tenant table. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 600);

describe('every registered route, sent anything at random', () => {
  // Its time grows with the runs: 200 ms a run is room for a loaded machine (the default 30 s
  // was not, at 600 runs).
  it('never answers 5xx, always in the error shape, with a declared status, and changes nothing when it refuses', {
    timeout: RUNS * 200,
  }, async () => {
    expect(routes.length).toBeGreaterThan(50);
    const tenant = admin.tenantId;
    let before = await fingerprint(tenant);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes).chain((route) => request(route).map((sent) => ({ route, sent }))),
        async ({ route, sent }) => {
          const url = `${sent.path}${sent.query}`;
          const rawBody = sent.body === undefined ? undefined : JSON.stringify(sent.body);
          const response = await ctx.request(route.method, url, {
            token: sent.caller.token,
            ...(rawBody === undefined ? {} : { rawBody }),
            headers: {
              ...sent.headers,
              ...(sent.contentType === undefined ? {} : { 'content-type': sent.contentType }),
            },
          });
          const label = `${route.method} ${url} ${rawBody?.slice(0, 300) ?? ''} -> ${response.statusCode} ${response.body.slice(0, 300)}`;
          expect(response.statusCode, label).toBeLessThan(500);
          if (response.statusCode >= 400) {
            expect(response.body, label).toMatch(shape);
            expect(response.body, label).not.toMatch(/\bat .*\.(ts|js):\d+|SELECT |INSERT |UPDATE /);
          }
          const documented = declared.get(`${route.method} ${route.url.replace(/:([a-z_]+)/g, '{$1}')}`);
          // A malformed path can leave the route unmatched: then it is the not-found handler's 404.
          if (!(response.statusCode === 404 && !documented?.has(404))) {
            expect(documented?.has(response.statusCode), `${label}: status not declared`).toBe(true);
          }
          const after = await fingerprint(tenant);
          if (response.statusCode >= 400)
            expect(after, `${label}: a refused request changed rows`).toBe(before);
          before = after;
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('refuses NUL characters and lone surrogates with a 422 naming the field', async () => {
    for (const [url, method, body, field] of [
      ['/api/v1/roles', 'POST', { name: 'a\u0000b' }, 'name'],
      ['/api/v1/locations', 'POST', { name: 'x', street: 's', city: 'Ber\u0000lin' }, 'city'],
      ['/api/v1/roles', 'POST', { name: '\ud800' }, 'name'],
    ] as const) {
      const response = await admin.request(method, url, body);
      expect(response.statusCode).toBe(422);
      expect(response.json()).toEqual({
        error: {
          code: 'VALIDATION_FAILED',
          message: `${field}: must not contain NUL characters or invalid Unicode`,
        },
      });
    }
  });
});
