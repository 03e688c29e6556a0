import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import { ProxyListError, trustedProxies } from '../../src/dashboard/access.ts';
import { buildDashboard, CONNECTION_LIMITS } from '../../src/dashboard/server.ts';
import { type Demo, demoAppliance, demoSource, serve } from '../support/dashboard.ts';

let demo: Demo;
beforeAll(async () => {
  demo = await demoAppliance();
});
afterAll(async () => demo?.appliance.stop());

const credentials = { user: 'operator', password: 'correct horse battery' };

/** A raw HTTP/1.1 request, so the Host header and the path are exactly what is sent. */
function raw(
  url: string,
  path: string,
  host: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, headers: { host }, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('dashboard access', () => {
  it('asks for credentials on every registered route but those public by name', async () => {
    const app = await buildDashboard({ source: demoSource(demo), credentials, version: 'test' });
    await app.ready();
    const routes = app.dashboardRoutes;
    expect(
      routes
        .filter((r) => r.access === 'public')
        .map((r) => r.url)
        .sort(),
    ).toEqual(['/favicon.svg', '/health']);
    // Every other route says what it asks for: the export's credentials, or the pages'.
    expect(Object.fromEntries(routes.map((r) => [r.url, r.access]))).toMatchObject({
      '/': 'pages',
      '/log': 'pages',
      '/assets/:name': 'pages',
      '/decisions.json': 'credentials',
      '/verdicts.json': 'credentials',
    });
    expect(new Set(routes.map((r) => r.access))).toEqual(new Set(['public', 'pages', 'credentials']));
    expect(routes.length).toBeGreaterThanOrEqual(10);
    for (const route of routes) {
      const url = route.url.replace(':name', 'pve-node-1');
      const response = await app.inject({ method: 'GET', url, headers: { host: '127.0.0.1' } });
      if (route.access === 'public') expect(response.statusCode, url).not.toBe(401);
      else expect(response.statusCode, url).toBe(401);
    }
    // A path no route has is not a way around it either.
    expect((await app.inject({ url: '/no/such/page', headers: { host: '127.0.0.1' } })).statusCode).toBe(401);
    await app.close();
  });

  it('answers only to its own names: a rebinding page cannot read it', async () => {
    const served = await serve(demoSource(demo), { hosts: ['advisory.lan'] });
    try {
      for (const host of [
        '127.0.0.1',
        `127.0.0.1:${new URL(served.url).port}`,
        'localhost:8090',
        '[::1]:8090',
        'ADVISORY.lan',
        'advisory.lan.',
        '10.0.0.5',
      ]) {
        expect((await raw(served.url, '/', host)).status, host).toBe(200);
      }
      // A name configured with its trailing dot and capitals is the same name.
      const dotted = await serve(demoSource(demo), { hosts: ['Advisory.LAN.'] });
      try {
        for (const host of ['advisory.lan', 'advisory.lan.'])
          expect((await raw(dotted.url, '/', host)).status, host).toBe(200);
      } finally {
        await dotted.close();
      }
      for (const host of [
        'attacker.example',
        'attacker.example:8090',
        'advisory.lan.attacker.example',
        'localhost.attacker.example',
      ]) {
        const refused = await raw(served.url, '/health', host);
        expect(refused.status, host).toBe(421);
        expect(refused.headers['content-security-policy'], host).toMatch(/default-src 'none'/);
        expect(refused.body, host).toContain('ADVISORY_DASHBOARD_HOSTS');
        expect(refused.body, host).not.toContain('pve-node');
      }
    } finally {
      await served.close();
    }
  });

  it('answers a URL it cannot read, or a long asset name, with its own page and headers', async () => {
    const served = await serve(demoSource(demo));
    try {
      for (const path of ['/%', '/assets/%E0%A4%A', '/%zz<script>']) {
        const response = await raw(served.url, path, '127.0.0.1');
        expect(response.status, path).toBe(400);
        expect(response.headers['content-type'], path).toMatch(/^text\/html/);
        expect(response.headers['x-frame-options'], path).toBe('DENY');
        expect(response.body, path).not.toContain('<script>');
        expect(response.body, path).not.toMatch(/FST_|"statusCode"/);
      }
      // 150 characters: within the inventory's 200, past Fastify's default parameter length.
      const long = `a${'b'.repeat(149)}`;
      const response = await raw(served.url, `/assets/${long}`, '127.0.0.1');
      expect(response.status).toBe(404);
      expect(response.body).toContain(`No asset is called ${long}.`);
    } finally {
      await served.close();
    }
  });

  it('bounds connections: a flood of half-sent requests is cut off and the dashboard answers again', async () => {
    const limits = { maxConnections: 50, headersMs: 1_000, requestMs: 2_000 };
    const served = await serve(demoSource(demo), { limits });
    const { hostname, port } = new URL(served.url);
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 300; i++) {
        const socket = connect(Number(port), hostname);
        socket.on('error', () => undefined);
        // Reads what comes (a 408), so the end of the connection is seen.
        socket.resume();
        socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
        sockets.push(socket);
      }
      const connections = () =>
        new Promise<number>((resolve, reject) =>
          served.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
        );
      // Once every socket is through its connect (accepted, or refused past the limit).
      await until(() => sockets.every((s) => !s.connecting));
      expect(await connections()).toBeLessThanOrEqual(limits.maxConnections);
      // The header deadline ends the half-sent requests, the limits the rest (the event
      // itself: every one closed as the client sees it, none left waiting to be accepted);
      // then a real one from the same client is served.
      await until(() => sockets.every((s) => s.closed));
      expect(await connections()).toBe(0);
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
      await served.close();
    }
  });
});

