import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type WatchedOutput, watchOutput } from '../../scripts/test-wait.ts';
import { setup } from './support/appliance.ts';

/**
 * Ctrl-C in a terminal, as the terminal sends it: SIGINT to every process of the
 * foreground process group at once. `npm start` (the root's, and the appliance's own in
 * its workspace) must stop cleanly on one: each server asked to stop once, exit 0, never
 * the forced path (`SIGTERM again: stopping now`) that a second copy of the same request
 * would take. The group here is one the test makes (detached), as a shell makes one per job.
 */
const root = path.resolve(import.meta.dirname, '../..');
// npm start runs both servers (the scheduler starts PGlite and migrates): room for a
// loaded machine.
const START_MS = 200_000;

const groups = new Set<number>();
afterEach(() => {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  groups.clear();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Job {
  npm: ChildProcess;
  output: WatchedOutput;
  /** npm's exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/** `npm <args>` as a shell's job: a process group of its own, led by npm. */
function job(args: string[], cwd: string, env: NodeJS.ProcessEnv): Job {
  const npm = spawn('npm', args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (npm.pid) groups.add(npm.pid);
  const output = watchOutput(npm.stdout, npm.stderr);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    npm.once('close', (code, signal) => resolve(code ?? signal)),
  );
  return { npm, output, exited };
}

/** Ctrl-C: SIGINT to the whole foreground process group. */
const ctrlC = (j: Job) => process.kill(-(j.npm.pid as number), 'SIGINT');

describe('Ctrl-C', () => {
  it(
    'stops the root npm start cleanly: the appliance is asked once and exits 0',
    async () => {
      const demo = mkdtempSync(path.join(tmpdir(), 'ctrl-c-demo-'));
      const j = job(['start'], root, {
        DATA_DIR: mkdtempSync(path.join(tmpdir(), 'ctrl-c-data-')),
        ADVISORY_DEMO_DIR: demo,
        ADVISORY_LISTEN: `127.0.0.1:${await freePort()}`,
        PORT: String(await freePort()),
        DEMO_DATA: 'false',
        ADVISORY_LOG_LEVEL: 'info',
      });
      await j.output.waitFor(/Dashboard login \S+ \/ \S+/);
      ctrlC(j);
      expect(await j.exited).toBe(0);
      const text = j.output.text();
      // Each stop request the appliance took is one line: exactly one.
      expect(text.match(/^SIG(INT|TERM): stopping$/gm), text).toHaveLength(1);
      expect(text).not.toMatch(/again: stopping now/);
      expect(text).not.toMatch(/\[start\] the (scheduler|appliance) exited/);
    },
    START_MS,
  );

  // The appliance's own `npm start` in its workspace: npm's shell runs it in the same group,
  // and npm passes the SIGINT on as well, so the appliance gets the same request twice.
  it(
    "stops the appliance's own npm start cleanly: two copies of one Ctrl-C are one request",
    async () => {
      const s = setup({ publishedAt: new Date(Date.now() - 86_400_000) });
      const j = job(['start'], path.join(root, 'advisory'), { ...s.env, ADVISORY_LISTEN: '127.0.0.1:0' });
      await j.output.waitFor(/dashboard on/);
      ctrlC(j);
      const ended = await j.exited;
      const text = j.output.text();
      expect(text).not.toMatch(/again: stopping now/);
      expect(text.match(/^SIGINT: stopping$/gm), text).toHaveLength(1);
      // npm's shell got the Ctrl-C too and ends as a job ended by it does.
      expect([0, 'SIGINT'], text).toContain(ended);
    },
    START_MS,
  );
});
