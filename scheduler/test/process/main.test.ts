import { execFile, spawn } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { watchOutput } from '../../../scripts/test-wait.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { killAfterTest, PROCESS_START_MS } from '../support/api-process.ts';
import { freePort } from '../support/pg-cluster.ts';

/** main.ts as a process: embedded defaults, configuration errors, graceful shutdown. */
// Real processes start PGlite and load the gazetteer; a test runs up to two, one after the
// other.
vi.setConfig({ testTimeout: 2 * PROCESS_START_MS });
const run = promisify(execFile);
/** A TypeScript entry point as `node --import tsx` runs it (npm scripts do the same). */
const ts = (file: string, ...args: string[]) => ['--import', 'tsx', file, ...args];
const node = process.execPath;
/**
 * The two ways the server and the migration command run: from the sources through tsx
 * (development, `npm start`) and from the bundle `npm run build` compiles (production:
 * `npm run start -w scheduler`, the container and the service unit; `npm install` builds it).
 */
const entries = [
  ['from the sources through tsx', (file: string) => ts(`src/${file}.ts`)],
  ['from the compiled bundle', (file: string) => [`dist/${file}.mjs`]],
] as const;
const schedulerDir = path.resolve(import.meta.dirname, '../..');

describe('the server process', () => {
  it.each(entries)(
    'starts %s on the embedded database, answers /health, and shuts down cleanly on SIGTERM',
    async (_, entry) => {
      const port = await freePort();
      const child = spawn(node, entry('main'), {
        cwd: schedulerDir,
        env: {
          ...process.env,
          AUTH_DEV_ISSUER: 'true',
          PORT: String(port),
          DATA_DIR: mkdtempSync(path.join(tmpdir(), 'main-')),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      killAfterTest(child);
      const output = watchOutput(child.stdout);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      // Listening once it says so: no polling against a clock.
      await output.waitFor('"msg":"scheduler ready"');
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output.text()).toMatch(/"msg":"shutting down: finishing in-flight requests"/);
    },
  );

  it('stops cleanly when its supervisor goes away while it is still starting', async () => {
    const child = spawn(node, ts('src/main.ts'), {
      cwd: schedulerDir,
      env: {
        ...process.env,
        AUTH_DEV_ISSUER: 'true',
        PORT: String(await freePort()),
        DATA_DIR: mkdtempSync(path.join(tmpdir(), 'main-')),
      },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    killAfterTest(child);
    const stdout = watchOutput(child.stdout);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // The IPC channel closes as it would if the supervisor died, while the server starts: as
    // soon as it has migrated its fresh DATA_DIR, well before it listens.
    await stdout.waitFor('"msg":"database migrated"');
    child.disconnect();
    expect(await exited).toBe(0);
    expect(stderr).not.toMatch(/Error|ERR_/);
  });
});

const keyDir = mkdtempSync(path.join(tmpdir(), 'main-keys-'));
function keyFile(name: string, key: KeyObject): string {
  const file = path.join(keyDir, name);
  writeFileSync(file, key.export({ type: 'spki', format: 'pem' }));
  return file;
}
const external = (publicKeyFile: string) => ({
  AUTH_DEV_ISSUER: undefined,
  AUTH_ISSUER: 'https://idp.example',
  AUTH_PUBLIC_KEY_FILE: publicKeyFile,
});

async function startFailure(env: Record<string, string | undefined>) {
  const failure = await run(node, ts('src/main.ts'), {
    cwd: schedulerDir,
    env: {
      ...process.env,
      AUTH_DEV_ISSUER: 'true',
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'main-')),
      ...env,
    },
  }).catch((e) => e);
  return failure as { code: number; stderr: string; stdout: string };
}

describe('start-up configuration errors', () => {
  it.each([
    [{ PORT: 'http' }, /PORT: expected a whole number/],
    [{ AUTH_DEV_ISSUER: undefined, AUTH_ISSUER: undefined }, /AUTH_ISSUER: is required/],
    [{ RATE_LIMIT_STORE: 'redis' }, /RATE_LIMIT_STORE: expected process, database or off, got "redis"/],
    [
      { RATE_LIMIT_USER_BURST: '5000' },
      /RATE_LIMIT_USER_BURST: must not exceed RATE_LIMIT_TENANT_BURST \(1000\)/,
    ],
    [external('/nonexistent/issuer.pem'), /AUTH_PUBLIC_KEY_FILE: cannot read \/nonexistent\/issuer.pem/],
    [
      external(keyFile('rsa1024.pem', generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey)),
      /AUTH_PUBLIC_KEY_FILE: RSA key of 1024 bits; at least 2048 bits are required/,
    ],
    [
      external(keyFile('x25519.pem', generateKeyPairSync('x25519').publicKey)),
      /AUTH_PUBLIC_KEY_FILE: key type x25519 cannot verify tokens/,
    ],
  ])('stops with exit code 2 and a message naming the variable (%j)', async (env, message) => {
    const failure = await startFailure(env);
    expect(failure.code).toBe(2);
    expect(failure.stderr).toMatch(message);
    expect(failure.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });
});

describe('start-up failures outside the configuration', () => {
  it('names DATABASE_URL (without its password) when the database cannot be reached', async () => {
    const port = await freePort();
    const failure = await startFailure({ DATABASE_URL: `postgres://app:s3cret@127.0.0.1:${port}/app` });
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(
      new RegExp(
        `DATABASE_URL: cannot use the database at postgres://app:\\*\\*\\*@127.0.0.1:${port}/app: .*ECONNREFUSED`,
      ),
    );
    expect(failure.stderr).not.toContain('s3cret');
  });

  it('names DATABASE_OWNER_URL (without its password) when the owner’s login is the one that fails', async () => {
    const [appPort, ownerPort] = [await freePort(), await freePort()];
    const failure = await startFailure({
      DATABASE_URL: `postgres://app:s3cret@127.0.0.1:${appPort}/app`,
      DATABASE_OWNER_URL: `postgres://owner:0wn3r@127.0.0.1:${ownerPort}/app`,
    });
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(
      new RegExp(
        `DATABASE_OWNER_URL: cannot use the database at postgres://owner:\\*\\*\\*@127.0.0.1:${ownerPort}/app: .*ECONNREFUSED`,
      ),
    );
    expect(failure.stderr).not.toContain('0wn3r');
    expect(failure.stderr).not.toContain('s3cret');
  });

  it('names DATABASE_URL when the database accepts connections but never answers', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const failure = await startFailure({ DATABASE_URL: `postgres://app@127.0.0.1:${port}/app` });
      expect(failure.code).toBe(1);
      expect(failure.stderr).toMatch(
        new RegExp(
          `DATABASE_URL: cannot use the database at postgres://app@127.0.0.1:${port}/app: .*timeout`,
          'i',
        ),
      );
    } finally {
      silent.close();
    }
  });

  it('says the port is in use instead of failing obscurely', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const failure = await startFailure({ PORT: String(port) });
      expect(failure.code).toBe(1);
      expect(failure.stderr).toContain(`PORT: 127.0.0.1:${port} is already in use`);
    } finally {
      blocker.close();
    }
  });
});

describe('npm run migrate', () => {
  it.each(entries)(
    'runs %s: applies the migrations once, then reports the schema up to date',
    async (_, entry) => {
      const env = { ...process.env, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'migrate-')) };
      const first = await run(node, entry('cli/migrate'), { cwd: schedulerDir, env });
      expect(first.stdout.trim()).toBe(`applied: ${Object.keys(migrations).join(', ')}`);
      const second = await run(node, entry('cli/migrate'), { cwd: schedulerDir, env });
      expect(second.stdout.trim()).toBe('schema is up to date');
    },
  );
});
