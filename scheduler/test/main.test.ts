import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/pg-cluster.ts';

/** main.ts as a process: embedded defaults, configuration errors, graceful shutdown. */
const run = promisify(execFile);
const tsx = path.resolve(import.meta.dirname, '../../node_modules/.bin/tsx');
const schedulerDir = path.resolve(import.meta.dirname, '..');

describe('the server process', () => {
  it('starts on the embedded database, answers /health, and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(tsx, ['src/main.ts'], {
      cwd: schedulerDir,
      env: {
        ...process.env,
        AUTH_DEV_ISSUER: 'true',
        PORT: String(port),
        DATA_DIR: mkdtempSync(path.join(tmpdir(), 'main-')),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let health: Response | undefined;
    for (let attempt = 0; attempt < 200 && !health; attempt++) {
      health = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      if (!health) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(health?.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(log).toMatch(/"msg":"scheduler ready"/);
    expect(log).toMatch(/"msg":"shutting down: finishing in-flight requests"/);
  });
});

describe('start-up configuration errors', () => {
  it.each([
    [{ PORT: 'http' }, /PORT: expected a whole number/],
    [{ AUTH_DEV_ISSUER: undefined, AUTH_ISSUER: undefined }, /AUTH_ISSUER: is required/],
  ])('stops with a message naming the variable (%j)', async (env, message) => {
    const failure = await run(tsx, ['src/main.ts'], {
      cwd: schedulerDir,
      env: {
        ...process.env,
        AUTH_DEV_ISSUER: 'true',
        DATA_DIR: mkdtempSync(path.join(tmpdir(), 'main-')),
        ...env,
      },
    }).catch((e) => e);
    expect(failure.code).toBe(2);
    expect(failure.stderr).toMatch(message);
  });
});

describe('npm run migrate', () => {
  it('applies the migrations once, then reports the schema up to date', async () => {
    const env = { ...process.env, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'migrate-')) };
    const first = await run(tsx, ['src/cli/migrate.ts'], { cwd: schedulerDir, env });
    expect(first.stdout.trim()).toBe('applied: 0001_schema');
    const second = await run(tsx, ['src/cli/migrate.ts'], { cwd: schedulerDir, env });
    expect(second.stdout.trim()).toBe('schema is up to date');
  });
});
