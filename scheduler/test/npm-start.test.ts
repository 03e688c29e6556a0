import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freePort } from './support/pg-cluster.ts';

/**
 * `npm start` as a user runs it, with real processes: the banner appears only once the
 * server it started answers, a failing server ends it at once with the server's exit
 * code, and a signal to the npm process alone stops everything and frees the port.
 */
const root = path.resolve(import.meta.dirname, '../..');
// Real processes start PGlite and load the gazetteer: give them time on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

interface Started {
  npm: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

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

function npmStart(env: Record<string, string | undefined>): Started {
  const npm = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'npm-start-')), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, so cleanup can reach every process of it; the tests signal npm alone.
    detached: true,
  });
  if (npm.pid) groups.add(npm.pid);
  let output = '';
  npm.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  npm.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  return { npm, output: () => output, exited };
}

async function bannerPid(started: Started): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const match = /Scheduler API .* pid (\d+)/.exec(started.output());
    if (match) return Number(match[1]);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no banner:\n${started.output()}`);
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
    'prints the banner once the server answers, and %s to npm alone stops everything',
    async (signal) => {
      const port = await freePort();
      const started = npmStart({ PORT: String(port) });
      const serverPid = await bannerPid(started);
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      expect(started.output()).toContain(`http://127.0.0.1:${port}/api/v1`);

      started.npm.kill(signal);
      await started.exited;
      for (let i = 0; i < 100 && alive(serverPid); i++) await new Promise((r) => setTimeout(r, 100));
      expect(alive(serverPid)).toBe(false);
      expect(await portIsFree(port)).toBe(true);
    },
  );

  it('reaches a server listening on IPv6 loopback', async () => {
    const port = await freePort();
    const started = npmStart({ PORT: String(port), HOST: '::1' });
    await bannerPid(started);
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
      const started = npmStart({ PORT: String(port) });
      expect(await started.exited).toBe(1);
      expect(started.output()).toContain(`PORT: 127.0.0.1:${port} is already in use`);
      expect(started.output()).not.toContain('Scheduler API');
    } finally {
      blocker.close();
    }
  });

  it('exits with code 2 and no banner on a configuration error', async () => {
    const started = npmStart({ PORT: String(await freePort()), AUTH_ISSUER: 'https://idp.example' });
    expect(await started.exited).toBe(2);
    expect(started.output()).toContain('AUTH_JWKS_URL: set AUTH_JWKS_URL or AUTH_PUBLIC_KEY_FILE');
    expect(started.output()).not.toContain('Scheduler API');
  });

  it('takes the server down when the start process itself is killed outright', async () => {
    const port = await freePort();
    const started = npmStart({ PORT: String(port) });
    const serverPid = await bannerPid(started);
    // SIGKILL cannot be handled: the server notices its IPC channel close instead.
    const startPid = parentOf(serverPid);
    process.kill(startPid, 'SIGKILL');
    for (let i = 0; i < 100 && alive(serverPid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(serverPid)).toBe(false);
    expect(await portIsFree(port)).toBe(true);
    started.npm.kill('SIGTERM');
    await started.exited;
  });
});
