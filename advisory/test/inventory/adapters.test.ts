import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectHttp } from '../../src/inventory/adapters/http.ts';
import { collectNextcloud } from '../../src/inventory/adapters/nextcloud.ts';
import { collectProxmox } from '../../src/inventory/adapters/proxmox.ts';
import { collectInventory } from '../../src/inventory/collect.ts';
import {
  type HttpSourceConfig,
  type NextcloudSource,
  type ProxmoxSource,
  parseInventoryFile,
} from '../../src/inventory/config.ts';
import { grandchildGone, writeOcc } from '../support/occ-fake.ts';
import { type ProxmoxFake, proxmoxSource, startProxmoxFake } from '../support/proxmox-fake.ts';

// Deadlines of 30 s where an answer is expected: far from what a local fake takes, even on
// a loaded machine. Short ones only where the deadline itself is tested.

/**
 * The inventory adapters against local fakes that replay the products' documented
 * payloads: Proxmox VE over TLS with a self-signed certificate, Nextcloud's `occ`, an
 * HTTP endpoint; each also slow, failing and malformed.
 */
let pve: ProxmoxFake;
let dir: string;
let web: Server;
let webUrl: string;
let webMode: 'normal' | 'slow' | 'failing' = 'normal';

beforeAll(async () => {
  pve = await startProxmoxFake([
    { node: 'pve1', status: 'online', version: '9.1.4' },
    { node: 'pve2', status: 'online', version: '8.4.1' },
    { node: 'pve3', status: 'offline', version: '8.4.1' },
  ]);
  dir = mkdtempSync(path.join(tmpdir(), 'inventory-'));
  writeFileSync(path.join(dir, 'pve.secret'), `${pve.secret}\n`);
  writeFileSync(path.join(dir, 'pve.pem'), pve.cert);
  web = createServer((request, response) => {
    if (webMode === 'slow') return;
    if (webMode === 'failing') return response.writeHead(503).end();
    if (request.url === '/api/v1/version')
      return response.end(JSON.stringify({ version: '1.22.3', build: { go: '1.23' } }));
    if (request.url === '/about')
      return response.end('<footer>Powered by Gitea Version: 1.21.11 Page: 2ms</footer>');
    // An answer that makes a backtracking engine take exponential time for (a+)+ patterns.
    if (request.url === '/hostile') return response.end(`Version: ${'a'.repeat(5000)}!`);
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await pve?.close();
  web?.closeAllConnections();
  web?.close();
});

const inventoryFile = () => path.join(dir, 'inventory.yaml');

const proxmox = (extra: Partial<ProxmoxSource> = {}) => proxmoxSource(pve, extra);

describe('Proxmox VE adapter', () => {
  it('reports each node with its pve-manager version, authenticated with the API token', async () => {
    pve.mode = 'normal';
    pve.seen.length = 0;
    const assets = await collectProxmox(proxmox({ facts: { site: 'basement' } }), inventoryFile(), 30_000);
    expect(assets).toEqual([
      {
        name: 'cluster/pve1',
        source: 'cluster',
        products: { 'proxmox-ve': '9.1.4' },
        facts: { site: 'basement' },
        status: 'ok',
      },
      {
        name: 'cluster/pve2',
        source: 'cluster',
        products: { 'proxmox-ve': '8.4.1' },
        facts: { site: 'basement' },
        status: 'ok',
      },
      {
        name: 'cluster/pve3',
        source: 'cluster',
        products: {},
        facts: { site: 'basement' },
        status: 'unknown',
        error: 'node pve3 is offline',
      },
    ]);
    expect(new Set(pve.seen.map((s) => s.authorization))).toEqual(
      new Set([`PVEAPIToken=advisory@pve!monitor=${pve.secret}`]),
    );
    expect(pve.seen.map((s) => s.path).sort()).toEqual([
      '/api2/json/nodes',
      '/api2/json/nodes/pve1/lxc',
      '/api2/json/nodes/pve1/qemu',
      '/api2/json/nodes/pve1/version',
      '/api2/json/nodes/pve2/lxc',
      '/api2/json/nodes/pve2/qemu',
      '/api2/json/nodes/pve2/version',
    ]);
  });

  it('trusts a self-signed host by its CA file as well as by its pinned fingerprint', async () => {
    pve.mode = 'normal';
    const byCa = await collectProxmox(
      proxmox({ fingerprint: undefined, ca_file: 'pve.pem' }),
      inventoryFile(),
      30_000,
    );
    expect(byCa.map((a) => a.products['proxmox-ve'])).toEqual(['9.1.4', '8.4.1', undefined]);
  });

  it('refuses a host whose certificate is not the pinned one, or not trusted at all', async () => {
    pve.mode = 'normal';
    const wrong = `${'AB:'.repeat(31)}AB`;
    await expect(collectProxmox(proxmox({ fingerprint: wrong }), inventoryFile(), 30_000)).rejects.toThrow(
      /certificate fingerprint .* is not the pinned/,
    );
    await expect(
      collectProxmox(proxmox({ fingerprint: undefined }), inventoryFile(), 30_000),
    ).rejects.toThrow(/self.signed/i);
  });

  it('fails with the reason when the token is wrong, the host is slow, failing or answers nonsense', async () => {
    writeFileSync(path.join(dir, 'wrong.secret'), 'not-the-secret\n');
    pve.mode = 'normal';
    await expect(
      collectProxmox(proxmox({ token_secret_file: 'wrong.secret' }), inventoryFile(), 30_000),
    ).rejects.toThrow(/HTTP 401/);
    pve.mode = 'slow';
    await expect(collectProxmox(proxmox(), inventoryFile(), 300)).rejects.toThrow(/timed out after 300 ms/);
    pve.mode = 'failing';
    await expect(collectProxmox(proxmox(), inventoryFile(), 30_000)).rejects.toThrow(/HTTP 500/);
    pve.mode = 'malformed';
    await expect(collectProxmox(proxmox(), inventoryFile(), 30_000)).rejects.toThrow(/not JSON/);
    pve.mode = 'normal';
  });
});

describe('Nextcloud adapter (occ)', () => {
  const nextcloud = (command: string): NextcloudSource => ({
    type: 'nextcloud',
    name: 'cloud',
    command: [command],
  });

  it('reads versionstring and the enabled apps, without a shell', async () => {
    const assets = await collectNextcloud(nextcloud(writeOcc(dir, 'normal')), 30_000);
    expect(assets).toEqual([
      {
        name: 'cloud',
        source: 'cloud',
        products: {
          nextcloud: '32.0.3',
          'nextcloud-app-calendar': '5.0.6',
          'nextcloud-app-richdocuments': '8.5.3',
          'nextcloud-app-files-pdfviewer': '3.0.0',
          'nextcloud-app-dav': '1.32.0',
        },
        facts: { maintenance: 'false', needs_db_upgrade: 'false' },
        status: 'ok',
      },
    ]);
  });

  it('takes the first word of a versionstring with a suffix ("21.0.3 Enterprise")', async () => {
    const occ = writeOcc(dir, 'normal', {
      installed: true,
      version: '21.0.3.2',
      versionstring: '21.0.3 Enterprise',
    });
    expect((await collectNextcloud(nextcloud(occ), 30_000))[0]?.products.nextcloud).toBe('21.0.3');
  });

  it('runs the command as argv: shell syntax in it is not interpreted', async () => {
    const source: NextcloudSource = {
      type: 'nextcloud',
      name: 'cloud',
      command: ['/bin/echo', '$(touch /tmp/pwned)', ';'],
    };
    await expect(collectNextcloud(source, 30_000)).rejects.toThrow(/not JSON/);
  });

  it('ends everything occ started at the deadline, not only the direct child (sudo -> php)', async () => {
    const script = writeOcc(dir, 'slow-grandchild');
    // The fake is a node process that starts its grandchild once loaded: the deadline must
    // come after that (500 ms did not, under load), and long before the grandchild's minute.
    await expect(collectNextcloud(nextcloud(script), 10_000)).rejects.toThrow(
      /did not finish within 10000 ms/,
    );
    expect(existsSync(`${script}.grandchild-pid`), 'the grandchild started before the deadline').toBe(true);
    expect(await grandchildGone(script)).toBe(true);
  });

  it('fails with the reason when occ is slow, failing, answers nonsense, or Nextcloud is not installed', async () => {
    await expect(collectNextcloud(nextcloud(writeOcc(dir, 'slow')), 400)).rejects.toThrow(
      /did not finish within 400 ms/,
    );
    await expect(collectNextcloud(nextcloud(writeOcc(dir, 'failing')), 30_000)).rejects.toThrow(
      /status --output=json: PHP Fatal error/,
    );
    await expect(collectNextcloud(nextcloud(writeOcc(dir, 'malformed')), 30_000)).rejects.toThrow(/not JSON/);
    await expect(collectNextcloud(nextcloud(writeOcc(dir, 'not-installed')), 30_000)).rejects.toThrow(
      /not installed/,
    );
    await expect(collectNextcloud(nextcloud(path.join(dir, 'no-such-occ')), 30_000)).rejects.toThrow(
      /ENOENT/,
    );
  });
});

describe('HTTP getter adapter', () => {
  const getter = (extra: Partial<HttpSourceConfig>): HttpSourceConfig => ({
    type: 'http',
    name: 'git',
    url: `${webUrl}/api/v1/version`,
    product: 'gitea',
    ...extra,
  });

  it('takes the version by JSON pointer or by the first group of a regular expression', async () => {
    webMode = 'normal';
    expect(await collectHttp(getter({ json_pointer: '/version' }), inventoryFile(), 30_000)).toEqual([
      { name: 'git', source: 'git', products: { gitea: '1.22.3' }, facts: {}, status: 'ok' },
    ]);
    const byRegex = await collectHttp(
      getter({ url: `${webUrl}/about`, regex: 'Version: ([0-9.]+)' }),
      inventoryFile(),
      30_000,
    );
    expect(byRegex[0]?.products).toEqual({ gitea: '1.21.11' });
  });

  it('matches in linear time: an answer built to make a regular expression backtrack does not stall the daemon', async () => {
    webMode = 'normal';
    // With JavaScript's RegExp this match would take longer than the age of the universe
    // (2^5000 paths), blocking the event loop, the dashboard and every refresh with it.
    await expect(
      collectHttp(getter({ url: `${webUrl}/hostile`, regex: 'Version: ((a+)+)$' }), inventoryFile(), 30_000),
    ).rejects.toThrow(/no version at \/Version: \(\(a\+\)\+\)\$\//);
  });

  it('fails when the version is not where it was said to be, or the endpoint is slow or failing', async () => {
    webMode = 'normal';
    await expect(
      collectHttp(getter({ json_pointer: '/build/rust' }), inventoryFile(), 30_000),
    ).rejects.toThrow(/no version at \/build\/rust/);
    await expect(collectHttp(getter({ json_pointer: '/build' }), inventoryFile(), 30_000)).rejects.toThrow(
      /no version/,
    );
    await expect(
      collectHttp(getter({ url: `${webUrl}/about`, json_pointer: '/version' }), inventoryFile(), 30_000),
    ).rejects.toThrow(/not JSON/);
    webMode = 'slow';
    await expect(collectHttp(getter({ json_pointer: '/version' }), inventoryFile(), 300)).rejects.toThrow(
      /timed out/,
    );
    webMode = 'failing';
    await expect(collectHttp(getter({ json_pointer: '/version' }), inventoryFile(), 30_000)).rejects.toThrow(
      /HTTP 503/,
    );
    webMode = 'normal';
  });
});

describe('collecting an inventory', () => {
  it('asks every source at once; a failing one marks its assets unknown and never stops the others', async () => {
    pve.mode = 'slow';
    writeFileSync(
      path.join(dir, 'lab.json'),
      JSON.stringify({ assets: [{ name: 'lab-db', products: { postgresql: '16.4' } }] }),
    );
    const file = path.join(dir, 'mixed.yaml');
    writeFileSync(
      file,
      [
        'assets:',
        '  - { name: cache, products: { redis: "7.4.3" } }',
        'sources:',
        `  - { type: proxmox, name: cluster, url: "${pve.url}", token_id: "${pve.tokenId}", token_secret_file: pve.secret, fingerprint: "${pve.fingerprint}", timeout: 1s }`,
        `  - { type: nextcloud, name: cloud, command: ["${writeOcc(dir, 'failing')}"] }`,
        `  - { type: nextcloud, name: cloud2, command: ["${writeOcc(dir, 'normal')}"] }`,
        '  - { type: file, name: lab, path: lab.json, facts: { rack: "b2" } }',
        `  - { type: http, name: git, url: "${webUrl}/api/v1/version", product: gitea, json_pointer: /version }`,
      ].join('\n'),
    );
    const inventory = parseInventoryFile(readFileSync(file, 'utf8'), file);
    const known = new Map([['cluster', ['cluster/pve1', 'cluster/pve2']]]);
    const started = Date.now();
    const { assets, sources } = await collectInventory(file, inventory, known);
    // Ended by the slow source's deadline (1 s and 5 s), not held by it: a generous bound for
    // a loaded machine, well below the test's timeout.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(assets.map((a) => [a.name, a.status, a.products])).toEqual([
      ['cache', 'ok', { redis: '7.4.3' }],
      ['cluster/pve1', 'unknown', {}],
      ['cluster/pve2', 'unknown', {}],
      ['cloud', 'unknown', {}],
      ['cloud2', 'ok', expect.objectContaining({ nextcloud: '32.0.3' })],
      ['lab-db', 'ok', { postgresql: '16.4' }],
      ['git', 'ok', { gitea: '1.22.3' }],
    ]);
    expect(assets.find((a) => a.name === 'lab-db')?.facts).toEqual({ rack: 'b2' });
    expect(sources.map((s) => [s.name, s.ok, s.assets])).toEqual([
      ['cloud', false, 1],
      ['cloud2', true, 1],
      ['cluster', false, 2],
      ['git', true, 1],
      ['inventory', true, 1],
      ['lab', true, 1],
    ]);
    expect(sources.find((s) => s.name === 'cluster')?.error).toMatch(/timed out/);
    expect(sources.find((s) => s.name === 'cloud')?.error).toMatch(/PHP Fatal error/);
    pve.mode = 'normal';
  });

  it('tells apart two sources reporting the same name', async () => {
    writeFileSync(path.join(dir, 'a.yaml'), 'assets:\n  - { name: db, products: { postgresql: "16.4" } }\n');
    const file = path.join(dir, 'twice.yaml');
    writeFileSync(
      file,
      'assets:\n  - { name: db, products: { postgresql: "15.8" } }\nsources:\n  - { type: file, name: more, path: a.yaml }\n',
    );
    const { assets } = await collectInventory(file, parseInventoryFile(readFileSync(file, 'utf8')));
    expect(assets.map((a) => a.name)).toEqual(['db', 'more:db']);
  });
});
