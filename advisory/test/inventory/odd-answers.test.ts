import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collectNextcloudApi } from '../../src/inventory/adapters/nextcloud-api.ts';
import { collectProxmox } from '../../src/inventory/adapters/proxmox.ts';
import { type NextcloudFake, nextcloudApiSource, startNextcloudFake } from '../support/nextcloud-fake.ts';
import { occStatus } from '../support/occ-fake.ts';
import {
  debian12OsInfo,
  type ProxmoxFake,
  proxmoxSource,
  startProxmoxFake,
} from '../support/proxmox-fake.ts';

/**
 * Answers of odd shape, one endpoint at a time (the fakes' `answers`): what names the assets
 * fails the source with the reason, what describes one part degrades that part, and what
 * comes from inside a guest is held to the asset rules.
 */
let pve: ProxmoxFake;
let cloud: NextcloudFake;
let dir: string;

const running = { kind: 'qemu' as const, status: 'running' as const, ostype: 'l26' };

beforeAll(async () => {
  pve = await startProxmoxFake([
    {
      node: 'n1',
      status: 'online',
      version: '9.1.4',
      guests: [
        {
          ...running,
          vmid: 130,
          name: '__web__01__',
          agent: 'type=virtio,enabled=1',
          osinfo: debian12OsInfo,
        },
        { ...running, vmid: 131, name: 'x'.repeat(150), agent: '10', osinfo: debian12OsInfo },
        { ...running, vmid: 132, name: 'b', agent: '01', osinfo: debian12OsInfo },
        { ...running, vmid: 133, name: 'c', agent: 'fstrim_cloned_disks=1', osinfo: debian12OsInfo },
        {
          ...running,
          vmid: 134,
          name: 'd',
          agent: '1',
          osinfo: { id: 'Debian_Like', 'version-id': ' 12 ', 'pretty-name': '  Debian  ' },
        },
        { ...running, vmid: 135, name: 'e', agent: '1', osinfo: { id: 'debian', 'version-id': '(x)12' } },
        {
          ...running,
          vmid: 136,
          name: 'f',
          agent: '1',
          osinfo: { id: 'debian', 'version-id': '12', 'pretty-name': '  ' },
        },
        { ...running, vmid: 137, name: 'g', agent: '1', osinfo: { id: 'debian', 'version-id': '12' } },
      ],
    },
  ]);
  cloud = await startNextcloudFake({
    status: occStatus,
    apps: { enabled: { a: '1.0.0', b: '2.0.0' }, disabled: {} },
  });
  dir = mkdtempSync(path.join(tmpdir(), 'inventory-odd-'));
  writeFileSync(path.join(dir, 'pve.secret'), pve.secret);
  writeFileSync(path.join(dir, 'blank.secret'), ' \n');
  writeFileSync(path.join(dir, 'cloud.secret'), cloud.appPassword);
});
afterAll(async () => {
  await pve?.close();
  await cloud?.close();
});
afterEach(() => {
  pve.answers = {};
  cloud.answers = {};
});

const file = () => path.join(dir, 'inventory.yaml');
const collect = () => collectProxmox(proxmoxSource(pve, { url: `${pve.url}//` }), file(), 30_000);
const at = '/api2/json/nodes/n1';

