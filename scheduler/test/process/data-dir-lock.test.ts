import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import { killAfterTest, PROCESS_START_MS } from '../support/api-process.ts';
import { freePort } from '../support/pg-cluster.ts';

/**
 * The embedded database's folder (DATA_DIR) belongs to one process: a second server,
 * migration or development server on it exits at once naming the owner, before it opens
 * the database; the owner killed with -9, the next start takes over.
 */
// Up to six processes one after the other (a server, three refused starts, a server, a
// refused migrate).
vi.setConfig({ testTimeout: 6 * PROCESS_START_MS });
const run = promisify(execFile);
const node = process.execPath;
const schedulerDir = path.resolve(import.meta.dirname, '../..');

async function startServer(dataDir: string): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
  const port = await freePort();
  const child = spawn(node, ['dist/main.mjs'], {
    cwd: schedulerDir,
    env: {
      ...process.env,
      AUTH_DEV_ISSUER: 'true',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  killAfterTest(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Until /health answers, or the server is gone; the test's timeout bounds the wait.
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    return (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok === true;
  }, 100);
  return { child, exited };
}

async function refused(args: string[], dataDir: string) {
  return (await run(node, args, {
    cwd: schedulerDir,
    env: { ...process.env, AUTH_DEV_ISSUER: 'true', PORT: String(await freePort()), DATA_DIR: dataDir },
  }).catch((e: unknown) => e)) as { code?: number; stderr?: string };
}

describe('DATA_DIR', () => {
  it('refuses a second server, migrate and dev while one runs, naming it; after a kill -9 the next start takes over', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'data-dir-'));
    const owner = await startServer(dataDir);
    const message = `DATA_DIR: ${dataDir} is in use by process ${owner.child.pid} (a scheduler, migrate or dev on the same folder); stop it, or set another DATA_DIR`;
    const pglite = readdirSync(path.join(dataDir, 'pglite')).sort();
    for (const args of [['dist/main.mjs'], ['dist/cli/migrate.mjs'], ['--import', 'tsx', 'src/main.ts']]) {
      const second = await refused(args, dataDir);
      expect(second.code, args.join(' ')).toBe(1);
      expect(second.stderr).toContain(message);
      expect(second.stderr).not.toMatch(/\bat .*\.(ts|mjs):\d+/);
    }
    // The second processes opened nothing: the database folder holds what the owner made.
    expect(readdirSync(path.join(dataDir, 'pglite')).sort()).toEqual(pglite);

    owner.child.kill('SIGKILL');
    await owner.exited;
    const next = await startServer(dataDir);
    expect(next.child.pid).not.toBe(owner.child.pid);
    const migrate = await refused(['dist/cli/migrate.mjs'], dataDir);
    expect(migrate.stderr).toContain(`is in use by process ${next.child.pid}`);
  });

  it('is free again after a clean stop', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'data-dir-'));
    const first = await startServer(dataDir);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const { stdout } = await run(node, ['dist/cli/migrate.mjs'], {
      cwd: schedulerDir,
      env: { ...process.env, DATA_DIR: dataDir },
    });
    expect(stdout.trim()).toBe('schema is up to date');
  });
});
