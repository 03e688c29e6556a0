import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadApplianceConfig } from '../../src/appliance/config.ts';
import { runAdvisoryCli } from '../../src/cli/advisory/main.ts';
import { FailedAttempts } from '../../src/dashboard/auth.ts';
import type { DashboardSource } from '../../src/dashboard/server.ts';
import { localTime } from '../../src/dashboard/views/time.ts';
import {
  afterSamplePublished,
  type Demo,
  demoAppliance,
  demoSource,
  hostileSource,
  sampleManifest,
  serve,
} from '../support/dashboard.ts';

const DAY = 86_400_000;

/** What every answer carries, errors included: what a browser enforces. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/**
 * The dashboard over HTTP (no browser): authentication, the decision log export, the
 * health probe, security headers, filters and escaping. The browser tests
 * (dashboard-browser.test.ts) look at the same pages in Chromium.
 */
let demo: Demo;
beforeAll(async () => {
  demo = await demoAppliance();
});
afterAll(async () => demo?.appliance.stop());

const credentials = { user: 'operator', password: 'correct horse battery' };
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function withServer<T>(
  source: DashboardSource,
  options: Parameters<typeof serve>[1],
  test: (url: string) => Promise<T>,
) {
  const served = await serve(source, options);
  try {
    return await test(served.url);
  } finally {
    await served.close();
  }
}

describe('/decisions.json', () => {
  it('always asks for authentication; without credentials configured it says which variables to set', async () => {
    await withServer(demoSource(demo), {}, async (url) => {
      const response = await fetch(`${url}/decisions.json`);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        'Basic realm="advisory appliance", charset="UTF-8"',
      );
      expect(await response.json()).toEqual({
        error: {
          code: 'authentication_required',
          message:
            'the decision log export needs authentication: set ADVISORY_DASHBOARD_USER and ADVISORY_DASHBOARD_PASSWORD and restart the appliance',
        },
      });
      // The pages themselves are open while no credentials are configured.
      expect((await fetch(`${url}/`)).status).toBe(200);
    });
  });

  it('answers 401 to wrong credentials and the export to the right ones; the export verifies offline', async () => {
    await withServer(demoSource(demo), { credentials }, async (url) => {
      for (const header of [
        undefined,
        basic('operator', 'wrong'),
        basic('root', credentials.password),
        'Bearer x',
        'Basic !!!',
      ]) {
        const response = await fetch(
          `${url}/decisions.json`,
          header ? { headers: { authorization: header } } : {},
        );
        expect(response.status, header).toBe(401);
      }
      const response = await fetch(`${url}/decisions.json`, {
        headers: { authorization: basic(credentials.user, credentials.password) },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-disposition')).toBe('attachment; filename="decisions.json"');
      const exported = await response.json();
      expect(exported).toMatchObject({
        format: 'advisory-decision-log/1',
        verification: { intact: true, entries: 3 },
        entries: [{ kind: 'feed-accepted' }, { kind: 'initial-evaluation' }, { kind: 'verdict-changed' }],
      });
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'export-')), 'decisions.json');
      writeFileSync(file, JSON.stringify(exported));
      const out: string[] = [];
      const code = await runAdvisoryCli(
        ['log', 'verify', '--export', file, '--appliance-key', path.join(demo.stateDir, 'appliance.pub')],
        { out: (l) => out.push(l), err: (l) => out.push(l) },
        {},
      );
      expect(code).toBe(0);
      expect(out[0]).toMatch(/^HASH CHAIN INTACT: 3 entries/);
    });
  });
});

