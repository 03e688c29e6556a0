import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDataDir } from '../../../../common/src/data-dir-lock.ts';
import { until, type WatchedOutput, watchOutput } from '../../../../scripts/test-wait.ts';
import { setup } from '../../support/appliance.ts';

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
