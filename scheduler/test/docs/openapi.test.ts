import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { validate } from '@readme/openapi-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/errors.ts';
import { createTestContext, type TestContext } from '../support/context.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');

interface Media {
  schema?: { $ref?: string; type?: string; items?: { $ref?: string } };
  example?: unknown;
  examples?: Record<string, { value: { error?: { code: string } } }>;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; example?: unknown }[];
  security?: unknown[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<
    string,
    { description: string; content?: Record<string, Media>; headers?: Record<string, unknown> }
  >;
}
interface Schema {
  type?: string;
  required?: string[];
  minProperties?: number;
  additionalProperties?: boolean;
  properties?: Record<string, { readOnly?: boolean }>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, { description?: string }> };
}

let ctx: TestContext;
let spec: Document;
let operations: [string, Operation][];

beforeAll(async () => {
  ctx = await createTestContext();
  const response = await ctx.request('GET', '/api/docs/openapi.json');
  expect(response.statusCode).toBe(200);
  spec = response.json();
  operations = Object.entries(spec.paths).flatMap(([p, ops]) =>
    Object.entries(ops).map(([method, op]): [string, Operation] => [`${method} ${p}`, op]),
  );
});
afterAll(async () => ctx?.close());

/** `/api/v1/roles/:id` -> `/api/v1/roles/{id}` */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

