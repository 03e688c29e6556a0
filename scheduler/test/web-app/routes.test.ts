import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentSecurityPolicy, type WebAppOptions } from '../../src/web-app/routes.ts';
import { createTestContext, type TestContext } from '../support/context.ts';

/** A built app as Vite writes one: the page, a hashed script, the worker. */
function builtApp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'web-dist-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Shifts</title>');
  writeFileSync(path.join(dir, 'assets', 'app-AbC123.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'sw.js'), 'self.x = 1');
  return dir;
}

const strict =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

async function serving(options: Partial<WebAppOptions> = {}): Promise<TestContext> {
  ctx = await createTestContext({
    webApp: {
      dir: builtApp(),
      issuer: undefined,
      clientId: undefined,
      scope: 'openid',
      publicBaseUrl: undefined,
      ...options,
    },
  });
  return ctx;
}

describe('the staff app at /app/', () => {
  it('serves the page under a strict policy, to be checked on every load', async () => {
    const app = await serving();
    const page = await app.request('GET', '/app/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toBe('<!doctype html><title>Shifts</title>');
    expect(page.headers['content-security-policy']).toBe(strict);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect((await app.request('GET', '/app')).headers.location).toBe('/app/');
  });

  it('answers the app’s own routes with the page, and a missing file with 404', async () => {
    const app = await serving();
    for (const route of [
      '/app/open',
      '/app/shifts/5f0c2c1e8d0b4e0f9a2b3c4d5e6f7a8b',
      '/app/callback?code=x&state=y',
    ]) {
      const response = await app.request('GET', route);
      expect(response.statusCode, route).toBe(200);
      expect(response.body, route).toContain('<title>Shifts</title>');
    }
    for (const missing of ['/app/assets/app-Old999.js', '/app/robots.txt', '/app/..%2fpackage.json']) {
      const response = await app.request('GET', missing);
      expect(response.statusCode, missing).toBe(404);
      expect(response.body, missing).toBe('Not found\n');
    }
  });

  it('never serves a file outside the build, however the path is written', async () => {
    const app = await serving();
    for (const sneaky of [
      '/app/../package.json',
      '/app/%2e%2e/%2e%2e/etc/passwd',
      '/app/assets/..%2f..%2fetc%2fpasswd',
    ]) {
      const response = await app.request('GET', sneaky);
      expect([200, 404], sneaky).toContain(response.statusCode);
      expect(response.body, sneaky).not.toContain('root:');
      expect(response.body, sneaky).not.toContain('"workspaces"');
    }
  });

  it('keeps hashed files for a year and the worker for no time', async () => {
    const app = await serving();
    const script = await app.request('GET', '/app/assets/app-AbC123.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers['content-type']).toMatch(/^text\/javascript|^application\/javascript/);
    const worker = await app.request('GET', '/app/sw.js');
    expect(worker.headers['cache-control']).toBe('no-cache');
    expect(worker.headers['content-security-policy']).toBe(strict);
  });

  it('tells the app to sign in at the development issuer of its own origin by default', async () => {
    const app = await serving();
    const response = await app.request('GET', '/app/config.json');
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json()).toEqual({
      issuer: 'http://localhost/dev-issuer',
      client_id: 'scheduler-app',
      scope: 'openid',
    });
  });

  it('names a configured provider and lets the app call it, and no other origin', async () => {
    const app = await serving({
      issuer: 'https://id.example.org/realms/staff',
      clientId: 'shifts',
      scope: 'openid email',
    });
    const response = await app.request('GET', '/app/config.json');
    expect(response.json()).toEqual({
      issuer: 'https://id.example.org/realms/staff',
      client_id: 'shifts',
      scope: 'openid email',
    });
    expect(response.headers['content-security-policy']).toBe(
      strict.replace("connect-src 'self'", "connect-src 'self' https://id.example.org"),
    );
    expect(contentSecurityPolicy(undefined)).toBe(strict);
  });

  it('says sign-in is not set up when a provider is named without a client id', async () => {
    const app = await serving({ issuer: 'https://id.example.org' });
    expect((await app.request('GET', '/app/config.json')).json()).toMatchObject({ client_id: null });
  });

  it('says how to build the app when it is not built, and the API still answers', async () => {
    ctx = await createTestContext({
      webApp: {
        dir: undefined,
        issuer: undefined,
        clientId: undefined,
        scope: 'openid',
        publicBaseUrl: undefined,
      },
    });
    const response = await ctx.request('GET', '/app/');
    expect(response.statusCode).toBe(503);
    expect(response.body).toBe(
      'The staff app is not built: run `npm run build -w web`, or set WEB_APP_DIR.\n',
    );
    expect((await ctx.request('GET', '/health')).statusCode).toBe(200);
  });
});
