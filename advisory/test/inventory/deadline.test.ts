import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import { collectNextcloud } from '../../src/inventory/adapters/nextcloud.ts';
import { collectNextcloudApi } from '../../src/inventory/adapters/nextcloud-api.ts';
import { collectProxmox } from '../../src/inventory/adapters/proxmox.ts';
import { collectInventory } from '../../src/inventory/collect.ts';
import { parseInventoryFile } from '../../src/inventory/config.ts';
import { type NextcloudFake, nextcloudApiSource, startNextcloudFake } from '../support/nextcloud-fake.ts';
import { grandchildGone, occStatus, writeOcc } from '../support/occ-fake.ts';
import {
  type FakeGuest,
  type ProxmoxFake,
  proxmoxSource,
  startProxmoxFake,
} from '../support/proxmox-fake.ts';

/**
 * A source's deadline ends its work, not only the wait for it: a Nextcloud with many apps
 * and a Proxmox cluster with many guests, whose answers never come (each request ending at
 * its own, shorter deadline, the work going on side by side), must receive no request once
 * the source's deadline has passed, and their connections must be closed; an `occ` run is
 * killed.
 */
let cloud: NextcloudFake;
let pve: ProxmoxFake;
let dir: string;

const manyGuests = (first: number): FakeGuest[] =>
  Array.from({ length: 30 }, (_, i) => ({
    vmid: first + i,
    kind: 'lxc',
    name: `ct${first + i}`,
    status: 'running',
    ostype: 'debian',
  }));

