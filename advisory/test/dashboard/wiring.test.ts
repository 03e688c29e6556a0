import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApplianceStatus } from '../../src/appliance/status.ts';
import { buildDashboard, type DashboardSource } from '../../src/dashboard/server.ts';
import { type Demo, demoAppliance, demoSource, sampleManifest } from '../support/dashboard.ts';

let demo: Demo;
beforeAll(async () => {
  demo = await demoAppliance();
});
afterAll(async () => demo?.appliance.stop());

const credentials = { user: 'operator', password: 'correct horse battery' };
const auth = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;

async function app(source: DashboardSource, withCredentials = false) {
  const built = await buildDashboard({
    source,
    credentials: withCredentials ? credentials : null,
    version: '9.9.9-test',
    now: () => new Date('2026-11-26T12:00:00Z'),
  });
  await built.ready();
  return built;
}

const get = (built: Awaited<ReturnType<typeof app>>, url: string, headers: Record<string, string> = {}) =>
  built.inject({ method: 'GET', url, headers: { host: '127.0.0.1', ...headers } });

describe('the dashboard wiring', () => {
  it('serves pages, the stylesheet, the icon and /health with their types and caching', async () => {
    const built = await app(demoSource(demo));
    const page = await get(built, '/ordering');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    // The navigation marks the page shown, and only it.
    expect(page.body.match(/aria-current="page"/g)).toHaveLength(1);
    expect(page.body).toContain('<a href="/ordering" aria-current="page">');
    expect(page.body).toContain(`advisory appliance 9.9.9-test · read-only · feed ${sampleManifest.version}`);
    const css = /href="(\/[^"]+\.css)"/.exec(page.body)?.[1] as string;
    const style = await get(built, css);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(style.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(style.body.length).toBeGreaterThan(100);
    const icon = await get(built, '/favicon.svg');
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.headers['cache-control']).toBe('public, max-age=86400');
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect((await get(built, '/health')).headers['cache-control']).toBe('no-store');
    const missing = await get(built, '/nothing-here');
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('<h1>Not found</h1><p>There is no such page.</p>');
    expect(missing.body).toContain('<title>Not found · Advisory appliance</title>');
    expect(missing.body).not.toContain('aria-current');
    expect(built.dashboardRoutes.every((r) => !r.url.includes('HEAD'))).toBe(true);
    await built.close();
  });

  it('works without a decision log open (a read-only check): empty log, no history, 503 for the export', async () => {
    const built = await app({ ...demoSource(demo), decisions: null }, true);
    const log = await get(built, '/log', { authorization: auth });
    expect(log.statusCode).toBe(200);
    expect(log.body).toContain('HASH CHAIN INTACT');
    expect(log.body).toContain('0 entries');
    expect(log.body).not.toContain('<td data-label="#"');
    const asset = await get(built, '/assets/pve-node-1', { authorization: auth });
    expect(asset.statusCode).toBe(200);
    const exported = await get(built, '/decisions.json', { authorization: auth });
    expect(exported.statusCode).toBe(503);
    expect(exported.json()).toEqual({
      error: { code: 'decision_log_unavailable', message: 'the decision log is not open in this process' },
    });
    await built.close();
  });

  it('exports the log with no caching, as an attachment', async () => {
    const built = await app(demoSource(demo), true);
    const exported = await get(built, '/decisions.json', { authorization: auth });
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['cache-control']).toBe('no-store');
    expect(exported.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(exported.headers['content-disposition']).toBe('attachment; filename="decisions.json"');
    expect(exported.json()).toMatchObject({
      format: 'advisory-decision-log/1',
      exported_at: '2026-11-26T12:00:00.000Z',
    });
    await built.close();
  });

  it('answers an error in a page with its own page, headers and no details', async () => {
    const broken = {
      ...demoSource(demo),
      get status(): ApplianceStatus {
        throw new Error('secret detail of the failure');
      },
    } as DashboardSource;
    const built = await app(broken);
    const failed = await get(built, '/');
    expect(failed.statusCode).toBe(500);
    expect(failed.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(failed.headers['x-frame-options']).toBe('DENY');
    expect(failed.body).toContain(
      '<h1>Internal error</h1><p>The page could not be made; the log says why.</p>',
    );
    expect(failed.body).not.toContain('secret detail');
    await built.close();
  });

  it('says in /health which feed serves only while one does', async () => {
    const noFeed = { ...demoSource(demo), status: { ...demo.appliance.status, feed: null, problem: null } };
    const built = await app(noFeed);
    const health = await get(built, '/health');
    expect(health.statusCode).toBe(503);
    expect(health.json()).toEqual({
      status: 'no verified feed',
      problem: 'no feed has been accepted yet',
      problems: [{ code: 'no-feed', message: 'no feed has been accepted yet' }],
    });
    const page = await get(built, '/');
    expect(page.body).toContain('· feed none</footer>');
    await built.close();
  });
});
