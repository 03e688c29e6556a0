import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach } from 'vitest';
import type { Appliance } from '../../src/appliance/appliance.ts';
import { openAppliance } from '../../src/appliance/open.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../src/feed/format/rules.ts';
import { advisoryYaml, makeFeed, type TestFeed, type TestKey } from './feed.ts';

/**
 * An appliance's surroundings for tests: a feed directory (the "live" feed, or what an
 * HTTP server serves), its public key, an inventory, a state directory, and the
 * environment that names them.
 */
export interface Setup {
  dir: string;
  feedDir: string;
  key: TestKey;
  keyFile: string;
  inventoryFile: string;
  stateDir: string;
  cacheDir: string;
  env: NodeJS.ProcessEnv;
}

/** Advisories for product `widget`: 1.x is end of life, 2.0 to 2.4 should install 2.5. */
export const widgetAdvisories = {
  'widgets/eol.yaml': advisoryYaml({
    id: 'W-EOL-1',
    title: 'Widget 1 is end of life',
    affects: '"<2.0.0"',
    verdict: 'eol',
    recommended_version: '"2.5"',
    effective: '2020-01-01',
    expires: '2099-01-01',
  }),
  'widgets/install.yaml': advisoryYaml({
    id: 'W-2.5',
    title: 'Widget 2.5',
    affects: '">=2.0.0 <2.5.0"',
    verdict: 'install',
    recommended_version: '"2.5"',
    effective: '2020-01-01',
    expires: '2099-01-01',
    cves: '\n  - id: CVE-2026-0001\n    cvss: 7.5',
  }),
};

/** A later advisory that puts widget 2.5 (the recommended version) on hold. */
export const holdWidget25 = (id: string): string =>
  advisoryYaml({
    id,
    affects: '"2.5.0"',
    verdict: 'hold',
    effective: '2020-01-01',
    expires: '2099-01-01',
    recommended_version: undefined,
  });

/**
 * Builds `files` as the feed of `setup.feedDir` (replacing what was there), published `at`,
 * as version `feedVersion` (default: the date of `at`).
 */
export function publish(
  setup: Pick<Setup, 'feedDir' | 'key'>,
  files: Record<string, string>,
  at: Date,
  feedVersion?: string,
): TestFeed {
  const built = makeFeed(files, {
    key: setup.key,
    now: at,
    expiresInMs: 300 * 86_400_000,
    ...(feedVersion ? { feedVersion } : {}),
  });
  rmSync(setup.feedDir, { recursive: true, force: true });
  cpSync(built.dir, setup.feedDir, { recursive: true });
  return { dir: setup.feedDir, key: setup.key };
}

export function setup(options: {
  publishedAt: Date;
  assets?: string;
  files?: Record<string, string>;
}): Setup {
  const dir = mkdtempSync(path.join(tmpdir(), 'appliance-'));
  const feedDir = path.join(dir, 'feed');
  const first = makeFeed(options.files ?? widgetAdvisories, {
    now: options.publishedAt,
    expiresInMs: 300 * 86_400_000,
  });
  cpSync(first.dir, feedDir, { recursive: true });
  const keyFile = path.join(dir, 'feed.pub');
  writeFileSync(keyFile, first.key.publicText);
  const inventoryFile = path.join(dir, 'inventory.yaml');
  writeFileSync(
    inventoryFile,
    options.assets ??
      'assets:\n  - { name: old-box, products: { widget: "1.9" } }\n  - { name: new-box, products: { widget: "2.1" } }\n  - { name: done-box, products: { widget: "2.5" } }\n',
  );
  const stateDir = path.join(dir, 'state');
  const cacheDir = path.join(dir, 'cache', 'feed');
  mkdirSync(path.dirname(cacheDir), { recursive: true });
  return {
    dir,
    feedDir,
    key: first.key,
    keyFile,
    inventoryFile,
    stateDir,
    cacheDir,
    env: {
      ADVISORY_FEED_URL: feedDir,
      ADVISORY_PUBLIC_KEYS: keyFile,
      ADVISORY_INVENTORY: inventoryFile,
      ADVISORY_STATE_DIR: stateDir,
      ADVISORY_FEED_CACHE: cacheDir,
      ADVISORY_LOG_LEVEL: 'silent',
    },
  };
}

/** A settable clock for the appliance and its outbox. */
export class Clock {
  constructor(public time: Date) {}
  now = () => this.time;
  advance(ms: number): void {
    this.time = new Date(this.time.getTime() + ms);
  }
}

