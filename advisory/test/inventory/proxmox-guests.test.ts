import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluation/verdicts.ts';
import type { VerifiedAdvisory } from '../../src/feed/verify/verify-bytes.ts';
import { collectProxmox } from '../../src/inventory/adapters/proxmox.ts';
import { checkReported } from '../../src/inventory/config.ts';
import {
  debian12OsInfo,
  type FakeGuest,
  type ProxmoxFake,
  proxmoxSource,
  startProxmoxFake,
} from '../support/proxmox-fake.ts';

// Deadlines of 30 s where an answer is expected: far from what a local fake takes, even on
// a loaded machine. Short ones only where the deadline itself is tested.

/**
 * The Proxmox VE adapter's guests (VMs and containers, with what the API says of their
 * OS) and its connections: one keep-alive dispatcher per collection, at most
 * `concurrency` requests at once, against a fake that replays the documented payloads over TLS.
 */
let pve: ProxmoxFake;
let single: ProxmoxFake;
let dir: string;

const guests: FakeGuest[] = [
  {
    vmid: 104,
    kind: 'qemu',
    name: 'agentless',
    status: 'running',
    ostype: 'l26',
    agent: '1',
    osinfo: 'not-running',
  },
  {
    vmid: 101,
    kind: 'qemu',
    name: 'web',
    status: 'running',
    ostype: 'l26',
    agent: '1',
    osinfo: debian12OsInfo,
  },
  {
    vmid: 102,
    kind: 'qemu',
    name: 'win-ad',
    status: 'running',
    ostype: 'win11',
    agent: 'enabled=1,fstrim_cloned_disks=1',
    osinfo: 'forbidden',
  },
  {
    vmid: 103,
    kind: 'qemu',
    name: 'old',
    status: 'stopped',
    ostype: 'l26',
    agent: '1',
    osinfo: debian12OsInfo,
  },
  { vmid: 105, kind: 'qemu', name: 'noagent', status: 'running', ostype: 'l26', osinfo: debian12OsInfo },
  { vmid: 9000, kind: 'qemu', name: 'debian-template', status: 'stopped', ostype: 'l26', template: true },
  { vmid: 200, kind: 'lxc', name: 'dns_01', status: 'running', ostype: 'debian' },
];

beforeAll(async () => {
  pve = await startProxmoxFake([
    { node: 'pve1', status: 'online', version: '9.1.4', guests },
    {
      node: 'pve2',
      status: 'online',
      version: '9.1.4',
      guests: [
        {
          vmid: 110,
          kind: 'qemu',
          name: 'noble',
          status: 'running',
          ostype: 'l26',
          agent: 'enabled=1',
          osinfo: {
            ...debian12OsInfo,
            id: 'ubuntu',
            'pretty-name': 'Ubuntu 24.04.1 LTS',
            'version-id': '24.04',
          },
        },
      ],
    },
    { node: 'pve3', status: 'offline', version: '8.4.1', guests: [guests[1] as FakeGuest] },
  ]);
  single = await startProxmoxFake([
    {
      node: 'solo',
      status: 'online',
      version: '9.1.4',
      guests: Array.from({ length: 6 }, (_, i) => ({
        vmid: 300 + i,
        kind: i % 2 ? ('lxc' as const) : ('qemu' as const),
        name: `guest${i}`,
        status: 'running' as const,
        ostype: i % 2 ? 'debian' : 'l26',
        agent: '1',
        osinfo: debian12OsInfo,
      })),
    },
  ]);
  dir = mkdtempSync(path.join(tmpdir(), 'proxmox-'));
  writeFileSync(path.join(dir, 'pve.secret'), `${pve.secret}\n`);
  writeFileSync(path.join(dir, 'wrong.secret'), 'not-the-secret\n');
});
afterAll(async () => {
  await pve?.close();
  await single?.close();
});

const inventoryFile = () => path.join(dir, 'inventory.yaml');
const source = proxmoxSource;

