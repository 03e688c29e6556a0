import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { until, watchOutput } from '../../../scripts/test-wait.ts';
import { PROCESS_START_MS } from '../support/api-process.ts';
import { freePort } from '../support/pg-cluster.ts';

/**
 * `npm start` as a user runs it, with real processes: the banner appears only once both
 * servers it started answer (the scheduler and the advisory appliance on its demo feed),
 * a failing server ends it at once with that server's exit code, and a signal to the npm
 * process alone stops everything and frees the ports.
 */
const root = path.resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);
// Real processes start PGlite and load the gazetteer; a test runs npm start (both servers
// at once) up to twice, one after the other.
vi.setConfig({ testTimeout: 3 * PROCESS_START_MS });

interface Started {
  npm: ChildProcess;
  output: () => string;
  /** Resolves once the banner's last line (the dashboard login) is printed. */
  banner: () => Promise<unknown>;
  exited: Promise<number | null>;
}

const BANNER = /Dashboard login (\S+) \/ (\S+)/;

/** npm processes started by a test; their whole process groups are killed after it. */
const groups = new Set<number>();
afterEach(() => {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
  groups.clear();
});

// One demo folder for the whole file: the first `npm start` makes the key, feed and
// credentials, every later one reuses them (as a user's second `npm start` does).
const demoDir = mkdtempSync(path.join(tmpdir(), 'npm-start-demo-'));

async function npmStart(env: Record<string, string | undefined>): Promise<Started> {
  const npm = spawn('npm', ['start'], {
    cwd: root,
    env: {
      ...process.env,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'npm-start-')),
      ADVISORY_DEMO_DIR: demoDir,
      ADVISORY_LISTEN: `127.0.0.1:${await freePort()}`,
      // The demo week costs every start seconds of seeding; the test of it turns it on.
      DEMO_DATA: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, so cleanup can reach every process of it; the tests signal npm alone.
    detached: true,
  });
  if (npm.pid) groups.add(npm.pid);
  const output = watchOutput(npm.stdout, npm.stderr);
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  return { npm, output: output.text, banner: () => output.waitFor(BANNER), exited };
}

interface Banner {
  schedulerPid: number;
  dashboard: string;
  appliancePid: number;
  user: string;
  password: string;
}

async function banner(started: Started): Promise<Banner> {
  await started.banner();
  const out = started.output();
  const scheduler = /Scheduler API .* pid (\d+)/.exec(out);
  const appliance = /Advisory +(http\S+?)\/? +pid (\d+)/.exec(out);
  const login = BANNER.exec(out);
  if (!scheduler || !appliance || !login) throw new Error(`a banner without its lines:\n${out}`);
  return {
    schedulerPid: Number(scheduler[1]),
    dashboard: appliance[1] as string,
    appliancePid: Number(appliance[2]),
    user: login[1] as string,
    password: login[2] as string,
  };
}

/** Once the process is gone (not our child: only /proc can tell); the test's timeout bounds it. */
async function gone(pid: number): Promise<boolean> {
  await until(() => !alive(pid), 100);
  return true;
}

