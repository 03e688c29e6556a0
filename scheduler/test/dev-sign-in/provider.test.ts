import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { DEV_AUDIENCE, type DevIssuer, openDevIssuer } from '../../src/auth/dev-issuer.ts';
import { claimToUuid } from '../../src/auth/identity.ts';
import { DEV_APP_CLIENT_ID } from '../../src/dev-sign-in/provider.ts';
import type { App } from '../../src/http/types.ts';
import { FORBIDDEN_BODY } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * The development OpenID provider at /dev-issuer, driven over real HTTP as the staff app
 * (oidc-client-ts) drives it: discovery, authorization code with PKCE through the sign-in
 * page, the token endpoint, refresh, end session; and the tokens at the API.
 */
const run = promisify(execFile);
const schedulerDir = path.resolve(import.meta.dirname, '../..');

let db: TestDatabase;
let app: App;
let issuer: DevIssuer;
let dataDir: string;
let port: number;
let base: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'dev-provider-'));
  issuer = await openDevIssuer(dataDir, { create: true });
  db = await openTestDatabase();
  app = await buildApp({ db: db.db, verifier: issuer.verifier, devIssuer: issuer });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await app?.close();
  await db?.dispose();
});

/** The cookies of one browser. */
class Browser {
  private readonly cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    }
    const response = await fetch(new URL(url, base), { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const [name = '', value = ''] = pair.trim().split(/=(.*)/s);
      const expired = attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

function authorizeUrl(params: Record<string, string>): string {
  const url = new URL(`${base}/dev-issuer/auth`);
  for (const [name, value] of Object.entries({
    client_id: DEV_APP_CLIENT_ID,
    response_type: 'code',
    redirect_uri: `${base}/app/callback`,
    scope: 'openid profile email offline_access',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    code_challenge_method: 'S256',
    ...params,
  })) {
    url.searchParams.set(name, value);
  }
  return url.href;
}

/** Authorize → sign-in page (when there is no session yet) → pick `subject` → the code. */
async function signIn(browser: Browser, challenge: string, subject = 'demo-employee-1') {
  let response = await browser.fetch(authorizeUrl({ code_challenge: challenge }));
  let pages = 0;
  for (;;) {
    expect([302, 303]).toContain(response.status);
    const location = new URL(response.headers.get('location') ?? '', base);
    if (location.pathname === '/app/callback') return location;
    if (location.pathname.startsWith('/dev-issuer/interaction/')) {
      pages += 1;
      const page = await browser.fetch(location.href);
      expect(page.status).toBe(200);
      response = await browser.fetch(location.href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ subject }),
      });
    } else {
      response = await browser.fetch(location.href);
    }
    if (pages > 1) throw new Error('asked to sign in twice');
  }
}

