import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import { buildDashboard } from '../../src/dashboard/server.ts';
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
      // The header deadline ends the half-sent requests (the event itself: the server lets
      // them go); then a real one is served.
      await until(async () => (await connections()) === 0);
      expect(sockets.filter((s) => !s.destroyed && !s.readableEnded).length).toBeLessThan(300);
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
      await served.close();
    }
  });
});