describe('OpenAPI document', () => {
  it('names the licence by its SPDX identifier, as the LICENSE file and package.json do', () => {
    const info = (spec as unknown as { info: { license: unknown } }).info;
    expect(info.license).toEqual({
      name: 'Functional Source License, Version 1.1, ALv2 Future License',
      identifier: 'FSL-1.1-ALv2',
    });
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(spec.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(spec) as never);
    expect(result.valid, JSON.stringify((result as { errors?: unknown }).errors)).toBe(true);
  });

  it('passes Redocly CLI lint (recommended rules) without errors or warnings', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
    writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(spec, null, 2));
    copyFileSync(path.join(root, 'redocly.yaml'), path.join(dir, 'redocly.yaml'));
    copyFileSync(path.join(root, '.redocly.lint-ignore.yaml'), path.join(dir, '.redocly.lint-ignore.yaml'));
    const redocly = path.join(root, 'node_modules/.bin/redocly');
    const result = await run(redocly, ['lint', 'openapi.json', '--format=summary', '--max-problems=50'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout: string; stderr: string }) => error);
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output, output).toMatch(/Woohoo! Your API description is valid/);
    expect(output).not.toMatch(/warning /);
  });

  it('lists exactly the routes the app registers (docs routes aside), each with an operationId', () => {
    const registered = ctx.routes
      .filter((r) => !r.hidden && !r.url.startsWith('/api/docs'))
      .map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`)
      .sort();
    expect(operations.map(([key]) => key).sort()).toEqual(registered);
    expect(registered.length).toBeGreaterThan(10);
    const ids = operations.map(([, op]) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('requires bearer auth on every /api/v1 operation and says how to get a token', () => {
    for (const [key, operation] of operations) {
      if (!key.includes(' /api/v1/')) continue;
      expect(operation.security, key).toEqual([{ bearerAuth: [] }]);
      expect(Object.keys(operation.responses), key).toEqual(
        expect.arrayContaining(['401', '403', '500', '503']),
      );
    }
    expect(spec.components.securitySchemes.bearerAuth?.description).toMatch(/npm run -s token/);
  });

  it('describes every response for real and illustrates every body with an example', () => {
    for (const [key, operation] of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.description, `${key} ${status}`).not.toBe('Default Response');
        expect(response.description.length, `${key} ${status}`).toBeGreaterThan(3);
        const media =
          response.content?.['application/json'] ??
          response.content?.['text/calendar'] ??
          response.content?.['text/csv'] ??
          response.content?.['application/gzip'];
        if (status === '204') {
          expect(media, `${key} 204 has no body`).toBeUndefined();
          continue;
        }
        expect(media?.example ?? media?.examples, `${key} ${status} example`).toBeDefined();
      }
      const body = operation.requestBody?.content['application/json'];
      if (body) expect(body.example, `${key} request example`).toBeDefined();
      for (const parameter of operation.parameters ?? []) {
        expect(parameter.example, `${key} ${parameter.name} example`).toBeDefined();
      }
      expect(operation.description?.length ?? 0, `${key} description`).toBeGreaterThan(20);
    }
  });

  it('declares the x-request-id header on every response', () => {
    for (const [key, operation] of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.headers?.['x-request-id'], `${key} ${status}`).toEqual({
          $ref: '#/components/headers/RequestId',
        });
      }
    }
  });

  it('shares records and the error body as components, referenced with $ref', () => {
    expect(Object.keys(spec.components.schemas)).toEqual(
      expect.arrayContaining([
        'Error',
        'RoleDefinition',
        'CreateRoleRequest',
        'Location',
        'CreateLocationRequest',
        'TenantSettings',
        'ReplaceTenantSettings',
        'UserRecord',
        'UserDetail',
        'Health',
      ]),
    );
    const created = spec.paths['/api/v1/roles']?.post;
    expect(created?.requestBody?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/CreateRoleRequest',
    });
    expect(created?.responses['201']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/RoleDefinition',
    });
    expect(spec.paths['/api/v1/roles']?.get?.responses['200']?.content?.['application/json']?.schema).toEqual(
      {
        type: 'array',
        items: { $ref: '#/components/schemas/RoleDefinition' },
      },
    );
    expect(created?.responses['409']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
    const request = spec.components.schemas.CreateRoleRequest;
    expect(request?.required).toEqual(['name']);
    expect(request?.additionalProperties).toBe(false);
  });

  it('gives actions that take no body no request body, and every PATCH body one field at least', () => {
    // The routes whose body declares fields; the others take none.
    const withBody = new Set(
      ctx.routes
        .filter(
          (r) =>
            Object.keys((r.schema.body as { properties?: object } | undefined)?.properties ?? {}).length > 0,
        )
        .map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`),
    );
    const writes = operations.filter(([key]) => /^(post|put|patch|delete) /.test(key));
    expect(writes.length).toBeGreaterThan(40);
    for (const [key, operation] of writes) {
      expect(operation.requestBody !== undefined, key).toBe(withBody.has(key));
    }
    expect(spec.paths['/api/v1/events/{id}/publish']?.post?.requestBody).toBeUndefined();
    expect(spec.paths['/api/v1/roles/{id}']?.delete?.requestBody).toBeUndefined();
    for (const [key, operation] of writes.filter(([k]) => k.startsWith('patch '))) {
      const ref = operation.requestBody?.content['application/json']?.schema?.$ref ?? '';
      const body = spec.components.schemas[ref.replace('#/components/schemas/', '')];
      expect(body, key).toBeDefined();
      expect((body?.minProperties ?? 0) >= 1 || (body?.required?.length ?? 0) >= 1, key).toBe(true);
      expect(body?.additionalProperties, key).toBe(false);
    }
  });

  it('marks the fields the server sets as readOnly', () => {
    for (const name of ['RoleDefinition', 'Location', 'TenantSettings', 'UserRecord', 'UserDetail']) {
      const properties = spec.components.schemas[name]?.properties ?? {};
      for (const field of ['id', 'tenant_id', 'created_at']) {
        expect(properties[field]?.readOnly, `${name}.${field}`).toBe(true);
      }
    }
    expect(spec.components.schemas.Location?.properties?.lat?.readOnly).toBe(true);
    expect(spec.components.schemas.Location?.properties?.name?.readOnly).toBeUndefined();
  });

  it('lists per route only the error codes it can produce, each under its own status', () => {
    const codesOf = (key: string) => {
      const operation = operations.find(([k]) => k === key)?.[1];
      return Object.values(operation?.responses ?? {}).flatMap((response) =>
        Object.keys(response.content?.['application/json']?.examples ?? {}),
      );
    };
    expect(codesOf('get /api/v1/roles').sort()).toEqual([
      'FORBIDDEN',
      'INTERNAL',
      'RATE_LIMITED',
      'SERVICE_UNAVAILABLE',
      'UNAUTHORIZED',
    ]);
    expect(codesOf('post /api/v1/roles')).toEqual(expect.arrayContaining(['DUPLICATE', 'VALIDATION_FAILED']));
    expect(codesOf('post /api/v1/roles')).not.toContain('NOT_FOUND');
    expect(codesOf('delete /api/v1/roles/{id}')).toEqual(
      expect.arrayContaining(['NOT_FOUND', 'INVALID_STATE']),
    );
    // A GET with a path id and no query string: the pipeline refuses no input of it with 422.
    expect(codesOf('get /api/v1/shifts/{id}')).not.toContain('VALIDATION_FAILED');
    expect(codesOf('get /api/v1/shifts/{id}')).toEqual(
      expect.arrayContaining(['NOT_FOUND', 'URI_TOO_LONG', 'BAD_REQUEST']),
    );
    for (const [key, operation] of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [code, example] of Object.entries(
          response.content?.['application/json']?.examples ?? {},
        )) {
          expect(errorCatalogue[code as keyof typeof errorCatalogue]?.status, `${key} ${code}`).toBe(
            Number(status),
          );
          expect(example.value.error?.code).toBe(code);
        }
      }
    }
  });

  // A compiler process over the types of every route: many times an ordinary test's work,
  // and more than a minute of it on a loaded machine.
  it('generates a typed client that compiles (openapi-typescript)', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'openapi-client-'));
    writeFileSync(path.join(dir, 'api.d.ts'), astToString(await openapiTS(JSON.stringify(spec))));
    writeFileSync(
      path.join(dir, 'client.ts'),
      `import type { components, paths } from './api.d.ts';
type Role = components['schemas']['RoleDefinition'];
type CreateRole = paths['/api/v1/roles']['post']['requestBody']['content']['application/json'];
type Created = paths['/api/v1/roles']['post']['responses'][201]['content']['application/json'];
type Problem = paths['/api/v1/roles']['post']['responses'][409]['content']['application/json'];
type Settings = paths['/api/v1/tenant/settings']['get']['responses'][200]['content']['application/json'];
type Payroll = paths['/api/v1/time-tracking/export.csv']['get']['responses'][200]['content']['text/csv'];
type PayrollPeriod = paths['/api/v1/time-tracking/export.csv']['get']['parameters']['query'];
export async function createRole(base: string, token: string, body: CreateRole): Promise<Role | Problem> {
  const response = await fetch(base + '/api/v1/roles', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.ok ? ((await response.json()) as Created) : ((await response.json()) as Problem);
}
export const example: CreateRole = { name: 'Medic', description: null };
// @ts-expect-error name is required
export const missingName: CreateRole = { description: 'x' };
export const zone = (settings: Settings): string => settings.timezone;
export const code = (problem: Problem): string => problem.error.code;
export async function payroll(base: string, token: string, period: PayrollPeriod): Promise<Payroll> {
  const query = new URLSearchParams(period).toString();
  const response = await fetch(base + '/api/v1/time-tracking/export.csv?' + query, {
    headers: { authorization: 'Bearer ' + token },
  });
  return (await response.text()) satisfies Payroll;
}
// @ts-expect-error the period is required
export const noPeriod: PayrollPeriod = { from: '2027-07-01T00:00:00Z' };
`,
    );
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          allowImportingTsExtensions: true,
          lib: ['ES2022', 'DOM'],
          types: [],
        },
        files: ['client.ts'],
      }),
    );
    const tsc = path.join(root, 'node_modules/.bin/tsc');
    const result = await run(tsc, ['-p', dir]).catch((error: { stdout: string }) => error);
    expect(result.stdout).toBe('');
  });

  it('serves the interactive view at /api/docs/', async () => {
    const response = await ctx.request('GET', '/api/docs/');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.body).toMatch(/swagger/i);
  });
});