describe('Proxmox VE guests', () => {
  it('reports VMs and containers by VMID and name, with the OS the guest agent reports', async () => {
    pve.mode = 'normal';
    const assets = await collectProxmox(
      source(pve, { products: { debian: '13.2' }, facts: { site: 'basement' } }),
      inventoryFile(),
      30_000,
    );
    // Held to the inventory file's rules, as collectInventory holds every source's answer.
    expect(() => checkReported(assets, 'cluster')).not.toThrow();
    const ok = (name: string, products: Record<string, string>, facts: Record<string, string>) => ({
      name,
      source: 'cluster',
      products,
      facts: { site: 'basement', ...facts },
      status: 'ok',
    });
    expect(assets).toEqual([
      // The source's products describe the hosts; guests run their own OS.
      ok('cluster/pve1', { debian: '13.2', 'proxmox-ve': '9.1.4' }, {}),
      ok(
        'cluster/vm-101-web',
        { debian: '12' },
        { node: 'pve1', ostype: 'l26', os: 'Debian GNU/Linux 12 (bookworm)' },
      ),
      // The token may not ask the agent (HTTP 403): the configuration alone.
      ok('cluster/vm-102-win-ad', {}, { node: 'pve1', ostype: 'win11' }),
      // Stopped: the agent is not asked.
      ok('cluster/vm-103-old', {}, { node: 'pve1', ostype: 'l26' }),
      // Agent enabled, but not running in the guest (HTTP 500).
      ok('cluster/vm-104-agentless', {}, { node: 'pve1', ostype: 'l26' }),
      // No agent configured: not asked.
      ok('cluster/vm-105-noagent', {}, { node: 'pve1', ostype: 'l26' }),
      // Containers: the API gives the distribution, not its version. `_` is no name character.
      ok('cluster/ct-200-dns-01', {}, { node: 'pve1', ostype: 'debian' }),
      ok('cluster/pve2', { debian: '13.2', 'proxmox-ve': '9.1.4' }, {}),
      ok(
        'cluster/vm-110-noble',
        { ubuntu: '24.04' },
        { node: 'pve2', ostype: 'l26', os: 'Ubuntu 24.04.1 LTS' },
      ),
      {
        name: 'cluster/pve3',
        source: 'cluster',
        products: {},
        facts: { site: 'basement' },
        status: 'unknown',
        error: 'node pve3 is offline',
      },
    ]);
    const paths = pve.seen.map((s) => s.path);
    expect(paths).not.toContain('/api2/json/nodes/pve1/qemu/9000/config');
    for (const vmid of [103, 105])
      expect(paths).not.toContain(`/api2/json/nodes/pve1/qemu/${vmid}/agent/get-osinfo`);
    expect(paths.filter((p) => p.startsWith('/api2/json/nodes/pve3/'))).toEqual([]);
  });

  it('lets feed advisories for the OS match a guest', async () => {
    pve.mode = 'normal';
    const assets = await collectProxmox(
      source(pve, { products: { debian: '13.2' } }),
      inventoryFile(),
      30_000,
    );
    const eol: VerifiedAdvisory = {
      module: 'platform',
      file: 'platform/debian-12-eol.yaml',
      advisory: {
        id: 'DEBIAN-EOL-12',
        title: 'Debian 12 is end of life',
        product: 'debian',
        affects: '<13.0.0',
        verdict: 'eol',
        recommended_version: '13.6',
        effective: '2026-01-01',
        expires: '2027-12-31',
        summary: 'Upgrade to Debian 13.',
        references: ['https://www.debian.org/releases/'],
      },
    };
    const verdicts = evaluate([eol], assets, new Date('2026-11-21T12:00:00Z'));
    expect(verdicts.filter((v) => v.verdict !== null).map((v) => [v.asset, v.verdict])).toEqual([
      ['cluster/vm-101-web', 'eol'],
    ]);
  });

  it('leaves out an OS the guest reports in a form that is no product key or version', async () => {
    const odd = await startProxmoxFake([
      {
        node: 'n1',
        status: 'online',
        version: '9.1.4',
        guests: [
          {
            vmid: 120,
            kind: 'qemu',
            name: 'hostile',
            status: 'running',
            ostype: 'l26',
            agent: '1',
            osinfo: {
              id: 'Debian Linux',
              'version-id': '12',
              'pretty-name': `Debian\u001b[2J${'x'.repeat(300)}`,
            },
          },
          {
            vmid: 121,
            kind: 'qemu',
            name: 'odd-version',
            status: 'running',
            ostype: 'l26',
            agent: '1',
            osinfo: { id: 'debian', 'version-id': '12 (bookworm)' },
          },
        ],
      },
    ]);
    writeFileSync(path.join(dir, 'odd.secret'), odd.secret);
    try {
      const assets = await collectProxmox(
        source(odd, { token_secret_file: 'odd.secret', fingerprint: odd.fingerprint }),
        inventoryFile(),
        30_000,
      );
      expect(assets.map((a) => [a.name, a.products])).toEqual([
        ['cluster/n1', { 'proxmox-ve': '9.1.4' }],
        ['cluster/vm-120-hostile', {}],
        ['cluster/vm-121-odd-version', {}],
      ]);
      // Text from inside a guest: printable and at most 200 characters.
      expect(assets[1]?.facts.os).toBe(`Debian?[2J${'x'.repeat(190)}`);
      expect(() => checkReported(assets, 'cluster')).not.toThrow();
    } finally {
      await odd.close();
    }
  });
});

