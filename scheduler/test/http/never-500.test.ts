import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestContext, type RouteInfo, type TestContext } from '../support/context.ts';

/**
 * Property: nothing a client sends to a route that takes a body produces a 5xx or a
 * response outside the error shape. Bodies are arbitrary JSON values and arbitrary text.
 */
let ctx: TestContext;
let admin: Caller;
let bodyRoutes: RouteInfo[];

beforeAll(async () => {
  ctx = await createTestContext();
  admin = await ctx.caller('admin');
  bodyRoutes = ctx.routes.filter(
    (r) => r.url.startsWith('/api/v1/') && (r.method === 'POST' || r.method === 'PATCH'),
  );
});
afterAll(async () => ctx?.close());

const concrete = (url: string) => url.replace(/:[a-z_]+/g, '0123456789abcdef0123456789abcdef');

function expectClientError(status: number, body: string, label: string): void {
  expect(status, label).toBeLessThan(500);
  if (status >= 400) {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    expect(typeof parsed.error?.code, label).toBe('string');
    expect(typeof parsed.error?.message, label).toBe('string');
    expect(body, label).not.toMatch(/\bat .*\.(ts|js):\d+|SELECT|INSERT|UPDATE/);
  }
}

describe('no input yields a 5xx', () => {
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

  it('arbitrary JSON bodies on every route that takes a body', async () => {
    expect(bodyRoutes.length).toBeGreaterThan(3);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...bodyRoutes),
        fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }),
        async (route, value) => {
          const response = await ctx.request(route.method, concrete(route.url), {
            token: admin.token,
            rawBody: JSON.stringify(value),
          });
          expectClientError(
            response.statusCode,
            response.body,
            `${route.method} ${route.url} ${JSON.stringify(value)}`,
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('arbitrary text bodies', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...bodyRoutes),
        fc.string({ maxLength: 200, unit: 'binary' }),
        async (route, text) => {
          const response = await ctx.request(route.method, concrete(route.url), {
            token: admin.token,
            rawBody: text,
          });
          expectClientError(
            response.statusCode,
            response.body,
            `${route.method} ${route.url} ${JSON.stringify(text)}`,
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('field values of every type in otherwise plausible bodies', async () => {
    const plausible: Record<string, string[]> = {
      '/api/v1/roles': ['name', 'description'],
      '/api/v1/locations': ['name', 'street', 'city', 'postal_code', 'country'],
      '/api/v1/tenant/settings': ['time_tracking_enabled', 'timezone'],
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(plausible)),
        fc.dictionary(
          fc.constantFrom(
            'name',
            'description',
            'street',
            'city',
            'postal_code',
            'country',
            'time_tracking_enabled',
            'timezone',
          ),
          fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }),
        ),
        async (url, body) => {
          const method = url === '/api/v1/tenant/settings' ? 'PATCH' : 'POST';
          const response = await admin.request(method, url, body);
          expectClientError(response.statusCode, response.body, `${method} ${url} ${JSON.stringify(body)}`);
        },
      ),
      { numRuns: 300 },
    );
  });
});