describe('Proxmox VE answers of odd shape', () => {
  it('reads what guests report, held to the asset rules', async () => {
    const assets = await collect();
    expect(assets.map((a) => [a.name, a.status, a.products, a.facts.os])).toEqual([
      ['cluster/n1', 'ok', { 'proxmox-ve': '9.1.4' }, undefined],
      // Agent enabled by `enabled=1` after another option.
      ['cluster/vm-130-web-01', 'ok', { debian: '12' }, 'Debian GNU/Linux 12 (bookworm)'],
      // Agent `10` and `01` are not flags: not asked. A long name is cut to 100 characters.
      [`cluster/vm-131-${'x'.repeat(100)}`, 'ok', {}, undefined],
      ['cluster/vm-132-b', 'ok', {}, undefined],
      // Options without `enabled`: not asked.
      ['cluster/vm-133-c', 'ok', {}, undefined],
      ['cluster/vm-134-d', 'ok', { 'debian-like': '12' }, 'Debian'],
      ['cluster/vm-135-e', 'ok', {}, undefined],
      ['cluster/vm-136-f', 'ok', { debian: '12' }, undefined],
      ['cluster/vm-137-g', 'ok', { debian: '12' }, undefined],
    ]);
    const asked = pve.seen.map((s) => s.path);
    for (const vmid of [131, 132, 133]) expect(asked).not.toContain(`${at}/qemu/${vmid}/agent/get-osinfo`);
  });

  it('degrades a guest whose configuration or agent answer is odd, and a node without a version', async () => {
    pve.answers = {
      [`${at}/version`]: { body: { data: {} } },
      [`${at}/qemu/130/config`]: { body: { data: null } },
      [`${at}/qemu/131/config`]: { body: { data: 'l26' } },
      [`${at}/qemu/132/config`]: { body: { data: { name: 'b' } } },
      [`${at}/qemu/133/config`]: { status: 500, body: { data: null } },
      [`${at}/qemu/134/agent/get-osinfo`]: { body: { data: {} } },
      [`${at}/qemu/135/agent/get-osinfo`]: { body: { data: { result: { id: 5, 'version-id': 12 } } } },
      [`${at}/qemu/136/agent/get-osinfo`]: { body: null },
    };
    const assets = await collect();
    const unknown = (name: string, facts: Record<string, string>, error: string) => ({
      name,
      source: 'cluster',
      products: {},
      facts,
      status: 'unknown',
      error,
    });
    expect(assets).toEqual([
      { ...unknown('cluster/n1', {}, `${pve.url}: node n1 gave no version`) },
      unknown('cluster/vm-130-web-01', { node: 'n1' }, `${at.slice(11)}/qemu/130/config: no configuration`),
      unknown(
        `cluster/vm-131-${'x'.repeat(100)}`,
        { node: 'n1' },
        `${at.slice(11)}/qemu/131/config: no configuration`,
      ),
      // No ostype in the configuration: none in the facts; no agent configured: not asked.
      { name: 'cluster/vm-132-b', source: 'cluster', products: {}, facts: { node: 'n1' }, status: 'ok' },
      unknown('cluster/vm-133-c', { node: 'n1' }, `${pve.url}${at}/qemu/133/config answered HTTP 500`),
      // The agent answered without a result, or with values that are no text: no OS.
      {
        name: 'cluster/vm-134-d',
        source: 'cluster',
        products: {},
        facts: { node: 'n1', ostype: 'l26' },
        status: 'ok',
      },
      {
        name: 'cluster/vm-135-e',
        source: 'cluster',
        products: {},
        facts: { node: 'n1', ostype: 'l26' },
        status: 'ok',
      },
      {
        name: 'cluster/vm-136-f',
        source: 'cluster',
        products: {},
        facts: { node: 'n1', ostype: 'l26' },
        status: 'ok',
      },
      {
        name: 'cluster/vm-137-g',
        source: 'cluster',
        products: { debian: '12' },
        facts: { node: 'n1', ostype: 'l26' },
        status: 'ok',
      },
    ]);
  });

  it('treats a node listed without a status as online, and reads guest lists of every documented shape', async () => {
    pve.answers = {
      '/api2/json/nodes': { body: { data: [{ node: 'n1' }] } },
      [`${at}/qemu`]: {
        body: {
          data: [
            { vmid: 140, name: 't1', template: '1' },
            { vmid: 141, name: 't2', template: true },
            { vmid: '142', name: 'strvmid', status: 'stopped' },
          ],
        },
      },
      [`${at}/lxc`]: { body: { data: [{ vmid: 200, name: 'ct', status: 'running', type: 'lxc' }] } },
      [`${at}/lxc/200/config`]: { body: { data: { ostype: 'debian', agent: '1' } } },
      [`${at}/qemu/142/config`]: { body: { data: { ostype: 'l26', agent: '1' } } },
    };
    const assets = await collect();
    expect(assets.map((a) => [a.name, a.status])).toEqual([
      ['cluster/n1', 'ok'],
      ['cluster/vm-142-strvmid', 'ok'],
      ['cluster/ct-200-ct', 'ok'],
    ]);
    // A container has no guest agent to ask, whatever its configuration says.
    expect(pve.seen.map((s) => s.path)).not.toContain(`${at}/lxc/200/agent/get-osinfo`);
  });

  it('fails the source when what names the assets is not of the documented shape', async () => {
    const fails: [Record<string, { body: unknown }>, string][] = [
      [
        { '/api2/json/nodes': { body: { data: [{ node: 'n1' }, { name: 'n2' }] } } },
        'not a Proxmox node list',
      ],
      [{ '/api2/json/nodes': { body: null } }, 'not a Proxmox node list'],
      [{ [`${at}/qemu`]: { body: { data: { vmid: 1 } } } }, `${at.slice(1)}/qemu: not a guest list`],
      [{ [`${at}/qemu`]: { body: null } }, `${at.slice(1)}/qemu: not a guest list`],
      [{ [`${at}/qemu`]: { body: { data: [{ vmid: 101 }, { vmid: 1.5 }] } } }, 'not a guest list'],
      [{ [`${at}/lxc`]: { body: { data: [{ vmid: 'ct-1' }] } } }, `${at.slice(1)}/lxc: not a guest list`],
      [{ [`${at}/lxc`]: { body: { data: [null] } } }, 'not a guest list'],
    ];
    for (const [answers, message] of fails) {
      pve.answers = answers;
      await expect(collect()).rejects.toThrow(message);
    }
    await expect(
      collectProxmox(proxmoxSource(pve, { token_secret_file: 'blank.secret' }), file(), 30_000),
    ).rejects.toThrow('blank.secret: not a token secret');
  });
});

