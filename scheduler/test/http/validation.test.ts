import type { FastifyError } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeValidationError } from '../../src/http/validation.ts';
import { useRouteTests } from '../support/context.ts';
import { setTimeTracking } from '../support/time-tracking.ts';

/**
 * The one-line 422 message built from Ajv's first issue, as Fastify hands it over
 * (`error.validation`, `error.validationContext`).
 */
function failure(
  issue: {
    instancePath?: string;
    keyword?: string;
    message?: string;
    params?: Record<string, unknown>;
  } | null,
  validationContext?: string,
): FastifyError {
  const error = new Error('validation failed') as FastifyError;
  if (issue) error.validation = [issue as NonNullable<FastifyError['validation']>[number]];
  if (validationContext !== undefined) Object.assign(error, { validationContext });
  return error;
}

describe('describeValidationError', () => {
  it.each([
    ['/name', 'name'],
    ['/slots/0/role_id', 'slots[0].role_id'],
    ['/0', '[0]'],
    ['/0/1/name', '[0][1].name'],
    ['/a~1b/c~0d', 'a/b.c~d'],
    ['/a1/1a/12', 'a1.1a[12]'],
  ])('names the field at %s as %s', (instancePath, field) => {
    expect(
      describeValidationError(failure({ instancePath, keyword: 'type', message: 'must be string' })),
    ).toBe(`${field}: must be string`);
  });

  it('names a missing property under its parent', () => {
    expect(
      describeValidationError(
        failure({ instancePath: '/slots/2', keyword: 'required', params: { missingProperty: 'role_id' } }),
      ),
    ).toBe('slots[2].role_id: is required');
    expect(
      describeValidationError(
        failure({ instancePath: '', keyword: 'required', params: { missingProperty: 'name' } }),
      ),
    ).toBe('name: is required');
  });

  it('names a field that is not allowed under its parent', () => {
    expect(
      describeValidationError(
        failure({
          instancePath: '/address',
          keyword: 'additionalProperties',
          params: { additionalProperty: 'zip' },
        }),
      ),
    ).toBe('address.zip: is not an allowed field');
    expect(
      describeValidationError(
        failure({ keyword: 'additionalProperties', params: { additionalProperty: 'colour' } }),
      ),
    ).toBe('colour: is not an allowed field');
  });

  it('names the part of the request when the issue is about the whole of it', () => {
    expect(
      describeValidationError(failure({ instancePath: '', keyword: 'type', message: 'must be object' })),
    ).toBe('body: must be object');
    expect(
      describeValidationError(
        failure({ instancePath: '', keyword: 'type', message: 'must be object' }, 'querystring'),
      ),
    ).toBe('querystring: must be object');
    expect(
      describeValidationError(
        failure({ instancePath: '/id', keyword: 'maxLength', message: 'too long' }, 'params'),
      ),
    ).toBe('id: too long');
  });

  it('names every format a field of either takes (a time filter: an instant or a date)', () => {
    const error = failure(null);
    error.validation = [
      {
        instancePath: '/from',
        keyword: 'format',
        message: 'must match format "date-time"',
        params: { format: 'date-time' },
      },
      {
        instancePath: '/from',
        keyword: 'format',
        message: 'must match format "date"',
        params: { format: 'date' },
      },
      { instancePath: '/from', keyword: 'anyOf', message: 'must match a schema in anyOf', params: {} },
    ] as NonNullable<FastifyError['validation']>;
    expect(describeValidationError(error)).toBe('from: must match format "date-time" or "date"');
    expect(
      describeValidationError(
        failure({
          instancePath: '/at',
          keyword: 'format',
          message: 'must match format "date-time"',
          params: { format: 'date-time' },
        }),
      ),
    ).toBe('at: must match format "date-time"');
  });

  it('falls back to "is invalid" without a message, and to the body without any issue', () => {
    expect(describeValidationError(failure({ instancePath: '/when', keyword: 'format' }))).toBe(
      'when: is invalid',
    );
    expect(describeValidationError(failure(null))).toBe('body: is invalid');
    expect(describeValidationError(failure(null, 'params'))).toBe('params: is invalid');
  });
});

interface SchemaNode {
  properties?: Record<string, { format?: string; anyOf?: { format?: string }[] }>;
}

/** The fields that take an instant: `date-time` alone, or either branch of a time filter's instant or date. */
const instantFields = (schema: unknown): string[] =>
  Object.entries((schema as SchemaNode | undefined)?.properties ?? {})
    .filter(([, node]) => [node, ...(node.anyOf ?? [])].some((branch) => branch.format === 'date-time'))
    .map(([name]) => name);

/**
 * Every time filter (`from`, `to` of every list) also takes a calendar date, the start of
 * that day in the tenant's time zone: each refuses a day that does not exist (422 naming
 * it, before anything is read), and reads a date as an instant (two equal days are an
 * empty window, 422 naming `to`; the next day answers).
 */
