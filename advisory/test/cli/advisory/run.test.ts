import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDataDir } from '../../../../common/src/data-dir-lock.ts';
import { runsIf } from '../../../../scripts/test-skip.ts';
import { until, type WatchedOutput, watchOutput } from '../../../../scripts/test-wait.ts';
import { setup, startFeedServer } from '../../support/appliance.ts';

/**
 * `advisory run` as a process: its start-up (one composition root that reads the settings
 * and the files they name once), its signals and its log.
 */
const bin = path.resolve(import.meta.dirname, '../../../bin/advisory.mjs');
const DAY = 86_400_000;

export interface Daemon {
  child: ChildProcess;
  output: WatchedOutput;
  /** The exit code, once the output has been read to its end. */
  done: Promise<number | null>;
}

export function startDaemon(env: NodeJS.ProcessEnv): Daemon {
  const child = spawn(process.execPath, [bin, 'run'], {
    env: { ...process.env, ADVISORY_LISTEN: '127.0.0.1:0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = watchOutput(child.stdout, child.stderr);
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output, done };
}

/** /health once the first pull has been judged (accepted or refused), as JSON. */
async function healthAfterFirstPull(url: string): Promise<{ status: string; problems: { code: string }[] }> {
  let body: { status: string; problems: { code: string; message: string }[] } = { status: '', problems: [] };
  await until(async () => {
    body = await (await fetch(`${url}health`)).json();
    return !body.problems.some((p) => p.message === 'no feed has been accepted yet');
  }, 50);
  return body;
}

describe('advisory run: start-up reads its settings and files once', () => {
  // The daemon reads the key at start, then waits for the state directory; what happens to
  // the file meanwhile must not matter (a second read would trust another key, or none).
  it.each([
    [
      'replaced by another key',
      (s: ReturnType<typeof setup>) =>
        writeFileSync(s.keyFile, setup({ publishedAt: new Date() }).key.publicText),
    ],
    ['removed', (s: ReturnType<typeof setup>) => rmSync(s.keyFile)],
  ])(
    'trusts the key it read at start when the key file is %s while it waits',
    async (_, change) => {
      const s = setup({ publishedAt: new Date(Date.now() - DAY) });
      mkdirSync(s.stateDir, { recursive: true });
      const release = await lockDataDir(s.stateDir);
      const daemon = startDaemon(s.env);
      try {
        await daemon.output.waitFor(/another advisory process holds ADVISORY_STATE_DIR; waiting/);
        change(s);
        await release();
        const url = (await daemon.output.waitFor(/dashboard on (\S+)/))[1] as string;
        const health = await healthAfterFirstPull(url);
        expect(health).toMatchObject({ status: 'ok', problems: [] });
      } finally {
        daemon.child.kill('SIGTERM');
      }
      expect(await daemon.done).toBe(0);
    },
    60_000,
  );
});

/** Whether the process catches `signal` now (/proc/<pid>/status, SigCgt). */
function catches(pid: number, signal: number): boolean {
  try {
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '0';
    return ((BigInt(`0x${mask}`) >> BigInt(signal - 1)) & 1n) === 1n;
  } catch {
    return false;
  }
}
const SIGHUP = 1;
const hasStrace = spawnSync('strace', ['-V'], { stdio: 'ignore' }).error === undefined;

describe('advisory run: SIGHUP never ends it', () => {
  // A SIGHUP before node has run a line of JavaScript ends any node process (its default
  // action); from the first line on, the daemon catches it. The test sends it the moment
  // the process catches it, long before it has loaded its sources or read a setting.
  it('from the first moment it catches signals: it starts as if nothing came', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const daemon = startDaemon(s.env);
    const pid = await new Promise<number>((resolve) =>
      daemon.child.once('spawn', () => resolve(daemon.child.pid as number)),
    );
    await until(() => catches(pid, SIGHUP) || daemon.child.exitCode !== null, 1);
    daemon.child.kill('SIGHUP');
    // Still loading: it has not yet said where its dashboard is.
    expect(daemon.output.text()).not.toMatch(/dashboard on/);
    try {
      const url = (await daemon.output.waitFor(/dashboard on (\S+)/))[1] as string;
      expect(await healthAfterFirstPull(url)).toMatchObject({ status: 'ok' });
    } finally {
      daemon.child.kill('SIGTERM');
    }
    expect(await daemon.done).toBe(0);
    expect(daemon.output.text()).not.toMatch(/SIGHUP again|stopping now/);
  }, 60_000);

  // The order, seen by strace: the handler is in place before the process opens a single
  // file of the appliance's code (it takes a second or more to load them), let alone a
  // setting's file. Here the configuration is wrong, so the process ends soon after.
  it(
    "is caught before the appliance's code is loaded",
    runsIf(hasStrace, 'needs strace (Debian package; scripts/install-system-packages.sh)'),
    async () => {
      const s = setup({ publishedAt: new Date(Date.now() - DAY) });
      const trace = path.join(s.dir, 'trace');
      const child = spawn(
        'strace',
        ['-f', '-qq', '-e', 'trace=rt_sigaction,openat', '-o', trace, process.execPath, bin, 'run'],
        { env: { ...process.env, ...s.env, ADVISORY_REFRESH_INTERVAL: 'soon' }, stdio: 'ignore' },
      );
      expect(await new Promise((resolve) => child.on('close', resolve))).toBe(2);
      const lines = readFileSync(trace, 'utf8').split('\n');
      const caught = lines.findIndex((l) => /rt_sigaction\(SIGHUP, \{sa_handler=0x/.test(l));
      const code = lines.findIndex((l) => /openat\(.*\/advisory\/(src|dist)\/[^"]*\.(ts|mjs)"/.test(l));
      expect(caught).toBeGreaterThanOrEqual(0);
      expect(code).toBeGreaterThan(caught);
    },
  );

  it('during the first feed pull, while the feed host does not answer', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const server = await startFeedServer(s.feedDir);
    server.mode = 'slow';
    try {
      const daemon = startDaemon({ ...s.env, ADVISORY_FEED_URL: server.url, ADVISORY_FEED_TIMEOUT: '10m' });
      const url = (await daemon.output.waitFor(/dashboard on (\S+)/))[1] as string;
      await until(() => server.requests.length > 0, 20);
      daemon.child.kill('SIGHUP');
      await daemon.output.waitFor(/SIGHUP: nothing to reload \(ADVISORY_TLS_CERT/);
      // Still serving: the pull goes on, the dashboard answers.
      expect((await fetch(`${url}health`)).status).toBe(503);
      expect(daemon.child.exitCode).toBeNull();
      daemon.child.kill('SIGTERM');
      expect(await daemon.done).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);
});
