import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import { collectNextcloudApi } from '../../src/inventory/adapters/nextcloud-api.ts';
import { collectProxmox } from '../../src/inventory/adapters/proxmox.ts';
import type { NextcloudApiSource, ProxmoxSource } from '../../src/inventory/config.ts';
import { type NextcloudFake, nextcloudApiSource, startNextcloudFake } from '../support/nextcloud-fake.ts';
import { occStatus } from '../support/occ-fake.ts';
import {
  debian12OsInfo,
  type FakeGuest,
  type ProxmoxFake,
  proxmoxSource,
  startProxmoxFake,
} from '../support/proxmox-fake.ts';

/**
 * Bounded inventories: the Proxmox and Nextcloud API sources ask up to `concurrency`
 * things at once, each request with its own deadline (`request_timeout`), and a part
 * that fails (one guest agent, one app's info) degrades that part only. Slowness is the
 * fakes' gate: requests are held until the test releases them, so "four requests open at
 * once" is an event the test waits for, not a guess at durations. Where a request deadline
 * must pass (a hung guest agent), it is 2 s against a source deadline of 30 s: a loaded
 * machine only makes the rest slower, not the result different.
 */
let pve: ProxmoxFake;
let cloud: NextcloudFake;
let dir: string;

const vm = (vmid: number): FakeGuest => ({
  vmid,
  kind: 'qemu',
  name: `vm${vmid}`,
  status: 'running',
  ostype: 'l26',
  agent: '1',
  osinfo: debian12OsInfo,
});
const apps = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`app${i}`, `1.${i}.0`]));

beforeAll(async () => {
  pve = await startProxmoxFake([
    { node: 'pve1', status: 'online', version: '9.1.4', guests: [101, 102, 103, 104, 105, 106].map(vm) },
  ]);
  cloud = await startNextcloudFake({ status: occStatus, apps: { enabled: apps, disabled: {} } });
  dir = mkdtempSync(path.join(tmpdir(), 'inventory-bounded-'));
  writeFileSync(path.join(dir, 'pve.secret'), pve.secret);
  writeFileSync(path.join(dir, 'cloud.secret'), cloud.appPassword);
});
afterAll(async () => {
  await pve?.close();
  await cloud?.close();
});
afterEach(() => {
  for (const fake of [pve, cloud]) {
    fake.gate.release();
    fake.gate.maxInFlight = 0;
  }
  cloud.failingInfo = [];
});

const inventoryFile = () => path.join(dir, 'inventory.yaml');
const pveSource = (extra: Partial<ProxmoxSource> = {}) => proxmoxSource(pve, extra);
const cloudSource = (extra: Partial<NextcloudApiSource> = {}) =>
  nextcloudApiSource(cloud, 'cloud.secret', extra);
const isAgent = (p: string) => p.endsWith('/agent/get-osinfo');
const isAppInfo = (p: string) => /^\/ocs\/v2\.php\/cloud\/apps\/[^/?]+\?/.test(p);

describe('Proxmox VE: bounded concurrency', () => {
  it('asks slow guest agents side by side, at most four at once by default', async () => {
    pve.gate.hold = isAgent;
    const before = pve.connections;
    const run = collectProxmox(pveSource(), inventoryFile(), 30_000);
    // Four agents slow at once (the report: four at 9 s each, one after the other, ran
    // past the source's deadline): all four are asked before any of them answers.
    await until(() => pve.gate.held.length === 4);
    expect(pve.gate.inFlight).toBe(4);
    pve.gate.release();
    const assets = await run;
    expect(assets.map((a) => [a.name, a.status, a.products])).toEqual([
      ['cluster/pve1', 'ok', { 'proxmox-ve': '9.1.4' }],
      ...[101, 102, 103, 104, 105, 106].map((id) => [`cluster/vm-${id}-vm${id}`, 'ok', { debian: '12' }]),
    ]);
    expect(pve.gate.maxInFlight).toBe(4);
    // A pool of keep-alive connections, at most one per request open at once.
    expect(pve.connections - before).toBeLessThanOrEqual(4);
  });

  it('holds to a configured concurrency', async () => {
    pve.gate.hold = isAgent;
    const run = collectProxmox(pveSource({ concurrency: 2 }), inventoryFile(), 30_000);
    await until(() => pve.gate.held.length === 2);
    pve.gate.release();
    expect(await run).toHaveLength(7);
    expect(pve.gate.maxInFlight).toBe(2);
  });

  it('makes only the guest whose agent hangs unknown, at the request deadline', async () => {
    pve.gate.hold = (p) => p === '/api2/json/nodes/pve1/qemu/103/agent/get-osinfo';
    const assets = await collectProxmox(pveSource({ request_timeout: '2s' }), inventoryFile(), 30_000);
    expect(assets.map((a) => [a.name, a.status])).toEqual([
      ['cluster/pve1', 'ok'],
      ['cluster/vm-101-vm101', 'ok'],
      ['cluster/vm-102-vm102', 'ok'],
      ['cluster/vm-103-vm103', 'unknown'],
      ['cluster/vm-104-vm104', 'ok'],
      ['cluster/vm-105-vm105', 'ok'],
      ['cluster/vm-106-vm106', 'ok'],
    ]);
    // What its configuration says is kept; its OS, which only the agent knows, is not guessed.
    expect(assets[3]).toEqual({
      name: 'cluster/vm-103-vm103',
      source: 'cluster',
      products: {},
      facts: { node: 'pve1', ostype: 'l26' },
      status: 'unknown',
      error: `QEMU guest agent: ${pve.url}: timed out after 2000 ms`,
    });
    expect(assets[4]?.products).toEqual({ debian: '12' });
  });

  it("makes only a node unknown whose version request fails, and still reports the node's guests", async () => {
    pve.gate.hold = (p) => p === '/api2/json/nodes/pve1/version';
    const assets = await collectProxmox(pveSource({ request_timeout: '2s' }), inventoryFile(), 30_000);
    expect(assets[0]).toEqual({
      name: 'cluster/pve1',
      source: 'cluster',
      products: {},
      facts: {},
      status: 'unknown',
      error: `${pve.url}: timed out after 2000 ms`,
    });
    expect(assets.slice(1).map((a) => [a.status, a.products])).toEqual(
      Array.from({ length: 6 }, () => ['ok', { debian: '12' }]),
    );
  });
});

