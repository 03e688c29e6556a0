import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectNextcloud } from '../../src/inventory/adapters/nextcloud.ts';
import { collectNextcloudApi } from '../../src/inventory/adapters/nextcloud-api.ts';
import { collectInventory } from '../../src/inventory/collect.ts';
import { type NextcloudApiSource, parseInventoryFile } from '../../src/inventory/config.ts';
import {
  type NextcloudFake,
  type NextcloudState,
  nextcloudApiSource,
  startNextcloudFake,
} from '../support/nextcloud-fake.ts';
import { writeOcc } from '../support/occ-fake.ts';

// Deadlines of 30 s where an answer is expected: far from what a local fake takes, even on
// a loaded machine. Short ones only where the deadline itself is tested.

/**
 * The `nextcloud-api` source against a fake Nextcloud that replays the documented
 * status.php and OCS provisioning API payloads over TLS, fed the same server state as the
 * fake `occ`: both sources must make the same asset of one server.
 */
const state: NextcloudState = {
  status: {
    installed: true,
    version: '31.0.9.1',
    versionstring: '31.0.9',
    edition: '',
    maintenance: false,
    needsDbUpgrade: true,
    productname: 'Nextcloud',
    extendedSupport: false,
  },
  apps: {
    enabled: {
      activity: '4.0.0',
      calendar: '5.5.4',
      dav: '1.33.0',
      files_pdfviewer: '4.0.0',
      richdocuments: '8.7.3',
      twofactor_totp: '13.0.0',
      user_ldap: '1.22.0',
    },
    disabled: { firstrunwizard: null, weather_status: null },
  },
};

let cloud: NextcloudFake;
let dir: string;

beforeAll(async () => {
  cloud = await startNextcloudFake(state);
  dir = mkdtempSync(path.join(tmpdir(), 'nextcloud-api-'));
  writeFileSync(path.join(dir, 'nextcloud.secret'), `${cloud.appPassword}\n`);
  writeFileSync(path.join(dir, 'alice.secret'), cloud.userPassword);
  writeFileSync(path.join(dir, 'wrong.secret'), 'not-the-app-password');
  writeFileSync(path.join(dir, 'cloud.pem'), cloud.cert);
});
afterAll(async () => {
  await cloud?.close();
});

const inventoryFile = () => path.join(dir, 'inventory.yaml');
const api = (extra: Partial<NextcloudApiSource> = {}) => nextcloudApiSource(cloud, 'nextcloud.secret', extra);

