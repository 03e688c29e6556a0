import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Appliance } from '../../src/appliance/appliance.ts';
import { dashboardSource } from '../../src/cli/advisory/run.ts';
import { keyId, parsePublicKey } from '../../src/crypto/signify.ts';
import { buildDashboard, type DashboardSource } from '../../src/dashboard/server.ts';
import type { AssetEvaluation } from '../../src/evaluation/verdicts.ts';
import { Clock, openTest } from './appliance.ts';

/**
 * The dashboard of an appliance that has done real work: the shipped sample feed and the
 * demo inventory, refreshed twice a day apart with one host upgraded between, so every
 * page has something to show (a verdict history among it).
 */
const root = path.resolve(import.meta.dirname, '../..');
export const sampleFeed = path.join(root, 'sample-feed');
const sampleManifestText = readFileSync(path.join(sampleFeed, 'manifest.yaml'), 'utf8');
const manifestField = (name: string) =>
  new RegExp(`^${name}: "([^"]+)"`, 'm').exec(sampleManifestText)?.[1] ?? '';
/**
 * What the committed sample's manifest says: tests compare with these instead of copies
 * of them, so rebuilding and re-signing the sample changes no test.
 */
export const sampleManifest = {
  version: manifestField('feed_version'),
  publishedAt: manifestField('published_at'),
  expiresAt: manifestField('expires_at'),
};
const samplePublished = new Date(sampleManifest.publishedAt);
/** An instant `ms` after the sample was published, as ISO text. */
export const afterSamplePublished = (ms: number): string =>
  new Date(samplePublished.getTime() + ms).toISOString();

export interface Demo {
  appliance: Appliance;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  trustedKeys: string[];
}

export async function demoAppliance(extraEnv: NodeJS.ProcessEnv = {}): Promise<Demo> {
  const dir = mkdtempSync(path.join(tmpdir(), 'dashboard-'));
  const inventory = path.join(dir, 'inventory.yaml');
  copyFileSync(path.join(root, 'examples/demo-inventory.yaml'), inventory);
  const env = {
    ADVISORY_FEED_URL: sampleFeed,
    ADVISORY_PUBLIC_KEYS: path.join(root, 'sample-feed.pub'),
    ADVISORY_INVENTORY: inventory,
    ADVISORY_STATE_DIR: path.join(dir, 'state'),
    ADVISORY_FEED_CACHE: path.join(dir, 'cache', 'feed'),
    ADVISORY_LOG_LEVEL: 'silent',
    ...extraEnv,
  };
  const clock = new Clock(new Date(samplePublished.getTime() + 3_600_000));
  const appliance = await openTest(env, clock);
  await appliance.refresh();
  // A day later, PHP on `cloud` was upgraded: its Nextcloud update is no longer blocked.
  clock.advance(86_400_000);
  writeFileSync(inventory, readFileSync(inventory, 'utf8').replace('php: "8.1.33"', 'php: "8.4.24"'));
  await appliance.refresh();
  const trustedKeys = [keyId(parsePublicKey(readFileSync(env.ADVISORY_PUBLIC_KEYS, 'utf8')).keynum)];
  return { appliance, stateDir: env.ADVISORY_STATE_DIR, env, clock, trustedKeys };
}

export interface Served {
  url: string;
  app: FastifyInstance;
  close(): Promise<void>;
}

export async function serve(
  source: DashboardSource,
  options: {
    credentials?: { user: string; password: string } | null;
    now?: () => Date;
    trustProxy?: false | string[];
    hosts?: string[];
    limits?: Parameters<typeof buildDashboard>[0]['limits'];
    metricsPublic?: boolean;
    log?: Parameters<typeof buildDashboard>[0]['log'];
  } = {},
): Promise<Served> {
  const app = await buildDashboard({
    source,
    credentials: options.credentials ?? null,
    version: '0.0.0-test',
    // The demo's time unless told otherwise: never the wall clock, which would make the
    // pages depend on the committed sample feed's expiry.
    now: options.now ?? (() => new Date(afterSamplePublished(2 * 86_400_000))),
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    ...(options.hosts ? { hosts: options.hosts } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.metricsPublic !== undefined ? { metricsPublic: options.metricsPublic } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    app,
    close: () => app.close(),
  };
}

export const demoSource = (demo: Demo): DashboardSource => dashboardSource(demo.appliance, demo.trustedKeys);

export { chromiumPath, launchChromium } from '../../../scripts/test-chromium.ts';

/**
 * References a feed should never carry, and one web link with hostile text in it: only
 * the last may become a link.
 */
export const hostileReferences = (hostile: string): string[] => [
  'javascript:alert(document.domain)',
  'data:text/html,<script>alert(4)</script>',
  'not a url at all',
  `https://example.org/advice?q="${hostile}`,
];

/**
 * The demo's dashboard with one asset whose name, advisory title, recommended version,
 * summary, references and CVE summary all come from `hostile` text (feed and inventory are outside input).
 */
export function hostileSource(
  demo: Demo,
  hostile: string,
  recommendedVersion = '9.2',
): { source: DashboardSource; evaluation: AssetEvaluation } {
  const evaluation: AssetEvaluation = {
    asset: `pve/${hostile}`,
    source: 'pve',
    status: 'ok',
    products: { 'proxmox-ve': '8.4.1' },
    verdict: 'eol',
    matches: [
      {
        advisoryId: 'X-1',
        title: hostile,
        product: 'proxmox-ve',
        installed: '8.4.1',
        verdict: 'eol',
        recommendedVersion,
        unmet: [],
        cves: [{ id: 'CVE-2026-0001', cvss: 9, summary: hostile }],
        summary: hostile,
        references: hostileReferences(hostile),
      },
    ],
    reminders: [],
    unreadable: [],
  };
  return {
    source: { ...demoSource(demo), status: { ...demo.appliance.status, evaluations: [evaluation] } },
    evaluation,
  };
}