describe('authentication', () => {
  it('protects every page but /health once credentials are set', async () => {
    await withServer(demoSource(demo), { credentials }, async (url) => {
      for (const page of [
        '/',
        '/ordering',
        '/cves',
        '/reminders',
        '/feed',
        '/log',
        '/assets/cloud',
        '/nowhere',
      ]) {
        expect((await fetch(`${url}${page}`)).status, page).toBe(401);
        const ok = await fetch(`${url}${page}`, {
          headers: { authorization: basic(credentials.user, credentials.password) },
        });
        expect(ok.status, page).toBe(page === '/nowhere' ? 404 : 200);
      }
      expect((await fetch(`${url}/health`)).status).toBe(200);
    });
  });

  it('pauses a client after 10 failed attempts (429 with Retry-After), others unaffected', async () => {
    const attempts = new FailedAttempts(10, 600_000);
    // The limiter itself, with its clock: the 10th failure pauses, the window slides.
    const t0 = 1_000_000;
    for (let i = 0; i < 9; i++) attempts.fail('10.0.0.1', t0 + i);
    expect(attempts.retryAfter('10.0.0.1', t0 + 10)).toBe(0);
    attempts.fail('10.0.0.1', t0 + 10);
    expect(attempts.retryAfter('10.0.0.1', t0 + 11)).toBe(600);
    expect(attempts.retryAfter('10.0.0.2', t0 + 11)).toBe(0);
    expect(attempts.retryAfter('10.0.0.1', t0 + 600_001)).toBe(0);
    // Memory stays bounded under many addresses.
    const small = new FailedAttempts(10, 600_000, 100);
    for (let i = 0; i < 10_000; i++) small.fail(`10.1.${i >> 8}.${i & 255}`, t0);
    expect(small.size).toBe(100);

    await withServer(demoSource(demo), { credentials }, async (url) => {
      for (let i = 0; i < 10; i++) {
        expect(
          (await fetch(`${url}/`, { headers: { authorization: basic('operator', `guess-${i}`) } })).status,
        ).toBe(401);
      }
      const paused = await fetch(`${url}/`, {
        headers: { authorization: basic(credentials.user, credentials.password) },
      });
      expect(paused.status).toBe(429);
      expect(Number(paused.headers.get('retry-after'))).toBeGreaterThan(500);
    });
  });

  it('counts failed logins per client behind a trusted proxy (ADVISORY_TRUST_PROXY), per connection otherwise', async () => {
    const guess = (forwardedFor: string, password = 'wrong-guess-123') => ({
      headers: { authorization: basic('operator', password), 'x-forwarded-for': forwardedFor },
    });
    // Behind a proxy on this machine: one client's guesses pause that client alone.
    for (const trustProxy of [['127.0.0.1'], ['127.0.0.0/8', '::1']]) {
      await withServer(demoSource(demo), { credentials, trustProxy }, async (url) => {
        for (let i = 0; i < 10; i++) expect((await fetch(`${url}/`, guess('203.0.113.7'))).status).toBe(401);
        expect((await fetch(`${url}/`, guess('203.0.113.7', credentials.password))).status).toBe(429);
        // The paused client forges addresses of its own in front of what the proxy appends:
        // only the hop the proxy wrote counts, and the pause holds.
        for (const forged of ['198.51.100.1, 203.0.113.7', '10.0.0.1, 127.0.0.1, 203.0.113.7']) {
          const again = await fetch(`${url}/`, guess(forged, credentials.password));
          expect(again.status, `${String(trustProxy)} ${forged}`).toBe(429);
        }
        const other = await fetch(`${url}/`, guess('198.51.100.9', credentials.password));
        expect(other.status, String(trustProxy)).toBe(200);
      });
    }
    // Not trusted: the header is the client's own claim and changes nothing, with no proxy
    // configured, or when the client is not the proxy configured.
    for (const trustProxy of [false, ['192.0.2.10', '10.0.0.0/8']] as const) {
      await withServer(
        demoSource(demo),
        { credentials, trustProxy: trustProxy && [...trustProxy] },
        async (url) => {
          for (let i = 0; i < 10; i++)
            expect((await fetch(`${url}/`, guess(`203.0.113.${i}`))).status).toBe(401);
          expect((await fetch(`${url}/`, guess('198.51.100.9', credentials.password))).status).toBe(429);
        },
      );
    }
  });

  it('logs each failed login with the client address and user name, never the password', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const entries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    await withServer(demoSource(demo), { credentials, log }, async (url) => {
      const status = async (authorization?: string, forwardedFor?: string) =>
        (
          await fetch(`${url}/`, {
            headers: {
              ...(authorization ? { authorization } : {}),
              ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
            },
          })
        ).status;
      expect(await status(basic('mallory', 'hunter2-secret-guess'))).toBe(401);
      // No credentials at all (a browser's first request), and the right ones: not failures.
      expect(await status()).toBe(401);
      expect(await status(basic(credentials.user, credentials.password))).toBe(200);
      // A header that is no user:password pair: the user is unknown, still logged.
      expect(await status('Basic !!!')).toBe(401);
      expect(entries()).toEqual([
        expect.objectContaining({
          level: 40,
          client: '127.0.0.1',
          user: 'mallory',
          msg: 'dashboard login failed',
        }),
        expect.objectContaining({
          level: 40,
          client: '127.0.0.1',
          user: null,
          msg: 'dashboard login failed',
        }),
      ]);
      // The 10th failure since the good login starts the pause: said once, and the 429s after
      // it are not logged each.
      for (let i = 0; i < 9; i++) expect(await status(basic('root', `guess-${i}`))).toBe(401);
      for (let i = 0; i < 3; i++) expect(await status(basic('root', 'guess'))).toBe(429);
      const paused = entries().filter((e) => e.msg === 'dashboard login paused for this client');
      expect(paused).toEqual([
        expect.objectContaining({ level: 40, client: '127.0.0.1', user: 'root', retryAfter: 600 }),
      ]);
      expect(entries().filter((e) => e.msg === 'dashboard login failed')).toHaveLength(11);
    });
    expect(lines.join('')).not.toMatch(/hunter2|guess-|correct horse/);
    // Behind a listed proxy the client is the address the proxy wrote.
    lines.length = 0;
    await withServer(demoSource(demo), { credentials, log, trustProxy: ['127.0.0.1'] }, async (url) => {
      await fetch(`${url}/`, {
        headers: { authorization: basic('eve', 'a-wrong-password'), 'x-forwarded-for': '203.0.113.5' },
      });
    });
    expect(entries()).toEqual([expect.objectContaining({ client: '203.0.113.5', user: 'eve' })]);
  });

  it('pauses a client that connects directly and rotates X-Forwarded-For, as ADVISORY_TRUST_PROXY=1 let it not', async () => {
    // The setting as an operator writes it: a hop count is refused at start now; before,
    // it made the first hop (whoever connects) trusted, so the header chose the address.
    expect(() =>
      loadApplianceConfig({
        ADVISORY_FEED_URL: '/srv/feed',
        ADVISORY_PUBLIC_KEYS: 'feed.pub',
        ADVISORY_INVENTORY: 'inv.yaml',
        ADVISORY_TRUST_PROXY: '1',
      }),
    ).toThrow(/^ADVISORY_TRUST_PROXY: a hop count/);
    // The proxy named by address, the client beside it: 30 guesses, paused after 10.
    await withServer(demoSource(demo), { credentials, trustProxy: ['192.0.2.10'] }, async (url) => {
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const answer = await fetch(`${url}/`, {
          headers: { authorization: basic('operator', `guess-${i}`), 'x-forwarded-for': `198.51.100.${i}` },
        });
        statuses.push(answer.status);
      }
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses.slice(10)).toEqual(Array(20).fill(429));
    });
  });
});