describe('Nextcloud API answers of odd shape', () => {
  const collectCloud = () =>
    collectNextcloudApi(nextcloudApiSource(cloud, 'cloud.secret', { url: `${cloud.url}//` }), file(), 30_000);
  const list = '/ocs/v2.php/cloud/apps?filter=enabled&format=json';

  it('reads a list of apps with gaps, and leaves out an app whose info has no version', async () => {
    cloud.answers = {
      [list]: { body: { ocs: { data: { apps: { 0: 'a', 2: 'b' } } } } },
      '/ocs/v2.php/cloud/apps/b?format=json': { body: { ocs: { data: null } } },
    };
    const [asset] = await collectCloud();
    expect(asset?.products).toEqual({ nextcloud: '32.0.3', 'nextcloud-app-a': '1.0.0' });
  });

  it('fails the source when the status or the list of apps is not of the documented shape', async () => {
    const fails: [Record<string, { body: unknown }>, string][] = [
      [{ '/status.php': { body: { installed: true } } }, 'status.php: not the status of a Nextcloud'],
      [{ '/status.php': { body: { ...occStatus, installed: false } } }, 'cloud: Nextcloud is not installed'],
      [{ [list]: { body: { ocs: null } } }, `${list}: not an OCS answer`],
      [{ [list]: { body: null } }, `${list}: not an OCS answer`],
      [{ [list]: { body: { ocs: { data: null } } } }, 'cloud/apps: not a list of apps'],
      [{ [list]: { body: { ocs: { data: { apps: ['a', 1] } } } } }, 'cloud/apps: not a list of apps'],
      [{ [list]: { body: { ocs: { data: { apps: [1, 2] } } } } }, 'cloud/apps: not a list of apps'],
    ];
    for (const [answers, message] of fails) {
      cloud.answers = answers;
      await expect(collectCloud()).rejects.toThrow(message);
    }
  });
});