describe('Proxmox VE connections', () => {
  it('asks one request at a time over one kept-alive TLS connection with concurrency 1', async () => {
    single.delayMs = 5;
    single.gate.maxInFlight = 0;
    const before = single.connections;
    single.seen.length = 0;
    writeFileSync(path.join(dir, 'single.secret'), single.secret);
    const assets = await collectProxmox(
      source(single, { token_secret_file: 'single.secret', fingerprint: single.fingerprint, concurrency: 1 }),
      inventoryFile(),
      30_000,
    );
    expect(assets).toHaveLength(7);
    // nodes, version, qemu, lxc, 6 configs, 3 agent answers
    expect(single.seen).toHaveLength(13);
    expect(single.connections - before).toBe(1);
    expect(single.gate.maxInFlight).toBe(1);
    single.delayMs = 0;
  });

  it('asks a whole cluster over at most four kept-alive connections, four requests at a time', async () => {
    pve.mode = 'normal';
    pve.delayMs = 5;
    pve.gate.maxInFlight = 0;
    const before = pve.connections;
    pve.seen.length = 0;
    await collectProxmox(source(pve), inventoryFile(), 30_000);
    expect(pve.seen.length).toBeGreaterThan(15);
    expect(pve.connections - before).toBeGreaterThanOrEqual(1);
    expect(pve.connections - before).toBeLessThanOrEqual(4);
    expect(pve.gate.maxInFlight).toBeLessThanOrEqual(4);
    pve.delayMs = 0;
  });
});

describe('Proxmox VE failures', () => {
  it('names the source and the token when the token is refused', async () => {
    pve.mode = 'normal';
    await expect(
      collectProxmox(source(pve, { token_secret_file: 'wrong.secret' }), inventoryFile(), 30_000),
    ).rejects.toThrow(
      `cluster: ${pve.url}/api2/json/nodes answered HTTP 401: the API token advisory@pve!monitor was refused`,
    );
  });

  it('holds its caps against garbage and oversized answers', async () => {
    pve.mode = 'oversized';
    await expect(collectProxmox(source(pve), inventoryFile(), 30_000)).rejects.toThrow(
      `${pve.url}/api2/json/nodes: answer larger than 4194304 bytes`,
    );
    pve.mode = 'garbage';
    await expect(collectProxmox(source(pve), inventoryFile(), 30_000)).rejects.toThrow(
      `${pve.url}/api2/json/nodes: not a Proxmox node list`,
    );
    pve.mode = 'malformed';
    await expect(collectProxmox(source(pve), inventoryFile(), 30_000)).rejects.toThrow(
      `${pve.url}/api2/json/nodes: the answer is not JSON`,
    );
    pve.mode = 'normal';
  });

  it('fails with the reason when the host cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(
      collectProxmox(source(pve, { url: `https://127.0.0.1:${port}` }), inventoryFile(), 30_000),
    ).rejects.toThrow(`https://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
  });
});