describe('pages and probes', () => {
  it('/health: 200 while a verified feed is in use, 503 otherwise, and nothing about the inventory', async () => {
    const at = (iso: string) => ({ now: () => new Date(iso) });
    await withServer(demoSource(demo), at(afterSamplePublished(2 * DAY)), async (url) => {
      const response = await fetch(`${url}/health`);
      expect(response.status).toBe(200);
      const body = await response.json();
      expect(body).toEqual({
        status: 'ok',
        feed: {
          version: sampleManifest.version,
          // The demo reads a feed directory: `live` (not the cache), and from a directory.
          from: 'live',
          origin: 'directory',
          published_at: sampleManifest.publishedAt,
          expires_at: sampleManifest.expiresAt,
        },
        problems: [],
      });
    });
    const noFeed: DashboardSource = {
      ...demoSource(demo),
      status: {
        ...demo.appliance.status,
        feed: null,
        problem: { at: 'now', outcome: 'unreachable', message: 'connection refused' },
      },
    };
    await withServer(noFeed, {}, async (url) => {
      const response = await fetch(`${url}/health`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({
        status: 'no verified feed',
        problem: 'connection refused',
        problems: [{ code: 'no-feed', message: 'connection refused' }],
      });
    });
  });

  it('/health: degraded while a refused live feed, a stale feed or a failed refresh is behind it; down once expired', async () => {
    const at = (iso: string) => ({ now: () => new Date(iso) });
    const refused: DashboardSource = {
      ...demoSource(demo),
      status: {
        ...demo.appliance.status,
        lastPull: {
          at: 'then',
          outcome: 'rejected',
          message: 'the feed version 2026.11.20 is older than 2026.11.24',
        },
        lastRefreshError: { at: '2026-11-25T00:00:00.000Z', message: 'ENOSPC: write failed' },
      },
    };
    await withServer(refused, at(afterSamplePublished(2 * DAY)), async (url) => {
      const response = await fetch(`${url}/health`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        status: 'degraded',
        problems: [
          {
            code: 'feed-refused',
            message:
              'the feed from the feed directory was refused: the feed version 2026.11.20 is older than 2026.11.24',
          },
          {
            code: 'refresh-failed',
            message: 'the refresh at 2026-11-25T00:00:00.000Z failed: ENOSPC: write failed',
          },
        ],
      });
      // A probe that reads only the status code asks strictly.
      expect((await fetch(`${url}/health?strict`)).status).toBe(503);
      // Every page says so.
      for (const page of ['/', '/ordering', '/cves', '/reminders', '/feed', '/log']) {
        const html = await (await fetch(`${url}${page}`)).text();
        expect(html, page).toContain('data-problem="refresh-failed"');
      }
    });
    // Stale: published more than 14 days (the default ADVISORY_FEED_MAX_AGE) before now.
    await withServer(demoSource(demo), at(afterSamplePublished(14 * DAY - 1000)), async (url) => {
      expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok' });
    });
    await withServer(demoSource(demo), at(afterSamplePublished(14 * DAY + 1000)), async (url) => {
      const response = await fetch(`${url}/health`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 'degraded', problems: [{ code: 'feed-stale' }] });
      // Degraded is still serving: the feed that serves, and no single `problem` as when down.
      expect(Object.keys(body)).toEqual(['status', 'feed', 'problems']);
      expect(await (await fetch(`${url}/`)).text()).toContain('data-problem="feed-stale"');
    });
    // Expiry is a time: the moment it passes, no refresh needed.
    await withServer(demoSource(demo), at(sampleManifest.expiresAt), async (url) => {
      const response = await fetch(`${url}/health`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { problem: string; problems: { message: string }[] };
      expect(body).toMatchObject({
        status: 'no verified feed',
        problems: [{ code: 'feed-expired' }],
      });
      // The feed still in the status is expired: not named as serving; the problem says why.
      expect(Object.keys(body)).toEqual(['status', 'problem', 'problems']);
      expect(body.problem).toBe(body.problems[0]?.message);
    });
  });

  it('says on every page, once the feed is gone, that the verdicts shown are the last ones and not current', async () => {
    const expired: DashboardSource = {
      ...demoSource(demo),
      status: {
        ...demo.appliance.status,
        feed: null,
        evaluatedAt: '2026-11-24T08:30:00.000Z',
        problem: {
          at: 'now',
          outcome: 'rejected',
          message: 'the feed in use expired at 2027-05-25T08:24:09Z and no fresher feed was accepted',
        },
      },
    };
    await withServer(expired, {}, async (url) => {
      for (const page of ['/', '/ordering', '/cves', '/reminders', '/feed']) {
        const html = await (await fetch(`${url}${page}`)).text();
        expect(html, page).toContain(
          `<strong>No verified feed is in use:</strong> the feed in use expired at 2027-05-25T08:24:09Z and no fresher feed was accepted. The verdicts shown are those of <time datetime="2026-11-24T08:30:00.000Z" title="2026-11-24T08:30:00.000Z">${localTime('2026-11-24T08:30:00.000Z')}</time>; they are not kept current until a verified feed is accepted.`,
        );
      }
    });
    const never: DashboardSource = {
      ...demoSource(demo),
      status: { ...demo.appliance.status, feed: null, evaluatedAt: null, evaluations: [], problem: null },
    };
    await withServer(never, {}, async (url) => {
      for (const page of ['/', '/ordering', '/cves', '/reminders', '/feed']) {
        const html = await (await fetch(`${url}${page}`)).text();
        expect(html, page).toContain(
          '<strong>No verified feed is in use:</strong> no feed has been accepted yet.</div>',
        );
      }
    });
  });

  it('says on every page when the inventory file as it stands could not be read', async () => {
    const broken: DashboardSource = {
      ...demoSource(demo),
      status: { ...demo.appliance.status, inventoryError: 'inventory.yaml line 3: bad indentation <here>' },
    };
    await withServer(broken, {}, async (url) => {
      for (const page of ['/', '/ordering', '/cves', '/reminders', '/feed']) {
        const html = await (await fetch(`${url}${page}`)).text();
        expect(html, page).toContain(
          '<strong>The inventory file could not be read:</strong> inventory.yaml line 3: bad indentation &lt;here&gt;.',
        );
        expect(html, page).toContain('The inventory read before keeps being used.');
      }
    });
    await withServer(demoSource(demo), {}, async (url) => {
      expect(await (await fetch(`${url}/`)).text()).not.toContain('inventory file could not be read');
    });
  });

  it('sends a strict CSP, no framing, no sniffing, no referrer, no cross-origin use, on every answer', async () => {
    await withServer(demoSource(demo), {}, async (url) => {
      for (const page of ['/', '/feed', '/health', '/decisions.json', '/nowhere']) {
        const response = await fetch(`${url}${page}`);
        for (const [name, value] of Object.entries(SECURITY_HEADERS))
          expect(response.headers.get(name), `${page} ${name}`).toBe(value);
      }
    });
  });

  it('filters assets by verdict, product and adapter on the server (no JavaScript needed)', async () => {
    await withServer(demoSource(demo), {}, async (url) => {
      const rows = async (query: string) => {
        const html = await (await fetch(`${url}/?${query}`)).text();
        return [...html.matchAll(/<td data-label="Asset"><a href="\/assets\/([^"]+)">/g)].map((m) =>
          decodeURIComponent(m[1] as string),
        );
      };
      expect(await rows('verdict=eol')).toEqual(['pve-node-1', 'pve-legacy', 'files-legacy', 'reporting-db']);
      expect(await rows('verdict=hold')).toEqual(['files']);
      expect(await rows('verdict=none')).toEqual(['web', 'badge-printer']);
      expect(await rows('product=redis')).toEqual(['cache']);
      expect(await rows('product=php&verdict=install')).toEqual(['cloud']);
      expect(await rows('source=inventory')).toHaveLength(11);
      expect(await rows('source=elsewhere')).toEqual([]);
    });
  });

  it('escapes everything that comes from the feed or the inventory', async () => {
    const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    const { source, evaluation } = hostileSource(demo, hostile, '"><script>alert(3)</script>');
    await withServer(source, {}, async (url) => {
      for (const page of ['/', '/cves', `/assets/${encodeURIComponent(evaluation.asset)}`]) {
        const html = await (await fetch(`${url}${page}`)).text();
        expect(html, page).not.toContain('<script>');
        expect(html, page).not.toContain('<img');
        expect(html, page).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
      }
    });
  });

  it('answers an unknown page or asset with 404 and a page, not an error', async () => {
    await withServer(demoSource(demo), {}, async (url) => {
      expect((await fetch(`${url}/assets/nobody`)).status).toBe(404);
      const response = await fetch(`${url}/nowhere`);
      expect(response.status).toBe(404);
      expect(await response.text()).toContain('There is no such page.');
      expect((await fetch(`${url}/assets/%E0%A4%A`)).status).toBeLessThan(500);
    });
  });

  it('finds an asset whose name is long once percent-encoded (beyond a router default of 100)', async () => {
    await withServer(demoSource(demo), {}, async (url) => {
      // 150 characters of the inventory's 200, 900 once percent-encoded.
      const name = 'ü'.repeat(150);
      const response = await fetch(`${url}/assets/${encodeURIComponent(name)}`);
      expect(response.status).toBe(404);
      // The asset page's own answer, not the router's "no such page".
      expect(await response.text()).toContain(`No asset is called ${name}.`);
    });
  });

  it('answers an address it cannot read with its own HTML page, never an echo of it', async () => {
    await withServer(demoSource(demo), {}, async (url) => {
      const response = await fetch(`${url}/%E0%A4%A`);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.text()).toBe(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bad request · Advisory appliance</title></head>' +
          '<body><h1>Bad request</h1><p>The address of this request cannot be read.</p></body></html>\n',
      );
    });
  });

  it('writes no request log of its own: the daemon logs to standard error, and only failures', async () => {
    // Fastify's own logger would write a JSON line per request to standard output.
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      await withServer(demoSource(demo), {}, async (url) => {
        expect((await fetch(`${url}/health`)).status).toBe(200);
        expect((await fetch(`${url}/nowhere`)).status).toBe(404);
      });
    } finally {
      spy.mockRestore();
    }
    expect(written.filter((line) => line.includes('"reqId"'))).toEqual([]);
  });

  it('reads the log and its verification afresh: an edited entry shows at once', async () => {
    const other = await demoAppliance();
    try {
      await withServer(demoSource(other), {}, async (url) => {
        expect(await (await fetch(`${url}/log`)).text()).toContain('HASH CHAIN INTACT');
        const file = path.join(other.stateDir, 'decisions.jsonl');
        writeFileSync(file, readFileSync(file, 'utf8').replace(/"advisories":\d+/, '"advisories":9999'));
        const html = await (await fetch(`${url}/log`)).text();
        expect(html).toContain('HASH CHAIN BROKEN');
        expect(html).toContain('Log line 1: entry 1 does not match its hash: it was edited');
      });
    } finally {
      await other.appliance.stop();
    }
  });
});

