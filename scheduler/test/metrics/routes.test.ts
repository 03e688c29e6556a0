import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import {
  type Caller,
  createTestContext,
  MISSING_TOKEN_BODY,
  type TestContext,
  uniqueName,
} from '../support/context.ts';
import { on, withDbHooks } from '../support/db-hooks.ts';
import { bareTenant, queuePushJobs } from '../support/jobs.ts';
import {
  familyOf,
  histogramOf,
  type MetricFamily,
  parsePrometheusText,
  sampleValue,
} from '../support/prometheus-text.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * GET /metrics (src/metrics/): only with METRICS_TOKEN set, only for that token; the
 * exposition read back with a strict parser of the text format (support/prometheus-text.ts).
 * Every label is bounded: route templates (a request for one shift counts under
 * /api/v1/shifts/:id), one label for every unknown path, no tenant or user id anywhere.
 */
const TOKEN = 'metrics-token-of-this-test-0123456789';
let now = new Date('2030-07-01T20:00:00Z');
let ctx: TestContext;
let hooks: ReturnType<typeof withDbHooks>;

beforeAll(async () => {
  ctx = await createTestContext({
    metricsToken: TOKEN,
    clock: { now: () => now },
    formSubmitLimit: { max: 1, windowMs: 60 * 60 * 1000 },
    viewDb: (db) => {
      hooks = withDbHooks(db);
      return hooks.db;
    },
  });
});
afterAll(async () => ctx?.close());

