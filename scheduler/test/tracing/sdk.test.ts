import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { until } from '../../../scripts/test-wait.ts';
import { TRACING_MIN_NODE } from '../../src/config.ts';
import { type Api, ENTRIES, httpCaller, PROCESS_START_MS, startApi } from '../support/api-process.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { type PushService, startPushService } from '../support/push-service.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';
import { NEEDS_NODE_22_15 } from '../support/skips.ts';
import { createTestKeys } from '../support/tokens.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * OpenTelemetry traces of the real server process (src/tracing/sdk.ts, src/main.ts): one
 * trace holds the request, its SQL (PostgreSQL: the pg driver; PGlite has no driver to
 * instrument) and the delivery job it queued (a webhook's, a Web Push message's), with the
 * job's POST; the sources under tsx (`npm run dev`) trace as the bundle does; the loader
 * hook wraps only the modules the instrumentations patch; a start without the settings
 * loads no SDK module at all.
 */
vi.setConfig({ testTimeout: 2 * PROCESS_START_MS });
const onPostgres = inject('testDb') === 'postgres';
const sdkRuns = nodeAtLeast(TRACING_MIN_NODE);

function nodeAtLeast([major, minor]: readonly [number, number]): boolean {
  const [m = 0, n = 0] = process.versions.node.split('.').map(Number);
  return m > major || (m === major && n >= minor);
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function database(): Promise<Record<string, string>> {
  if (onPostgres) {
    const { openTestDatabase } = await import('../support/database.ts');
    const db = await openTestDatabase();
    cleanups.push(() => db.dispose());
    return { DATABASE_URL: db.url as string };
  }
  return { DATA_DIR: mkdtempSync(path.join(tmpdir(), 'tracing-')) };
}

/**
 * The modules a process resolved, through test/support/module-log.mjs, and those of them
 * import-in-the-middle wrapped: a wrapper (its URL marked `iitm=`) imports the module it
 * wraps, so the wrapped ones are those a wrapper imported.
 */
function moduleLog(): { env: Record<string, string>; modules: () => string[]; wrapped: () => string[] } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'modules-')), 'modules.log');
  const hook = path.resolve(import.meta.dirname, '../support/module-log.mjs');
  const lines = () =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split('\t') as [string, string?]);
  return {
    env: { NODE_OPTIONS: `--import=${hook}`, MODULE_LOG: file },
    modules: () => lines().map(([url]) => url),
    wrapped: () => [
      ...new Set(lines().flatMap(([url, importer]) => (importer?.includes('iitm=') ? [url] : []))),
    ],
  };
}

const text = (span: ReceivedSpan) => JSON.stringify(span.attributes);