/** A GET from a chosen loopback address (127.0.0.2…), so the server sees another client. */
function getFrom(url: string, path: string, localAddress: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sockets that each send half a request and wait, from 127.0.0.1. */
function halfSent(url: string, count: number): Socket[] {
  const { hostname, port } = new URL(url);
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    // Reads what comes (a 408), so the end of the connection is seen.
    socket.resume();
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    sockets.push(socket);
  }
  return sockets;
}

describe('one misbehaving client', () => {
  it('holding 300 half-sent requests keeps nobody else from /health or the pages (default limits)', async () => {
    const served = await serve(demoSource(demo));
    const sockets = halfSent(served.url, 300);
    try {
      const connections = () =>
        new Promise<number>((resolve, reject) =>
          served.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
        );
      await until(() => sockets.every((s) => !s.connecting));
      // Its connections past its share are closed at once; the rest wait for their headers.
      await until(async () => (await connections()) <= CONNECTION_LIMITS.connectionsPerClient);
      // Another client, meanwhile, is served at once: the probe and a page.
      expect(await getFrom(served.url, '/health', '127.0.0.2')).toBe(200);
      expect(await getFrom(served.url, '/', '127.0.0.3')).toBe(200);
      // The misbehaving client itself gets no further in: the rest of its sockets are closed.
      await until(() => sockets.filter((s) => !s.closed).length <= CONNECTION_LIMITS.connectionsPerClient);
    } finally {
      for (const socket of sockets) socket.destroy();
      await served.close();
    }
  });

  it('has a half-sent request closed at its header deadline, not at the next 30 s check', async () => {
    // Only the header deadline can close it: the idle and whole-request deadlines are far off.
    const served = await serve(demoSource(demo), {
      limits: { headersMs: 1_000, requestMs: 600_000, keepAliveMs: 600_000 },
    });
    try {
      const started = performance.now();
      const [socket] = halfSent(served.url, 1) as [Socket];
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
      });
      await new Promise((resolve) => socket.on('close', resolve));
      // Node checks header deadlines every connectionsCheckingInterval (30 s unless set):
      // 15 s is far above 1 s on a loaded machine, and far below the 30 s it took before.
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(answer.split('\r\n\r\n')[1] as string)).toEqual({
        error: { code: 'request_timeout', message: 'the request was not sent in time' },
      });
    } finally {
      await served.close();
    }
  });
  it('takes exactly its share from one client, and counts again from what is still open', async () => {
    // Two per client, deadlines far off: only the bound closes a socket here.
    const served = await serve(demoSource(demo), {
      limits: { connectionsPerClient: 2, headersMs: 60_000, requestMs: 120_000 },
    });
    const open = (sockets: Socket[]) => sockets.filter((s) => !s.closed);
    const first = halfSent(served.url, 3);
    const second: Socket[] = [];
    try {
      // The third is closed as it comes; the two before it stay.
      await until(() => first.some((s) => s.closed));
      await until(() => first.every((s) => !s.connecting));
      expect(open(first)).toHaveLength(2);
      // One of the two ends: one place is free again, not two.
      const [ending] = open(first) as [Socket];
      ending.destroy();
      await until(
        () =>
          new Promise<boolean>((resolve) =>
            served.app.server.getConnections((_e, count) => resolve(count === 1)),
          ),
      );
      second.push(...halfSent(served.url, 2));
      await until(() => second.some((s) => s.closed));
      await until(() => second.every((s) => !s.connecting));
      expect(open([...first, ...second])).toHaveLength(2);
    } finally {
      for (const socket of [...first, ...second]) socket.destroy();
      await served.close();
    }
  });

  it('keeps a header deadline shorter than the interval Node is told to check at', async () => {
    // The check every 600 s, the deadline 1 s: the deadline is what Node is told to check at.
    const served = await serve(demoSource(demo), {
      limits: { headersMs: 1_000, checkEveryMs: 600_000, requestMs: 600_000, keepAliveMs: 600_000 },
    });
    try {
      const [socket] = halfSent(served.url, 1) as [Socket];
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
      });
      // Waited for as an event: at a 600 s check this outlasts the test's own timeout.
      await new Promise((resolve) => socket.on('close', resolve));
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await served.close();
    }
  });
});