/** The parent pid from /proc/<pid>/stat (field 4, after the parenthesised command name). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('npm start', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'prints the banner once both servers answer, and %s to npm alone stops everything',
    async (signal) => {
      const port = await freePort();
      const dashboardPort = await freePort();
      const started = await npmStart({ PORT: String(port), ADVISORY_LISTEN: `127.0.0.1:${dashboardPort}` });
      const shown = await banner(started);
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      expect(started.output()).toContain(`http://127.0.0.1:${port}/api/v1`);
      // The dashboard listens where ADVISORY_LISTEN says (the README promises both settings).
      expect(shown.dashboard).toBe(`http://127.0.0.1:${dashboardPort}`);

      // The appliance serves the demo feed it was pointed at, behind the printed login.
      expect((await fetch(`${shown.dashboard}/health`)).status).toBe(200);
      expect((await fetch(`${shown.dashboard}/`)).status).toBe(401);
      const basic = `Basic ${Buffer.from(`${shown.user}:${shown.password}`).toString('base64')}`;
      // The feed is in use (health) a moment before its first evaluation is on the page.
      await expect
        .poll(
          async () => {
            const page = await fetch(`${shown.dashboard}/`, { headers: { authorization: basic } });
            return `${page.status} ${await page.text()}`;
          },
          { interval: 100 },
        )
        .toMatch(/^200 [\s\S]*pve-node-1/);

      started.npm.kill(signal);
      await started.exited;
      expect(await gone(shown.schedulerPid)).toBe(true);
      expect(await gone(shown.appliancePid)).toBe(true);
      expect(await portIsFree(port)).toBe(true);
      expect(await portIsFree(Number(new URL(shown.dashboard).port))).toBe(true);
    },
  );

  it('seeds the demo week for the staff app, whose sign-in it names, with the development issuer', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'npm-start-'));
    // As a user runs it: DEMO_DATA unset, so npm start turns the demo week on.
    const started = await npmStart({ PORT: String(port), DATA_DIR: dataDir, DEMO_DATA: undefined });
    await banner(started);
    const base = `http://127.0.0.1:${port}`;
    expect(started.output()).toContain(
      `  Web app         ${base}/app/   (staff: a demo employee; manager: Alex Admin)\n`,
    );
    expect(started.output()).toMatch(/demo data: seeded tenant \\?"demo\\?": 4 people/);
    const discovery = await fetch(`${base}/dev-issuer/.well-known/openid-configuration`);
    expect(await discovery.json()).toMatchObject({ issuer: `${base}/dev-issuer` });
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/cli/token.ts', '--role', 'employee', '--user', 'demo-employee-1'],
      { cwd: path.join(root, 'scheduler'), env: { ...process.env, DATA_DIR: dataDir } },
    );
    const mine = await fetch(`${base}/api/v1/me/assignments`, {
      headers: { authorization: `Bearer ${stdout.trim()}` },
    });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as unknown[]).length).toBeGreaterThan(0);
    started.npm.kill('SIGTERM');
    await started.exited;
  });

  it('reuses the demo key, signed feed and dashboard login of an earlier run', async () => {
    const first = await npmStart({ PORT: String(await freePort()) });
    const before = await banner(first);
    const key = readFileSync(path.join(demoDir, 'demo-feed.pub'), 'utf8');
    const signature = readFileSync(path.join(demoDir, 'feed', 'manifest.yaml.sig'), 'utf8');
    first.npm.kill('SIGTERM');
    await first.exited;

    const second = await npmStart({ PORT: String(await freePort()) });
    const after = await banner(second);
    expect(after.password).toBe(before.password);
    expect(readFileSync(path.join(demoDir, 'demo-feed.pub'), 'utf8')).toBe(key);
    expect(readFileSync(path.join(demoDir, 'feed', 'manifest.yaml.sig'), 'utf8')).toBe(signature);
    expect(statSync(path.join(demoDir, 'demo-feed.sec')).mode & 0o077).toBe(0);
    second.npm.kill('SIGTERM');
    await second.exited;
  });

  it('reaches a server listening on IPv6 loopback', async () => {
    const port = await freePort();
    const started = await npmStart({ PORT: String(port), HOST: '::1' });
    await banner(started);
    expect(started.output()).toContain(`http://[::1]:${port}/api/v1`);
    expect((await fetch(`http://[::1]:${port}/health`)).status).toBe(200);
    started.npm.kill('SIGTERM');
    await started.exited;
  });

  it('exits with the server exit code and no banner when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const started = await npmStart({ PORT: String(port) });
      expect(await started.exited).toBe(1);
      expect(started.output()).toContain(`PORT: 127.0.0.1:${port} is already in use`);
      expect(started.output()).not.toContain('Scheduler API');
    } finally {
      blocker.close();
    }
  });

  it('exits with code 2 and no banner on a configuration error', async () => {
    const started = await npmStart({ PORT: String(await freePort()), AUTH_ISSUER: 'https://idp.example' });
    expect(await started.exited).toBe(2);
    expect(started.output()).toContain('AUTH_JWKS_URL: set AUTH_JWKS_URL or AUTH_PUBLIC_KEY_FILE');
    expect(started.output()).not.toContain('Scheduler API');
  });

  it('takes both servers down when the start process itself is killed outright', async () => {
    const port = await freePort();
    const started = await npmStart({ PORT: String(port) });
    const shown = await banner(started);
    // SIGKILL cannot be handled: the servers notice their IPC channels close instead.
    const startPid = parentOf(shown.schedulerPid);
    expect(parentOf(shown.appliancePid)).toBe(startPid);
    process.kill(startPid, 'SIGKILL');
    expect(await gone(shown.schedulerPid)).toBe(true);
    expect(await gone(shown.appliancePid)).toBe(true);
    expect(await portIsFree(port)).toBe(true);
    started.npm.kill('SIGTERM');
    await started.exited;
  });
});