describe('traces', runsIf(sdkRuns, NEEDS_NODE_22_15), () => {
  it('follow a request through its SQL to the webhook delivery job and its POST', async () => {
    const keys = await createTestKeys();
    const otlp: OtlpReceiver = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const hooks = await startWebhookReceiver();
    cleanups.push(() => hooks.close());
    const api: Api = await startApi(keys, {
      ...(await database()),
      OUTBOUND_ALLOWED_HOSTS: new URL(hooks.origin).host,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.origin,
      OTEL_SERVICE_NAME: 'scheduler-under-test',
      // Batches leave soon after their spans end (the SDK's default waits 5 s).
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    cleanups.push(() => api.stop());
    const admin = await httpCaller(keys, () => api, 'traced', 'admin', 'admin-1');
    const hook = await admin.request('POST', '/api/v1/webhooks', {
      url: hooks.url('traced'),
      events: ['event.published'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    // A calendar feed read: its address is its secret.
    const feed = await admin.request('POST', '/api/v1/me/calendar-token');
    expect(feed.statusCode, feed.body).toBe(201);
    const { token: feedToken } = feed.json() as { token: string };
    expect((await fetch(`${api.base}/cal/${feedToken}.ics`)).status).toBe(200);
    await newEvent(admin);
    await until(() => hooks.received('traced').length > 0, 50);

    // The job's span and its POST arrive; the publish request's trace is the job's.
    let job: ReceivedSpan | undefined;
    await until(() => {
      job = otlp.spans().find((s) => s.name === 'job webhook' && s.parentSpanId !== undefined);
      return (
        job !== undefined && otlp.spans().some((s) => s.parentSpanId === job?.spanId && s.name === 'POST')
      );
    }, 50);
    const trace = otlp.spans().filter((s) => s.traceId === job?.traceId);
    const server = trace.find((s) => s.kind === 2 && s.name === 'POST /api/v1/events/:id/publish');
    expect(server?.parentSpanId).toBeUndefined();
    const route = trace.find((s) => s.name === 'request' && s.attributes['http.route'] !== undefined);
    expect(route?.attributes['http.route']).toBe('/api/v1/events/:id/publish');
    expect(route?.parentSpanId).toBe(server?.spanId);
    const post = trace.find((s) => s.parentSpanId === job?.spanId && s.kind === 3 && s.name === 'POST');
    expect(post?.name).toBe('POST');
    // The receiver's address without its path (a webhook's path may be its secret).
    expect(post?.attributes['url.full']).toBe(hooks.origin);
    expect(post?.attributes['server.port']).toBe(Number(new URL(hooks.origin).port));
    expect(job?.attributes).toMatchObject({
      'scheduler.job.kind': 'webhook',
      'scheduler.job.outcome': 'done',
    });
    if (onPostgres) {
      const queries = trace.filter(
        (s) => s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql',
      );
      expect(queries.length).toBeGreaterThan(0);
      expect(queries.every((s) => s.attributes['db.query.parameter.0'] === undefined)).toBe(true);
    }
    // Nothing of the caller's in any span: no tenant id, no token.
    const feedSpan = () =>
      otlp.spans().find((s) => s.kind === 2 && String(s.attributes['url.path']).startsWith('/cal/'));
    await until(() => feedSpan() !== undefined, 50);
    expect(feedSpan()?.attributes['url.path']).toBe('/cal/…');
    const secrets = [
      admin.tenantId,
      admin.tenantId.replaceAll('-', ''),
      admin.userId,
      admin.token,
      feedToken,
    ];
    for (const span of otlp.spans()) {
      for (const secret of secrets) expect(text(span)).not.toContain(secret);
    }
    expect(otlp.refused()).toEqual([]);
  });

  it('follow an assignment to the Web Push delivery job and its POST', async () => {
    const keys = await createTestKeys();
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const push: PushService = await startPushService({ plain: true });
    cleanups.push(() => push.close());
    const api = await startApi(keys, {
      ...(await database()),
      OUTBOUND_ALLOWED_HOSTS: new URL(push.origin).host,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.origin,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    cleanups.push(() => api.stop());
    const admin = await httpCaller(keys, () => api, 'pushed', 'admin', 'admin-1');
    const employee = await httpCaller(keys, () => api, 'pushed', 'employee', 'employee-1');
    const settings = await admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      notify_on_assignment: true,
    });
    expect(settings.statusCode, settings.body).toBe(200);
    const role = await newRole(admin);
    const event = await newEvent(admin);
    const shift = await newShift(admin, event, { roleId: role, capacities: [1] });
    await qualify(admin, employee, role);
    const browser = push.subscribe();
    const subscribed = await employee.request('POST', '/api/v1/push-subscriptions', browser.body);
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    // The assignment tells the employee: a notification and its push delivery job.
    await created(admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
      user_id: employee.userId,
    });
    await until(() => push.received.length > 0, 50);

    let job: ReceivedSpan | undefined;
    await until(() => {
      job = otlp.spans().find((s) => s.name === 'job push' && s.parentSpanId !== undefined);
      return (
        job !== undefined &&
        otlp.spans().some((s) => s.parentSpanId === job?.spanId && s.kind === 3 && s.name === 'POST')
      );
    }, 50);
    const trace = otlp.spans().filter((s) => s.traceId === job?.traceId);
    const server = trace.find((s) => s.kind === 2 && s.parentSpanId === undefined);
    expect(server?.name).toBe('POST /api/v1/shifts/:shift_id/slots/:slot_id/assign');
    expect(job?.attributes).toMatchObject({ 'scheduler.job.kind': 'push', 'scheduler.job.outcome': 'done' });
    // The push service's POST, inside the job: its origin only (the endpoint's path names
    // the browser's subscription).
    const post = trace.find((s) => s.parentSpanId === job?.spanId && s.kind === 3 && s.name === 'POST');
    expect(post?.attributes['url.full']).toBe(push.origin);
    for (const span of otlp.spans())
      expect(text(span)).not.toContain(new URL(browser.body.endpoint).pathname);
    expect(otlp.refused()).toEqual([]);
  });

  it('reach the receiver from the sources as `npm run dev` runs them', async () => {
    const keys = await createTestKeys();
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const api = await startApi(
      keys,
      { ...(await database()), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.origin, OTEL_BSP_SCHEDULE_DELAY: '200' },
      ENTRIES.dev,
    );
    cleanups.push(() => api.stop());
    const admin = await httpCaller(keys, () => api, 'dev', 'admin', 'admin-1');
    const list = await admin.request('GET', '/api/v1/events');
    expect(list.statusCode, list.body).toBe(200);
    const server = () => otlp.spans().find((s) => s.kind === 2 && s.name === 'GET /api/v1/events');
    await until(() => server() !== undefined, 50);
    const trace = () => otlp.spans().filter((s) => s.traceId === server()?.traceId);
    await until(() => trace().some((s) => s.attributes['http.route'] === '/api/v1/events'), 50);
    if (onPostgres) {
      // The request's statements, through the pg driver the hook wrapped (tsx loads it too).
      await until(() => trace().some((s) => s.kind === 3 && s.attributes['db.query.text'] !== undefined), 50);
    }
    expect(otlp.refused()).toEqual([]);
  });

  it('wraps only the modules the instrumentations patch', async () => {
    const keys = await createTestKeys();
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const log = moduleLog();
    const api = await startApi(keys, {
      ...(await database()),
      ...log.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.origin,
    });
    cleanups.push(() => api.stop());
    const admin = await httpCaller(keys, () => api, 'wrapped', 'admin', 'admin-1');
    await newEvent(admin);
    expect(await api.stop()).toBe(0);
    // node:http and node:https (src/webhooks/sender.ts, src/push/sender.ts) and pg
    // (src/db/database.ts) are imported by the server and patched: wrapped…
    const wrapped = log.wrapped();
    expect(wrapped).toEqual(expect.arrayContaining(['node:http', 'node:https']));
    expect(wrapped.some((url) => url.includes('/node_modules/pg/'))).toBe(true);
    // …and nothing else, though the server imports far more (fastify, kysely, pino, its own).
    const patched = /^node:https?$|\/node_modules\/pg(-pool)?\//;
    expect(wrapped.filter((url) => !patched.test(url))).toEqual([]);
    const modules = log.modules();
    expect(modules.some((url) => url.includes('/node_modules/fastify/'))).toBe(true);
    expect(modules.some((url) => url.includes('/node_modules/kysely/'))).toBe(true);
  });
});

describe('without the OTEL_* settings', () => {
  it('loads no OpenTelemetry SDK module and sends nothing', async () => {
    const keys = await createTestKeys();
    const log = moduleLog();
    const api = await startApi(keys, { ...(await database()), ...log.env });
    cleanups.push(() => api.stop());
    const admin = await httpCaller(keys, () => api, 'untraced', 'admin', 'admin-1');
    await newEvent(admin);
    expect(await api.stop()).toBe(0);
    const modules = log.modules();
    expect(modules.some((url) => url.includes('/main.mjs'))).toBe(true);
    expect(
      modules.filter((url) =>
        /@opentelemetry\/(sdk|exporter|instrumentation)|@fastify\/otel|import-in-the-middle/.test(url),
      ),
    ).toEqual([]);
  });
});