beforeAll(async () => {
  const enabled = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`app${i}`, `1.${i}.0`]));
  cloud = await startNextcloudFake({ status: occStatus, apps: { enabled, disabled: {} } });
  pve = await startProxmoxFake([
    { node: 'pve1', status: 'online', version: '9.1.4', guests: manyGuests(100) },
    { node: 'pve2', status: 'online', version: '9.1.4', guests: manyGuests(200) },
  ]);
  dir = mkdtempSync(path.join(tmpdir(), 'inventory-deadline-'));
  writeFileSync(path.join(dir, 'cloud.secret'), cloud.appPassword);
  writeFileSync(path.join(dir, 'pve.secret'), pve.secret);
});
afterAll(async () => {
  await cloud?.close();
  await pve?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits (at most 4 s) until every connection to the fake is closed. A bound the test needs:
 * the server's own keep-alive timeout (5 s) would close a connection the adapter left open,
 * so only a wait shorter than that tells the adapter closed it; twice an idle machine's
 * need at the least.
 */
async function allClosed(fake: { open: number }): Promise<number> {
  for (let i = 0; i < 200 && fake.open > 0; i++) await sleep(20);
  return fake.open;
}

const inventoryFile = () => path.join(dir, 'inventory.yaml');

describe("a source's deadline", () => {
  it('stops a slow Nextcloud and Proxmox at once: no request after it, connections closed', async () => {
    // The apps' info and the guests' configurations never answer: each request ends at its
    // own deadline (the 1 s timeout), four at a time, and the next ones are asked.
    cloud.gate.hold = (p) => p.startsWith('/ocs/v2.php/cloud/apps/');
    pve.gate.hold = (p) => p.endsWith('/config');
    cloud.seen.length = 0;
    pve.seen.length = 0;
    const file = inventoryFile();
    writeFileSync(
      file,
      [
        'sources:',
        `  - { type: nextcloud-api, name: cloud, url: "${cloud.url}", user: ${cloud.admin}, app_password_file: cloud.secret, fingerprint: "${cloud.fingerprint}", timeout: 1s }`,
        `  - { type: proxmox, name: cluster, url: "${pve.url}", token_id: "${pve.tokenId}", token_secret_file: pve.secret, fingerprint: "${pve.fingerprint}", timeout: 1s }`,
      ].join('\n'),
    );
    // The source's deadline is the 1 s timeout plus 5 s; 80 apps or 60 guests, four at a
    // time, each ending at the 1 s request deadline, take 15 s at the least (more on a
    // loaded machine): the sources fail at their deadline, and no request follows.
    const { assets, sources } = await collectInventory(
      file,
      parseInventoryFile(readFileSync(file, 'utf8'), file),
    );
    expect(sources.map((s) => [s.name, s.ok, s.error])).toEqual([
      ['cloud', false, 'no answer within 6000 ms'],
      ['cluster', false, 'no answer within 6000 ms'],
    ]);
    expect(assets.map((a) => [a.name, a.status])).toEqual([
      ['cloud', 'unknown'],
      ['cluster', 'unknown'],
    ]);
    const asked = { cloud: cloud.seen.length, cluster: pve.seen.length };
    expect(asked.cloud).toBeGreaterThan(5);
    expect(asked.cluster).toBeGreaterThan(5);
    expect(await allClosed(cloud)).toBe(0);
    expect(await allClosed(pve)).toBe(0);
    // A wait for what must not happen (a request after the deadline): a slower machine can
    // only make it weaker, never fail it wrongly. So are the two below.
    await sleep(1000);
    expect({ cloud: cloud.seen.length, cluster: pve.seen.length }).toEqual(asked);
    cloud.gate.release();
    pve.gate.release();
  });

  it('ends the Nextcloud API adapter when its signal aborts, whatever is left of each request', async () => {
    cloud.gate.hold = (p) => p.startsWith('/ocs/v2.php/cloud/apps/');
    cloud.seen.length = 0;
    const deadline = new AbortController();
    const run = collectNextcloudApi(
      nextcloudApiSource(cloud, 'cloud.secret'),
      inventoryFile(),
      30_000,
      deadline.signal,
    );
    run.catch(() => undefined);
    // Aborted while four requests are open and the other apps wait for a place.
    await until(() => cloud.gate.held.length === 4);
    deadline.abort();
    await expect(run).rejects.toThrow(`${cloud.url}: stopped at the source's deadline`);
    const asked = cloud.seen.length;
    expect(await allClosed(cloud)).toBe(0);
    await sleep(500);
    expect(cloud.seen.length).toBe(asked);
    cloud.gate.release();
  });

  it('ends the Proxmox adapter when its signal aborts, rather than reporting the rest unknown', async () => {
    pve.gate.hold = (p) => p.endsWith('/config');
    pve.seen.length = 0;
    const deadline = new AbortController();
    const run = collectProxmox(proxmoxSource(pve), inventoryFile(), 30_000, deadline.signal);
    run.catch(() => undefined);
    await until(() => pve.gate.held.length === 4);
    deadline.abort();
    await expect(run).rejects.toThrow(`${pve.url}: stopped at the source's deadline`);
    const asked = pve.seen.length;
    expect(await allClosed(pve)).toBe(0);
    await sleep(500);
    expect(pve.seen.length).toBe(asked);
    pve.gate.release();
  });

  it('kills occ and everything it started when the signal aborts, before its own deadline', async () => {
    const script = writeOcc(dir, 'slow-grandchild');
    // Aborted once the grandchild is there (the event), not after a guess at how long a node
    // process takes to start it.
    const deadline = new AbortController();
    const run = collectNextcloud(
      { type: 'nextcloud', name: 'cloud', command: [script] },
      30_000,
      deadline.signal,
    );
    run.catch(() => undefined);
    await until(() => existsSync(`${script}.grandchild-pid`));
    deadline.abort();
    await expect(run).rejects.toThrow(`${script} status --output=json: stopped at the source's deadline`);
    expect(await grandchildGone(script)).toBe(true);
  });

  it('ends a run whose output a process outside its group holds open (php under sudo, in its own session)', async () => {
    const script = path.join(dir, 'occ-detached');
    const pidFile = path.join(dir, 'occ-detached.pid');
    // setsid: a session of its own, as sudo's use_pty gives the command it runs; it keeps
    // the run's stdout and stderr open, and the group's signals do not reach it.
    writeFileSync(script, `#!/bin/sh\nsetsid sleep 30 &\necho $! > "${pidFile}"\nsleep 30\n`, {
      mode: 0o755,
    });
    try {
      await expect(
        collectNextcloud(
          { type: 'nextcloud', name: 'cloud', command: [script] },
          30_000,
          AbortSignal.timeout(300),
        ),
      ).rejects.toThrow(`${script} status --output=json: stopped at the source's deadline`);
    } finally {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    }
  });

  it('starts no occ run once the signal has aborted', async () => {
    const marker = path.join(dir, 'occ-ran');
    const script = path.join(dir, 'occ-marker');
    writeFileSync(script, `#!/bin/sh\ntouch "${marker}"\necho '{}'\n`, { mode: 0o755 });
    await expect(
      collectNextcloud({ type: 'nextcloud', name: 'cloud', command: [script] }, 5000, AbortSignal.abort()),
    ).rejects.toThrow(`${script} status --output=json: stopped at the source's deadline`);
    expect(() => readFileSync(marker)).toThrow(/ENOENT/);
  });
});