describe('Nextcloud API: bounded concurrency', () => {
  it("asks for slow apps' info side by side, at most four at once by default", async () => {
    cloud.gate.hold = isAppInfo;
    const before = cloud.connections;
    const run = collectNextcloudApi(cloudSource(), inventoryFile(), 30_000);
    await until(() => cloud.gate.held.length === 4);
    expect(cloud.gate.inFlight).toBe(4);
    cloud.gate.release();
    const [asset] = await run;
    expect(asset?.status).toBe('ok');
    expect(Object.keys(asset?.products ?? {})).toHaveLength(11);
    expect(asset?.products['nextcloud-app-app9']).toBe('1.9.0');
    expect(cloud.gate.maxInFlight).toBe(4);
    expect(cloud.connections - before).toBeLessThanOrEqual(4);
  });

  it('holds to a configured concurrency, down to one request at a time', async () => {
    for (const concurrency of [3, 1]) {
      cloud.gate.hold = isAppInfo;
      cloud.gate.maxInFlight = 0;
      const run = collectNextcloudApi(cloudSource({ concurrency }), inventoryFile(), 30_000);
      await until(() => cloud.gate.held.length === concurrency);
      cloud.gate.release();
      expect((await run)[0]?.status).toBe('ok');
      expect(cloud.gate.maxInFlight).toBe(concurrency);
    }
  });

  it('reports an app whose info fails or hangs at version unknown, and the rest of the server as usual', async () => {
    cloud.failingInfo = ['app2'];
    cloud.gate.hold = (p) => p.startsWith('/ocs/v2.php/cloud/apps/app7?');
    const [asset] = await collectNextcloudApi(
      cloudSource({ request_timeout: '2s' }),
      inventoryFile(),
      30_000,
    );
    expect(asset?.status).toBe('ok');
    expect(asset?.products).toMatchObject({
      nextcloud: '32.0.3',
      'nextcloud-app-app1': '1.1.0',
      'nextcloud-app-app2': 'unknown',
      'nextcloud-app-app7': 'unknown',
      'nextcloud-app-app8': '1.8.0',
    });
  });
});

describe('the source deadline over parts that degrade', () => {
  it('still fails the Proxmox collection when it ends while guest agents are open', async () => {
    pve.gate.hold = isAgent;
    const deadline = new AbortController();
    const run = collectProxmox(pveSource(), inventoryFile(), 30_000, deadline.signal);
    run.catch(() => undefined);
    await until(() => pve.gate.held.length === 4);
    deadline.abort();
    // Not six guests reported unknown: the collection is over, and the source fails.
    await expect(run).rejects.toThrow(`${pve.url}: stopped at the source's deadline`);
  });

  it("still fails the Proxmox collection when it ends while a node's version is open", async () => {
    const bare = await startProxmoxFake([{ node: 'bare', status: 'online', version: '9.1.4' }]);
    writeFileSync(path.join(dir, 'bare.secret'), bare.secret);
    try {
      bare.gate.hold = (p) => p.endsWith('/version');
      const deadline = new AbortController();
      const run = collectProxmox(
        proxmoxSource(bare, { token_secret_file: 'bare.secret' }),
        inventoryFile(),
        30_000,
        deadline.signal,
      );
      run.catch(() => undefined);
      await until(() => bare.gate.held.length === 1);
      deadline.abort();
      await expect(run).rejects.toThrow(`${bare.url}: stopped at the source's deadline`);
    } finally {
      bare.gate.release();
      await bare.close();
    }
  });
});