/** A raw request (any method, any body, any Host), answered as status, headers and body text. */
function rawRequest(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname,
        port,
        path: options.path,
        method: options.method ?? 'GET',
        // A body always with its length: Node's client sends none for GET and DELETE otherwise.
        headers: {
          ...(options.body === undefined
            ? {}
            : { 'content-length': String(Buffer.byteLength(options.body)) }),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The one shape of every JSON error: {"error": {"code", "message"}}, and nothing else. */
function expectJsonError(
  answer: { status: number; headers: Record<string, string | string[] | undefined>; text: string },
  status: number,
  code: string,
  message?: string,
): string {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers['content-type'], answer.text.slice(0, 200)).toMatch(/^application\/json/);
  const body = JSON.parse(answer.text) as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toMatch(/^\S/);
  if (message !== undefined) expect(body.error.message).toBe(message);
  // The security headers, on errors too; and never kept by a cache. (A 401 and a 429 are
  // not kept by one anyway: access.ts answers them itself, without the header.)
  for (const [name, value] of Object.entries(SECURITY_HEADERS))
    expect(answer.headers[name], name).toBe(value);
  if (status !== 401 && status !== 429) expect(answer.headers['cache-control']).toBe('no-store');
  return body.error.message;
}

describe('JSON errors', () => {
  it('take one shape with a code on every path: 401, 429, 404, 405, 421, 400, 500, 503', async () => {
    await withServer(demoSource(demo), { credentials }, async (url) => {
      const wrong = { authorization: basic('operator', 'not-the-password') };
      const good = { authorization: basic(credentials.user, credentials.password) };
      // A path no route has: JSON when a .json was asked for or JSON is what the client takes.
      expectJsonError(
        await rawRequest(url, { path: '/nothing.json', headers: good }),
        404,
        'not_found',
        'there is no such page',
      );
      expectJsonError(
        await rawRequest(url, { path: '/nothing', headers: { ...good, accept: 'application/json' } }),
        404,
        'not_found',
      );
      // Only a path that ends in .json is one.
      const jsonp = await rawRequest(url, { path: '/nothing.jsonp', headers: good });
      expect(jsonp.headers['content-type']).toMatch(/^text\/html/);
      // A browser still gets the page.
      const page = await rawRequest(url, { path: '/nothing', headers: { ...good, accept: 'text/html,*/*' } });
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      // Methods: nothing here takes anything but GET and HEAD, and no body is read to say so.
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const answer = await rawRequest(url, {
          method,
          path: '/decisions.json',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ a: 'a'.repeat(3 * 1024 * 1024) }),
        });
        expectJsonError(answer, 405, 'method_not_allowed');
        expect(answer.headers.allow).toBe('GET, HEAD');
      }
      expectJsonError(await rawRequest(url, { method: 'POST', path: '/health' }), 405, 'method_not_allowed');
      expectJsonError(
        await rawRequest(url, { path: '/health', headers: { host: 'rebound.example' } }),
        421,
        'unknown_host',
        // The page's text, its first letter lowered and only its final full stop dropped.
        'this dashboard answers only to its own names. Add the name to ADVISORY_DASHBOARD_HOSTS to use it',
      );
      expectJsonError(
        await rawRequest(url, { path: '/%E0%A4%A.json' }),
        400,
        'bad_request',
        'the address of this request cannot be read',
      );
      // Then a client that guesses.
      expect(
        expectJsonError(await rawRequest(url, { path: '/decisions.json' }), 401, 'authentication_required'),
      ).toBe('authentication required');
      const refused = await rawRequest(url, { path: '/verdicts.json', headers: wrong });
      expectJsonError(refused, 401, 'authentication_required');
      expect(refused.headers['www-authenticate']).toBe('Basic realm="advisory appliance", charset="UTF-8"');
      for (let i = 0; i < 9; i++) await rawRequest(url, { path: '/verdicts.json', headers: wrong });
      const paused = await rawRequest(url, { path: '/decisions.json', headers: wrong });
      expectJsonError(paused, 429, 'too_many_requests');
      expect(Number(paused.headers['retry-after'])).toBeGreaterThan(0);
    });
    // Without credentials: the export's own 401, a body sent with a GET, the log not open,
    // and the dashboard's own failure.
    await withServer({ ...demoSource(demo), decisions: null }, {}, async (url) => {
      expectJsonError(await rawRequest(url, { path: '/verdicts.json' }), 401, 'authentication_required');
      // A body is never read, so none can be too large: a GET's is ignored (Fastify parses
      // none for GET), and any other method is refused above before a byte of it is read.
      const large = await rawRequest(url, {
        path: '/health',
        headers: { 'content-type': 'application/json' },
        body: `{not json ${'a'.repeat(3 * 1024 * 1024)}`,
      });
      expect(large.status).toBe(200);
      expect(JSON.parse(large.text)).toMatchObject({ status: 'ok' });
    });
    const failing = {
      ...demoSource(demo),
      get status(): never {
        throw new Error('status unreadable');
      },
    };
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    await withServer(failing, { log }, async (url) => {
      const message = expectJsonError(
        await rawRequest(url, { path: '/health' }),
        500,
        'internal_error',
        'the page could not be made; the log says why',
      );
      expect(message).not.toContain('status unreadable');
      // What went wrong is in the log, as the answer says.
      expect(JSON.parse(lines[0] as string)).toMatchObject({
        level: 50,
        msg: 'dashboard request failed',
        url: '/health',
        error: 'status unreadable',
      });
      // A page still gets the page.
      expect((await rawRequest(url, { path: '/' })).headers['content-type']).toMatch(/^text\/html/);
    });
    await withServer({ ...demoSource(demo), decisions: null }, { credentials }, async (url) => {
      expectJsonError(
        await rawRequest(url, {
          path: '/decisions.json',
          headers: { authorization: basic(credentials.user, credentials.password) },
        }),
        503,
        'decision_log_unavailable',
        'the decision log is not open in this process',
      );
    });
  });

  it('answers a request that is not HTTP, or whose headers are too large, in the same shape', async () => {
    await withServer(demoSource(demo), {}, async (url) => {
      const { hostname, port } = new URL(url);
      const send = (text: string) =>
        new Promise<string>((resolve) => {
          const socket = connect(Number(port), hostname);
          let answer = '';
          socket.on('data', (chunk: Buffer) => {
            answer += chunk.toString();
          });
          socket.on('error', () => undefined);
          socket.on('close', () => resolve(answer));
          socket.write(text);
        });
      const parse = (answer: string) => {
        const [head = '', body = ''] = answer.split('\r\n\r\n');
        return { status: Number(head.split(' ')[1]), head, body: JSON.parse(body) as unknown };
      };
      const garbage = parse(await send('NOT HTTP AT ALL\r\n\r\n'));
      expect(garbage.status).toBe(400);
      expect(garbage.head).toMatch(/content-type: application\/json/i);
      expect(garbage.body).toEqual({
        error: { code: 'bad_request', message: 'the request cannot be read as HTTP' },
      });
      for (const [name, value] of Object.entries({
        ...SECURITY_HEADERS,
        'cache-control': 'no-store',
        connection: 'close',
      }))
        expect(`${garbage.head.toLowerCase()}\r\n`, name).toContain(
          `\r\n${name}: ${value.toLowerCase()}\r\n`,
        );
      expect(garbage.head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      const huge = parse(
        await send(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`),
      );
      expect(huge.status).toBe(431);
      expect(huge.body).toEqual({
        error: { code: 'headers_too_large', message: 'the request headers are too large' },
      });
      expect(huge.head).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    });
  });
});