async function token(params: Record<string, string>) {
  const response = await fetch(`${base}/dev-issuer/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: DEV_APP_CLIENT_ID, ...params }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function me(accessToken: string) {
  const response = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A request with a Host header of the test's choosing (fetch will not send one). */
function rawGet(pathname: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: pathname, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const maria = () => ({
  userId: claimToUuid(issuer.issuer, 'demo-employee-1'),
  tenantId: claimToUuid(issuer.issuer, 'demo'),
});

describe('development OpenID provider', () => {
  it('serves discovery with the URL it is reached at as issuer', async () => {
    const response = await fetch(`${base}/dev-issuer/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: `${base}/dev-issuer`,
      authorization_endpoint: `${base}/dev-issuer/auth`,
      token_endpoint: `${base}/dev-issuer/token`,
      jwks_uri: `${base}/dev-issuer/jwks`,
      end_session_endpoint: `${base}/dev-issuer/session/end`,
      revocation_endpoint: `${base}/dev-issuer/token/revocation`,
      code_challenge_methods_supported: ['S256'],
      id_token_signing_alg_values_supported: expect.arrayContaining(['EdDSA']),
    });
    const jwks = (await (await fetch(`${base}/dev-issuer/jwks`)).json()) as {
      keys: Record<string, unknown>[];
    };
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' })]);
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('serves the same provider at localhost, with that origin as issuer', async () => {
    const response = await rawGet('/dev-issuer/.well-known/openid-configuration', `localhost:${port}`);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({
      issuer: `http://localhost:${port}/dev-issuer`,
      token_endpoint: `http://localhost:${port}/dev-issuer/token`,
    });
  });

  it('signs Maria in with code and PKCE; her access token reaches the API as her', async () => {
    const browser = new Browser();
    const { verifier, challenge } = pkce();
    const authorize = await browser.fetch(authorizeUrl({ code_challenge: challenge, state: 'state-1' }));
    expect(authorize.status).toBe(303);
    const interaction = new URL(authorize.headers.get('location') ?? '', base);
    expect(interaction.pathname).toMatch(/^\/dev-issuer\/interaction\/[\w-]+$/);

    const page = await browser.fetch(interaction.href);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
    const html = await page.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toMatch(/<h1>Sign in to Staff app<\/h1>/);
    expect(html).not.toMatch(/<script|https?:\/\//);
    const buttons = [
      ...html.matchAll(/<button type="submit" name="subject" value="([^"]+)">(.*?)<\/button>/g),
    ];
    // The accessible name of each button: its text.
    expect(buttons.map(([, subject, label]) => [subject, label?.replace(/<[^>]+>/g, '')])).toEqual([
      ['demo-admin', 'Alex Admin, admin'],
      ['demo-employee-1', 'Maria Weber, employee'],
      ['demo-employee-2', 'Sam Okafor, employee'],
      ['demo-employee-3', 'Lena Fischer, employee'],
    ]);

    const nobody = await browser.fetch(interaction.href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ subject: 'demo-root' }),
    });
    expect(nobody.status).toBe(422);
    expect(await nobody.text()).toContain(
      '<p class="problem" role="alert">Pick one of the people listed.</p>',
    );

    const picked = await browser.fetch(interaction.href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ subject: 'demo-employee-1' }),
    });
    expect(picked.status).toBe(303);
    // No consent screen: the resumed authorization goes straight back to the app.
    const resumed = await browser.fetch(picked.headers.get('location') ?? '');
    expect(resumed.status).toBe(303);
    const callback = new URL(resumed.headers.get('location') ?? '');
    expect(callback.origin + callback.pathname).toBe(`${base}/app/callback`);
    expect(callback.searchParams.get('state')).toBe('state-1');
    expect(callback.searchParams.get('iss')).toBe(`${base}/dev-issuer`);
    const code = callback.searchParams.get('code') ?? '';

    const exchanged = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: `${base}/app/callback`,
      code_verifier: verifier,
    });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const accessToken = String(exchanged.body.access_token);
    expect(decodeProtectedHeader(accessToken).alg).toBe('EdDSA');
    expect(decodeJwt(accessToken)).toMatchObject({
      iss: `${base}/dev-issuer`,
      aud: DEV_AUDIENCE,
      sub: 'demo-employee-1',
      tenant_id: 'demo',
      role: 'employee',
      name: 'Maria Weber',
      email: 'maria.weber@demo.invalid',
    });
    expect(decodeJwt(String(exchanged.body.id_token))).toMatchObject({
      iss: `${base}/dev-issuer`,
      aud: DEV_APP_CLIENT_ID,
      sub: 'demo-employee-1',
      name: 'Maria Weber',
      email: 'maria.weber@demo.invalid',
    });

    const first = await me(accessToken);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      id: maria().userId,
      tenant_id: maria().tenantId,
      role: 'employee',
      display_name: 'Maria Weber',
      email: 'maria.weber@demo.invalid',
    });

    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: String(exchanged.body.refresh_token),
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(refreshed.body.access_token).not.toBe(accessToken);
    expect((await me(String(refreshed.body.access_token))).body).toMatchObject({ id: maria().userId });

    // The code is spent: replaying it is refused, and revokes what it gave (RFC 6749 §4.1.2).
    const replayed = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: `${base}/app/callback`,
      code_verifier: verifier,
    });
    expect(replayed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const afterReplay = await token({
      grant_type: 'refresh_token',
      refresh_token: String(refreshed.body.refresh_token),
    });
    expect(afterReplay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    // Signing out ends at the app's start page.
    const endSession = await browser.fetch(
      `${base}/dev-issuer/session/end?${new URLSearchParams({
        id_token_hint: String(refreshed.body.id_token ?? exchanged.body.id_token),
        post_logout_redirect_uri: `${base}/app/`,
      })}`,
    );
    expect(endSession.status).toBe(200);
    const confirm = await endSession.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(confirm)?.[1] ?? '';
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(confirm)?.[1] ?? '';
    const signedOut = await browser.fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf, logout: 'yes' }),
    });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe(`${base}/app/`);
  });

  it('gives the token command and the browser sign-in the same user', async () => {
    const browser = new Browser();
    const { verifier, challenge } = pkce();
    const code = (await signIn(browser, challenge)).searchParams.get('code') ?? '';
    const exchanged = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: `${base}/app/callback`,
      code_verifier: verifier,
    });
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/cli/token.ts', '--role', 'employee', '--user', 'demo-employee-1'],
      { cwd: schedulerDir, env: { ...process.env, DATA_DIR: dataDir } },
    );
    const fromCli = await me(stdout.trim());
    const fromBrowser = await me(String(exchanged.body.access_token));
    expect(fromCli.status).toBe(200);
    expect(fromCli.body).toEqual(fromBrowser.body);
    expect(fromCli.body).toMatchObject({ id: maria().userId, tenant_id: maria().tenantId });
    // The command fills in the demo person's name and email.
    expect(decodeJwt(stdout.trim())).toMatchObject({
      name: 'Maria Weber',
      email: 'maria.weber@demo.invalid',
    });
  });

  it('refuses a wrong code verifier', async () => {
    const browser = new Browser();
    const { challenge } = pkce();
    const code = (await signIn(browser, challenge)).searchParams.get('code') ?? '';
    const exchanged = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: `${base}/app/callback`,
      code_verifier: pkce().verifier,
    });
    expect(exchanged).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'grant request is invalid' },
    });
  });

  it('refuses an authorization request without PKCE', async () => {
    const response = await new Browser().fetch(authorizeUrl({ code_challenge_method: '' }));
    // Without a valid redirect target the error goes back to the app.
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location') ?? '');
    expect(location.searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses redirect URIs that are not registered for the origin', async () => {
    for (const redirect of [
      `${base}/elsewhere`,
      'http://evil.example/app/callback',
      // Another loopback origin's callback is that origin's, not this one's.
      `http://localhost:${port}/app/callback`,
    ]) {
      const response = await new Browser().fetch(
        authorizeUrl({ code_challenge: pkce().challenge, redirect_uri: redirect }),
      );
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(await response.text()).toContain('<dt>error</dt><dd>invalid_redirect_uri</dd>');
    }
  });

  it('answers no one who reaches it by a name that is not loopback, or from another machine', async () => {
    for (const host of ['scheduler.example.com', `192.168.1.20:${port}`, `127.0.0.1.nip.io:${port}`]) {
      const response = await rawGet('/dev-issuer/.well-known/openid-configuration', host);
      expect(response.status).toBe(403);
      expect(JSON.parse(response.body)).toEqual(FORBIDDEN_BODY);
    }
    for (const url of ['/dev-issuer/.well-known/openid-configuration', '/dev-issuer/interaction/abc']) {
      const response = await app.inject({
        method: 'GET',
        url,
        remoteAddress: '192.0.2.7',
        headers: { host: '127.0.0.1' },
      });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
  });

  it('says a sign-in without its cookie has expired', async () => {
    const response = await fetch(`${base}/dev-issuer/interaction/unknown-uid`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('<h1>This sign-in has expired</h1>');
  });

  it('is not mounted without the development issuer', async () => {
    const plain = await buildApp({ db: db.db, verifier: issuer.verifier });
    const response = await plain.inject({
      method: 'GET',
      url: '/dev-issuer/.well-known/openid-configuration',
    });
    await plain.close();
    expect(response.statusCode).toBe(404);
  });
});