/** A pino logger whose lines a test reads: operators act on these messages. */
export function capturingLogger() {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines, messages: () => lines.map((l) => l.msg) };
}

/**
 * The appliances a test file opens, each stopped after its test: `start` opens one on a
 * settable clock (an hour after `published` unless given) with a log the test reads.
 */
export function appliances(published: Date) {
  const open: Appliance[] = [];
  afterEach(async () => {
    for (const appliance of open.splice(0)) await appliance.stop();
  });
  async function start(env: NodeJS.ProcessEnv, clock = new Clock(new Date(published.getTime() + 3_600_000))) {
    const log = capturingLogger();
    const appliance = await openTest(env, clock, log.logger);
    open.push(appliance);
    return { appliance, clock, log };
  }
  /** Stops one before its test ends (a restart follows). */
  async function stop(appliance: Appliance): Promise<void> {
    await appliance.stop();
    open.splice(open.indexOf(appliance), 1);
  }
  return { open, start, stop };
}

export async function openTest(
  env: NodeJS.ProcessEnv,
  clock?: Clock,
  logger?: pino.Logger,
): Promise<Appliance> {
  const { appliance } = await openAppliance({
    env,
    logger: logger ?? pino({ level: 'silent' }),
    ...(clock ? { now: clock.now } : {}),
  });
  return appliance;
}

/**
 * A static file server for a feed directory, as a web server or mirror serves one: ETag
 * and Last-Modified, 304 to a matching conditional request. It counts requests and can
 * misbehave: redirect in a loop, never answer, or stream a manifest without end.
 */
export interface FeedServer {
  url: string;
  requests: { path: string; status: number }[];
  mode:
    | 'normal'
    | 'redirect-loop'
    | 'redirect-once'
    | 'slow'
    | 'slow-files'
    | 'endless'
    | 'down'
    /** 304 Not Modified to every request, conditional or not (a broken host or proxy). */
    | 'always-304';
  /** Mixed into every ETag: another mirror behind the same name tags the same files otherwise. */
  etagSalt: string;
  close(): Promise<void>;
}

export async function startFeedServer(root: string): Promise<FeedServer> {
  const state = {
    requests: [] as FeedServer['requests'],
    mode: 'normal' as FeedServer['mode'],
    etagSalt: '',
  };
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const record = (status: number) => state.requests.push({ path: url.pathname, status });
    if (state.mode === 'down') {
      record(503);
      return response.writeHead(503).end();
    }
    if (state.mode === 'slow') return record(0);
    if (state.mode === 'always-304') {
      record(304);
      return response.writeHead(304).end();
    }
    if (state.mode === 'redirect-loop') {
      record(302);
      return response.writeHead(302, { location: `${url.pathname}?again=${Date.now()}` }).end();
    }
    if (state.mode === 'redirect-once' && !url.pathname.startsWith('/moved/')) {
      record(301);
      return response.writeHead(301, { location: `/moved${url.pathname}` }).end();
    }
    const relative = decodeURIComponent(
      url.pathname.replace(/^\/moved\//, '/').replace(/^\/feed\//, '/'),
    ).slice(1);
    if (state.mode === 'endless' && relative === 'manifest.yaml') {
      record(200);
      response.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 0x23);
      const pump = () => {
        while (response.write(chunk)) {
          if (response.destroyed) return;
        }
        response.once('drain', pump);
      };
      response.on('close', () => response.removeAllListeners('drain'));
      return pump();
    }
    if (state.mode === 'slow-files' && relative !== MANIFEST_FILE && relative !== SIGNATURE_FILE) {
      // Each file in time for its own deadline, the whole pull not.
      return void setTimeout(serveFile, 1_500);
    }
    serveFile();
    function serveFile() {
      const file = path.join(root, relative);
      if (!file.startsWith(root) || relative.includes('..')) {
        record(404);
        return response.writeHead(404).end();
      }
      let data: Buffer;
      try {
        if (!statSync(file).isFile()) throw new Error('not a file');
        data = readFileSync(file);
      } catch {
        record(404);
        return response.writeHead(404).end();
      }
      const etag = `"${state.etagSalt}${createHash('sha256').update(data).digest('hex').slice(0, 16)}"`;
      const modified = statSync(file).mtime.toUTCString();
      if (request.headers['if-none-match'] === etag) {
        record(304);
        return response.writeHead(304, { etag, 'last-modified': modified }).end();
      }
      record(200);
      response.writeHead(200, { etag, 'last-modified': modified, 'content-length': data.length }).end(data);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