describe('calendar dates in every time filter', () => {
  const t = useRouteTests();
  const timeFilters = () =>
    t.ctx.routes.filter((route) => {
      const fields = instantFields(route.schema.querystring);
      return fields.includes('from') && fields.includes('to');
    });

  it('refuses a date that does not exist, and one not after from, in every list', async () => {
    await setTimeTracking(t.admin, true);
    const routes = timeFilters();
    expect(routes.map((route) => `${route.method} ${route.url}`).sort()).toEqual([
      'GET /api/v1/audit-log',
      'GET /api/v1/events',
      'GET /api/v1/events/:event_id/shifts',
      'GET /api/v1/me/assignments',
      'GET /api/v1/me/open-shifts',
      'GET /api/v1/shifts',
      'GET /api/v1/shifts/plan',
      'GET /api/v1/time-off',
      'GET /api/v1/time-tracking/entries',
      'GET /api/v1/time-tracking/export.csv',
      'GET /api/v1/users/:id/assignments',
    ]);
    const eventId = (
      await t.admin.request('POST', '/api/v1/events', {
        name: 'Festival',
        starts_at: '2030-07-01T00:00:00Z',
        ends_at: '2030-07-08T00:00:00Z',
      })
    ).json().id;
    for (const route of routes) {
      // A path names the event, or the admin whose assignments are read.
      const path = route.url
        .replace(':id/assignments', `${t.admin.userId}/assignments`)
        .replace(/:[a-z_]+/g, eventId);
      for (const [query, message] of [
        ['from=2026-02-30&to=2026-03-01', 'from: must match format "date-time" or "date"'],
        ['from=2026-02-01&to=2026-13-01', 'to: must match format "date-time" or "date"'],
        ['from=2026-12-01&to=2026-12-01', 'to: must be after from'],
        ['from=2026-12-01T00:00:00Z&to=2026-12-01', 'to: must be after from'],
      ]) {
        const response = await t.admin.request(route.method, `${path}?${query}`);
        expect(response.statusCode, `${path}?${query}: ${response.body}`).toBe(422);
        expect(response.json(), `${path}?${query}`).toEqual({
          error: { code: 'VALIDATION_FAILED', message },
        });
      }
      for (const query of ['from=2026-12-01&to=2026-12-02', 'from=2026-11-30T12:00:00Z&to=2026-12-02']) {
        const response = await t.admin.request(route.method, `${path}?${query}`);
        expect(response.statusCode, `${path}?${query}: ${response.body}`).toBe(200);
      }
    }
  });
});

/**
 * Every instant any route takes, in a query string or a body, gets the one reading of
 * time/instant.ts: an offset RFC 3339 allows but PostgreSQL cannot read (past ±15:59)
 * is 422, on every route, never the database's 500.
 */
describe('instants with offsets past ±15:59, on every route that takes one', () => {
  const t = useRouteTests();
  const format = /^[a-z_]+: must match format "date-time"( or "date")?$/;

  it.each(['%2B16:00', '-16:00', '%2B23:59'])('refuses %s in every time query parameter', async (offset) => {
    await setTimeTracking(t.admin, true);
    const routes = t.ctx.routes.filter((route) => instantFields(route.schema.querystring).length > 0);
    expect(routes.length).toBeGreaterThanOrEqual(6);
    for (const route of routes) {
      const query = instantFields(route.schema.querystring)
        .map((name) => `${name}=2030-07-02T10:00:00${offset}`)
        .join('&');
      const url = `${route.url.replace(/:[a-z_]+/g, '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c')}?${query}`;
      const response = await t.admin.request(route.method, url);
      expect(response.statusCode, `${url}: ${response.body}`).toBe(422);
      expect(response.json().error.message, url).toMatch(format);
    }
  });

  it.each(['+16:00', '-16:00', '+23:59'])('refuses %s in every time field of a body', async (offset) => {
    await setTimeTracking(t.admin, true);
    const routes = t.ctx.routes.filter((route) => instantFields(route.schema.body).length > 0);
    expect(routes.length).toBeGreaterThanOrEqual(4);
    for (const route of routes) {
      // The route's own documented example: a body valid in every other field, so the
      // only thing left to refuse is the offset (a body missing a required field would be
      // 422 for that, offset limit or not).
      const example = (route.schema.body as { examples?: Record<string, unknown>[] }).examples?.[0];
      expect(example, `${route.method} ${route.url} has a body example`).toBeDefined();
      for (const field of instantFields(route.schema.body)) {
        const url = route.url.replace(/:[a-z_]+/g, '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c');
        const body = { ...example, [field]: `2030-07-02T10:00:00${offset}` };
        const response = await t.admin.request(route.method, url, body);
        expect(response.statusCode, `${route.method} ${url} ${field}: ${response.body}`).toBe(422);
        expect(response.json(), `${route.method} ${url} ${field}`).toEqual({
          error: { code: 'VALIDATION_FAILED', message: `${field}: must match format "date-time"` },
        });
      }
    }
  });
});