describe('trustedProxies', () => {
  it('matches addresses and ranges of both families, IPv4-mapped clients as their IPv4 address', () => {
    const proxies = trustedProxies([
      ' 10.1.0.0/16',
      '192.0.2.7',
      'fd00:0:0:1::/64',
      '::ffff:198.51.100.0/120',
    ]);
    expect(proxies.entries).toEqual([
      '10.1.0.0/16',
      '192.0.2.7',
      'fd00:0:0:1::/64',
      '::ffff:198.51.100.0/120',
    ]);
    for (const address of [
      '10.1.0.0',
      '10.1.255.255',
      '192.0.2.7',
      '::ffff:192.0.2.7',
      '::ffff:10.1.2.3',
      'fd00:0:0:1::',
      'fd00::1:ffff:ffff:ffff:ffff',
      '198.51.100.200',
      '::ffff:c633:64c8',
    ])
      expect(proxies.trusts(address), address).toBe(true);
    for (const address of [
      '10.0.255.255',
      '10.2.0.0',
      '192.0.2.8',
      '192.0.2.6',
      'fd00:0:0:2::',
      'fd00::',
      '198.51.101.0',
      '::192.0.2.7',
      'not an address',
      '',
      undefined,
    ])
      expect(proxies.trusts(address), String(address)).toBe(false);
    expect(() => trustedProxies(['10.0.0.1', ''])).toThrow(ProxyListError);
    expect(() => trustedProxies(['::/0'])).toThrow(/trusts every IPv6 address/);
  });

  it('reads every spelling of an address, and covers a family only when the ranges leave no gap', () => {
    // A range given by any address inside it; IPv6 with and without "::", with IPv4 inside.
    const proxies = trustedProxies([
      '10.1.2.3/16',
      'fd00:0:0:1:0:0:0:1',
      '2001:db8::/127',
      '::1',
      '::ffff:203.0.113.77',
      '0.0.0.0/8',
      '255.255.255.255',
    ]);
    for (const address of [
      '10.1.200.1',
      'fd00:0:0:1::1',
      '2001:db8::',
      '2001:db8::1',
      '0:0:0:0:0:0:0:1',
      '203.0.113.77',
      '::ffff:203.0.113.77',
      '::ffff:0.0.0.0',
      '::ffff:255.255.255.255',
    ])
      expect(proxies.trusts(address), address).toBe(true);
    for (const address of ['10.2.0.1', '2001:db8::2', '::2', '203.0.113.78', '::fffe:ffff:ffff', '1::'])
      expect(proxies.trusts(address), address).toBe(false);
    for (const entry of ['10.0.0.0/33', '10.0.0.0/x8', '10.0.0.0/8x', '::/129', '10.0.0.0/', '/8'])
      expect(() => trustedProxies([entry]), entry).toThrow(ProxyListError);
    // Everything but the last address, in ranges of every size: short of all, taken.
    const allButLast = Array.from({ length: 32 }, (_, i) => {
      const first = 2 ** 32 - 2 ** (32 - i);
      return `${[24, 16, 8, 0].map((shift) => Math.floor(first / 2 ** shift) % 256).join('.')}/${i + 1}`;
    });
    expect(trustedProxies(allButLast).trusts('255.255.255.254')).toBe(true);
    expect(trustedProxies(allButLast).trusts('255.255.255.255')).toBe(false);
    expect(() => trustedProxies([...allButLast, '255.255.255.255'])).toThrow(/trusts every IPv4 address/);
    expect(() => trustedProxies([...allButLast.reverse(), '255.255.255.255/32'])).toThrow(/every IPv4/);
  });

  it('leaves the connections of a configured proxy out of the per-client bound: it carries many clients', async () => {
    const served = await serve(demoSource(demo), {
      trustProxy: ['127.0.0.1'],
      limits: { connectionsPerClient: 2, headersMs: 60_000, requestMs: 120_000 },
    });
    const sockets = halfSent(served.url, 5);
    try {
      await until(() => sockets.every((s) => !s.connecting));
      await until(
        () =>
          new Promise<boolean>((resolve) =>
            served.app.server.getConnections((_e, count) => resolve(count === 5)),
          ),
      );
      expect(sockets.every((s) => !s.closed)).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await served.close();
    }
  });
});