async function scrape(): Promise<{ text: string; families: MetricFamily[] }> {
  const response = await ctx.request('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return { text: response.body, families: parsePrometheusText(response.body) };
}

const requests = (families: MetricFamily[], labels: Record<string, string>) =>
  sampleValue(families, 'scheduler_http_requests_total', labels) ?? 0;

describe('who may read /metrics', () => {
  it('is not there without METRICS_TOKEN: 404 as any unknown path', async () => {
    const bare = await createTestContext();
    try {
      const response = await bare.request('GET', '/metrics', {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no route for GET /metrics' } });
    } finally {
      await bare.close();
    }
  });

  it('refuses a scrape without the token, with another, or with a tenant’s token: 401', async () => {
    const missing = await ctx.request('GET', '/metrics');
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expect(missing.json()).toEqual(MISSING_TOKEN_BODY);
    const admin = await ctx.caller('admin', uniqueName('tenant'));
    for (const token of [`${TOKEN}x`, TOKEN.slice(0, -1), admin.token]) {
      const refused = await ctx.request('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect(refused.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'invalid metrics token' } });
    }
    const basic = await ctx.request('GET', '/metrics', {
      headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
    });
    expect(basic.statusCode).toBe(401);
  });

  it('is left out of the OpenAPI document: it is no part of the API', async () => {
    const document = (await ctx.request('GET', '/api/docs/openapi.json')).json() as { paths: object };
    expect(Object.keys(document.paths)).not.toContain('/metrics');
    expect(Object.keys(document.paths)).toContain('/ready');
  });
});

describe('requests', () => {
  it('counts by route template, method and status, and every unknown path under one label', async () => {
    const { admin } = await ctx.freshTenant();
    const before = (await scrape()).families;
    const shift = randomUUID();
    expect((await admin.request('GET', `/api/v1/shifts/${shift}`)).statusCode).toBe(404);
    expect((await admin.request('GET', `/api/v1/shifts/${randomUUID()}`)).statusCode).toBe(404);
    expect((await ctx.request('GET', `/no/such/${shift}`)).statusCode).toBe(404);
    expect((await ctx.request('POST', `/api/v1/${admin.tenantId}/nothing`)).statusCode).toBe(404);
    expect((await ctx.request('GET', '/health')).statusCode).toBe(200);

    const { text, families } = await scrape();
    const grew = (labels: Record<string, string>) => requests(families, labels) - requests(before, labels);
    expect(grew({ method: 'GET', route: '/api/v1/shifts/:id', status: '404' })).toBe(2);
    expect(grew({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(grew({ method: 'POST', route: 'unmatched', status: '404' })).toBe(1);
    expect(grew({ method: 'GET', route: '/health', status: '200' })).toBe(1);

    // Labels are the bounded sets only: routes the app has, and the one for no route.
    const routes = new Set(ctx.routes.map((r) => r.url));
    const requestFamily = familyOf(families, 'scheduler_http_requests_total');
    for (const sample of requestFamily.metrics) {
      expect(Object.keys(sample.labels).sort()).toEqual(['method', 'route', 'status']);
      expect(routes.has(sample.labels.route ?? '') || sample.labels.route === 'unmatched').toBe(true);
      expect(sample.labels.status).toMatch(/^[1-5]\d\d$/);
    }
    // No id of any kind anywhere: not the raw paths, not a tenant.
    expect(text).not.toContain(shift);
    expect(text).not.toContain(admin.tenantId);
    expect(text).not.toMatch(/[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/i);

    const shiftDurations = histogramOf(families, 'scheduler_http_request_duration_seconds').find(
      (m) => m.labels.route === '/api/v1/shifts/:id' && m.labels.method === 'GET',
    );
    expect(shiftDurations?.count).toBeGreaterThanOrEqual(2);
    expect(Object.keys(shiftDurations?.labels ?? {}).sort()).toEqual(['method', 'route']);
  });

  it('counts a statement the database cancelled and one it never answered, as 503s', async () => {
    const { admin } = await ctx.freshTenant();
    const before = (await scrape()).families;
    const timeouts = (families: MetricFamily[], deadline: string) =>
      sampleValue(families, 'scheduler_db_statement_timeouts_total', { deadline }) ?? 0;
    hooks.failNext(
      on('select', 'roles'),
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    );
    expect((await admin.request('GET', '/api/v1/roles')).statusCode).toBe(503);
    hooks.failNext(on('select', 'roles'), new Error('Query read timeout'));
    expect((await admin.request('GET', '/api/v1/roles')).statusCode).toBe(503);
    // Another failure is no timeout.
    hooks.failNext(on('select', 'roles'), Object.assign(new Error('gone'), { code: '57P01' }));
    expect((await admin.request('GET', '/api/v1/roles')).statusCode).toBe(503);

    const after = (await scrape()).families;
    expect(timeouts(after, 'server') - timeouts(before, 'server')).toBe(1);
    expect(timeouts(after, 'client') - timeouts(before, 'client')).toBe(1);
    expect(
      requests(after, { method: 'GET', route: '/api/v1/roles', status: '503' }) -
        requests(before, { method: 'GET', route: '/api/v1/roles', status: '503' }),
    ).toBe(3);
  });
});

describe('what the app does besides answering', () => {
  it('counts the submit limiter’s refusals', async () => {
    const tenant = uniqueName('shop');
    const admin = await ctx.caller('admin', tenant, 'admin-1');
    const customer: Caller = await ctx.caller('customer', tenant, 'cust-1', { customer: 'c-1' });
    const { slug } = await created(admin, '/api/v1/forms', {
      title: 'Enquiry',
      fields: [{ name: 'text', label: 'Text', type: 'text', required: true }],
    });
    const before = sampleValue((await scrape()).families, 'scheduler_form_submit_refusals_total') ?? 0;
    const submit = () =>
      ctx.request('POST', `/api/v1/f/${slug}/submit`, {
        token: customer.token,
        body: { data: { text: 'hi' } },
      });
    expect((await submit()).statusCode).toBe(201);
    expect((await submit()).statusCode).toBe(429);
    expect((await submit()).statusCode).toBe(429);
    const { families, text } = await scrape();
    expect(sampleValue(families, 'scheduler_form_submit_refusals_total')).toBe(before + 2);
    expect(
      requests(families, { method: 'POST', route: '/api/v1/f/:slug/submit', status: '429' }),
    ).toBeGreaterThanOrEqual(2);
    expect(text).not.toContain(String(slug));
  });

  it('counts committed changes by type and the reminders sent, not a change rolled back', async () => {
    const { admin, employee } = await ctx.freshTenant();
    const before = (await scrape()).families;
    const changes = (families: MetricFamily[], type: string) =>
      sampleValue(families, 'scheduler_changes_total', { type }) ?? 0;
    const settings = await admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      remind_minutes_before_shift: 720,
    });
    expect(settings.statusCode, settings.body).toBe(200);
    const role = await newRole(admin);
    await qualify(admin, employee, role);
    const shift = await newShift(admin, await newEvent(admin), {
      roleId: role,
      starts_at: '2030-07-02T16:00:00Z',
      ends_at: '2030-07-03T00:00:00Z',
    });
    const seat = await admin.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
      user_id: employee.userId,
    });
    expect(seat.statusCode, seat.body).toBe(201);
    // The same seat again: refused, its transaction rolled back.
    const again = await admin.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
      user_id: employee.userId,
    });
    expect(again.statusCode).toBe(409);
    now = new Date('2030-07-02T04:00:00Z');
    expect(await ctx.app.sweepReminders()).toBe(1);

    const after = (await scrape()).families;
    expect(changes(after, 'seat.assigned') - changes(before, 'seat.assigned')).toBe(1);
    expect(changes(after, 'reminder.sent') - changes(before, 'reminder.sent')).toBe(1);
    expect(
      (sampleValue(after, 'scheduler_reminders_sent_total') ?? 0) -
        (sampleValue(before, 'scheduler_reminders_sent_total') ?? 0),
    ).toBe(1);
    for (const sample of familyOf(after, 'scheduler_changes_total').metrics) {
      expect(Object.keys(sample.labels)).toEqual(['type']);
    }
  });

  it('counts job runs by kind and outcome and times them', async () => {
    const tenantId = await bareTenant(ctx.db.owner);
    const before = (await scrape()).families;
    const runs = (families: MetricFamily[]) =>
      familyOf(families, 'scheduler_job_runs_total')
        .metrics.filter((m) => m.labels.kind === 'push')
        .reduce((sum, m) => sum + (m as { value: number }).value, 0);
    // Deliveries of notifications that do not exist: each run ends at once.
    await queuePushJobs(ctx.db.db, tenantId, 3, 1);
    await ctx.app.jobsIdle();
    const after = (await scrape()).families;
    expect(runs(after) - runs(before)).toBe(3);
    expect(histogramOf(after, 'scheduler_job_run_duration_seconds').map((m) => m.labels)).toContainEqual({
      kind: 'push',
    });
    expect(
      (sampleValue(after, 'scheduler_job_run_duration_seconds', { kind: 'push' }) ?? 0) -
        (sampleValue(before, 'scheduler_job_run_duration_seconds', { kind: 'push' }) ?? 0),
    ).toBe(3);
    expect(sampleValue(after, 'scheduler_job_worker_running')).toBe(1);
  });
});

describe('the database pool', () => {
  it('gives its connections on PostgreSQL, and nothing on the embedded database, which has no pool', async () => {
    const families = (await scrape()).families;
    const names = families.map((f) => f.name);
    if (ctx.db.kind === 'pglite') {
      expect(names.filter((n) => n.startsWith('scheduler_db_pool_'))).toEqual([]);
      return;
    }
    expect(sampleValue(families, 'scheduler_db_pool_max_connections')).toBe(20);
    const inUse = sampleValue(families, 'scheduler_db_pool_connections', { state: 'in_use' }) ?? -1;
    const idle = sampleValue(families, 'scheduler_db_pool_connections', { state: 'idle' }) ?? -1;
    expect(inUse).toBeGreaterThanOrEqual(0);
    expect(idle).toBeGreaterThanOrEqual(0);
    expect(inUse + idle).toBeLessThanOrEqual(20);
    expect(sampleValue(families, 'scheduler_db_pool_waiting')).toBe(0);
  });
});

describe('the queue, read at each scrape', () => {
  let idle: TestContext;
  beforeAll(async () => {
    // No worker in this process: what is queued stays due.
    idle = await createTestContext({ metricsToken: TOKEN, jobs: { concurrency: 0 } });
  });
  afterAll(async () => idle?.close());

  it('gives the depth of every tenant’s queue, the oldest due job’s age, and no worker running', async () => {
    const read = async () => {
      const response = await idle.request('GET', '/metrics', {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(response.statusCode).toBe(200);
      return parsePrometheusText(response.body);
    };
    const empty = await read();
    expect(familyOf(empty, 'scheduler_jobs_pending').metrics).toEqual([]);
    expect(sampleValue(empty, 'scheduler_job_worker_running')).toBe(0);

    const first = await bareTenant(idle.db.owner);
    const second = await bareTenant(idle.db.owner);
    await queuePushJobs(idle.db.db, first, 2);
    const [late] = await queuePushJobs(idle.db.db, second, 3);
    // One due for an hour; one not due yet; one held by a worker elsewhere.
    await asTenant(second, async () => {
      await sql`UPDATE jobs SET run_at = now() - interval '1 hour' WHERE id = ${late}::uuid`.execute(
        idle.db.owner,
      );
    });
    const [future] = await queuePushJobs(idle.db.db, first, 1);
    await sql`UPDATE jobs SET run_at = now() + interval '1 hour' WHERE id = ${future}::uuid`.execute(
      idle.db.owner,
    );
    const [leased] = await queuePushJobs(idle.db.db, second, 1);
    await sql`UPDATE jobs SET locked_until = now() + interval '1 minute', locked_by = 'elsewhere'
               WHERE id = ${leased}::uuid`.execute(idle.db.owner);

    const families = await read();
    expect(sampleValue(families, 'scheduler_jobs_pending', { kind: 'push' })).toBe(7);
    // Due: the first tenant's two and the second's three, the late one among them.
    expect(sampleValue(families, 'scheduler_jobs_due', { kind: 'push' })).toBe(5);
    const age = sampleValue(families, 'scheduler_jobs_oldest_due_age_seconds', { kind: 'push' }) ?? 0;
    expect(age).toBeGreaterThanOrEqual(3600);
    // Read past the tenant wall, named by no tenant.
    const text = (await idle.request('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
      .body;
    for (const id of [first, second]) expect(text).not.toContain(id);
  });
});