describe('Nextcloud over its OCS API', () => {
  it('yields the same asset as occ for the same server', async () => {
    cloud.mode = 'normal';
    const extra = { products: { php: '8.3.20' }, facts: { site: 'office' } };
    const byApi = await collectNextcloudApi(api(extra), inventoryFile(), 30_000);
    const byOcc = await collectNextcloud(
      {
        type: 'nextcloud',
        name: 'cloud',
        command: [writeOcc(dir, 'normal', state.status, state.apps)],
        ...extra,
      },
      30_000,
    );
    expect(byApi).toEqual(byOcc);
    expect(byApi).toEqual([
      {
        name: 'cloud',
        source: 'cloud',
        products: {
          php: '8.3.20',
          nextcloud: '31.0.9',
          'nextcloud-app-activity': '4.0.0',
          'nextcloud-app-calendar': '5.5.4',
          'nextcloud-app-dav': '1.33.0',
          'nextcloud-app-files-pdfviewer': '4.0.0',
          'nextcloud-app-richdocuments': '8.7.3',
          'nextcloud-app-twofactor-totp': '13.0.0',
          'nextcloud-app-user-ldap': '1.22.0',
        },
        facts: { site: 'office', maintenance: 'false', needs_db_upgrade: 'true' },
        status: 'ok',
      },
    ]);
  });

  it('asks as the documentation says, one request at a time on one kept-alive TLS connection with concurrency 1', async () => {
    cloud.mode = 'normal';
    cloud.seen.length = 0;
    const before = cloud.connections;
    await collectNextcloudApi(api({ url: `${cloud.url}/`, concurrency: 1 }), inventoryFile(), 30_000);
    expect(cloud.seen.map((s) => s.path)).toEqual([
      '/status.php',
      '/ocs/v2.php/cloud/apps?filter=enabled&format=json',
      ...Object.keys(state.apps.enabled).map((id) => `/ocs/v2.php/cloud/apps/${id}?format=json`),
    ]);
    const basic = `Basic ${Buffer.from(`${cloud.admin}:${cloud.appPassword}`).toString('base64')}`;
    for (const seen of cloud.seen.slice(1))
      expect(seen).toMatchObject({ authorization: basic, ocsApiRequest: 'true' });
    expect(cloud.connections - before).toBe(1);
  });

  it('asks for the apps side by side over at most four kept-alive connections by default', async () => {
    cloud.mode = 'normal';
    cloud.seen.length = 0;
    const before = cloud.connections;
    await collectNextcloudApi(api(), inventoryFile(), 30_000);
    expect(cloud.seen.map((s) => s.path).sort()).toEqual(
      [
        '/status.php',
        '/ocs/v2.php/cloud/apps?filter=enabled&format=json',
        ...Object.keys(state.apps.enabled).map((id) => `/ocs/v2.php/cloud/apps/${id}?format=json`),
      ].sort(),
    );
    expect(cloud.connections - before).toBeGreaterThanOrEqual(1);
    expect(cloud.connections - before).toBeLessThanOrEqual(4);
  });

  it('leaves out an enabled app whose info the server cannot find', async () => {
    cloud.mode = 'normal';
    cloud.listedWithoutInfo = ['removed_app'];
    try {
      const [asset] = await collectNextcloudApi(api(), inventoryFile(), 30_000);
      expect(cloud.seen.map((s) => s.path)).toContain('/ocs/v2.php/cloud/apps/removed_app?format=json');
      expect(Object.keys(asset?.products ?? {})).toHaveLength(8);
      expect(asset?.products).not.toHaveProperty('nextcloud-app-removed-app');
    } finally {
      cloud.listedWithoutInfo = [];
    }
  });

  it('trusts the host by its CA file as well as by its pinned fingerprint, and nothing else', async () => {
    cloud.mode = 'normal';
    const byCa = await collectNextcloudApi(
      api({ fingerprint: undefined, ca_file: 'cloud.pem' }),
      inventoryFile(),
      30_000,
    );
    expect(byCa[0]?.products.nextcloud).toBe('31.0.9');
    await expect(
      collectNextcloudApi(api({ fingerprint: undefined }), inventoryFile(), 30_000),
    ).rejects.toThrow(/self.signed/i);
  });

  it('says which source was refused, and why, for a wrong password or a user who is no admin', async () => {
    cloud.mode = 'normal';
    const appsUrl = `${cloud.url}/ocs/v2.php/cloud/apps?filter=enabled&format=json`;
    await expect(
      collectNextcloudApi(api({ app_password_file: 'wrong.secret' }), inventoryFile(), 30_000),
    ).rejects.toThrow(
      `cloud: ${appsUrl} answered HTTP 401: user advisory-admin or its app password was refused`,
    );
    await expect(
      collectNextcloudApi(api({ user: 'alice', app_password_file: 'alice.secret' }), inventoryFile(), 30_000),
    ).rejects.toThrow(
      `cloud: ${appsUrl} answered HTTP 403: user alice is not an admin (the apps API needs one)`,
    );
    writeFileSync(path.join(dir, 'blank.secret'), '  \n');
    await expect(
      collectNextcloudApi(api({ app_password_file: 'blank.secret' }), inventoryFile(), 30_000),
    ).rejects.toThrow('blank.secret: not an app password');
  });

  it('holds its caps against garbage, oversized and slow answers, and reports maintenance', async () => {
    const expectations: [NextcloudFake['mode'], string | RegExp][] = [
      ['garbage', `${cloud.url}/status.php: the answer is not JSON`],
      ['oversized', `${cloud.url}/status.php: answer larger than 4194304 bytes`],
      ['not-ocs', `cloud: ${cloud.url}/ocs/v2.php/cloud/apps?filter=enabled&format=json: not an OCS answer`],
      ['maintenance', `${cloud.url}/ocs/v2.php/cloud/apps?filter=enabled&format=json answered HTTP 503`],
      ['slow', `${cloud.url}: timed out after 400 ms`],
    ];
    for (const [mode, message] of expectations) {
      cloud.mode = mode;
      // A short deadline for the slow server only: 5 MiB over TLS may take a while on a busy machine.
      await expect(
        collectNextcloudApi(api(), inventoryFile(), mode === 'slow' ? 400 : 30_000),
      ).rejects.toThrow(message);
    }
    cloud.mode = 'normal';
  });

  it('fails with the reason when the host cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(
      collectNextcloudApi(api({ url: `https://127.0.0.1:${port}` }), inventoryFile(), 30_000),
    ).rejects.toThrow(`https://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
  });
});

describe('the nextcloud-api source in the inventory file', () => {
  it('is collected like any other source', async () => {
    cloud.mode = 'normal';
    const file = path.join(dir, 'api.yaml');
    writeFileSync(
      file,
      [
        'sources:',
        '  - type: nextcloud-api',
        '    name: cloud',
        `    url: "${cloud.url}"`,
        `    user: ${cloud.admin}`,
        '    app_password_file: nextcloud.secret',
        `    fingerprint: "${cloud.fingerprint}"`,
        '    timeout: 10s',
      ].join('\n'),
    );
    const { assets, sources } = await collectInventory(
      file,
      parseInventoryFile(readFileSync(file, 'utf8'), file),
    );
    expect(assets.map((a) => [a.name, a.status, a.products.nextcloud])).toEqual([['cloud', 'ok', '31.0.9']]);
    expect(sources.map((s) => [s.name, s.type, s.ok, s.assets])).toEqual([
      ['cloud', 'nextcloud-api', true, 1],
    ]);
  });

  it('is refused with the reason when it is incomplete or insecure', () => {
    const refuse = (text: string) => {
      try {
        parseInventoryFile(text, 'inv.yaml');
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    const base = 'sources:\n  - { type: nextcloud-api, name: c, user: admin, app_password_file: s';
    expect(refuse(`${base}, url: "http://cloud.lan" }\n`)).toMatch(
      /^inv\.yaml: \/sources\/0: \/url must match/,
    );
    expect(refuse(`${base}, url: "https://cloud.lan", app_password: hunter2 }\n`)).toMatch(
      /^inv\.yaml: \/sources\/0: .*app_password/,
    );
    expect(
      refuse(`${base}, url: "https://cloud.lan", ca_file: c, fingerprint: "${'AB:'.repeat(31)}AB" }\n`),
    ).toBe('inv.yaml: /sources/0: give ca_file or fingerprint, not both');
    expect(
      refuse(
        'sources:\n  - { type: nextcloud-api, name: c, user: "a:b", app_password_file: s, url: "https://c" }\n',
      ),
    ).toMatch(/\/user must match/);
  });
});
