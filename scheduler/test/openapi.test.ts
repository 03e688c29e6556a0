import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/context.ts';

let ctx: TestContext;
let spec: {
  openapi: string;
  paths: Record<
    string,
    Record<string, { security?: unknown[]; responses: Record<string, unknown>; requestBody?: unknown }>
  >;
};

beforeAll(async () => {
  ctx = await createTestContext();
  const response = await ctx.request('GET', '/api/docs/openapi.json');
  expect(response.statusCode).toBe(200);
  spec = response.json();
});
afterAll(async () => ctx?.close());

/** `/api/v1/roles/:id` -> `/api/v1/roles/{id}` */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3 document', async () => {
    expect(spec.openapi).toMatch(/^3\./);
    const result = await validate(structuredClone(spec) as never);
    expect(result.valid, JSON.stringify((result as { errors?: unknown }).errors)).toBe(true);
  });

  it('lists exactly the routes the app registers (docs routes aside)', () => {
    const registered = ctx.routes
      .filter((r) => !r.hidden && !r.url.startsWith('/api/docs'))
      .map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`)
      .sort();
    const documented = Object.entries(spec.paths)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`))
      .sort();
    expect(documented).toEqual(registered);
    expect(registered.length).toBeGreaterThan(10);
  });

  it('requires bearer auth on every /api/v1 operation and documents its error shape', () => {
    for (const [path, operations] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!path.startsWith('/api/v1/')) continue;
        expect(operation.security, `${method} ${path}`).toEqual([{ bearerAuth: [] }]);
        expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(
          expect.arrayContaining(['401', '403']),
        );
      }
    }
  });

  it('describes request bodies from the same schemas that validate them', () => {
    const body = spec.paths['/api/v1/roles']?.post?.requestBody as {
      content: { 'application/json': { schema: { required: string[]; additionalProperties: boolean } } };
    };
    expect(body.content['application/json'].schema.required).toEqual(['name']);
    expect(body.content['application/json'].schema.additionalProperties).toBe(false);
  });

  it('serves the interactive view at /api/docs/', async () => {
    const response = await ctx.request('GET', '/api/docs/');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.body).toMatch(/swagger/i);
  });
});
