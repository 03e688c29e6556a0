import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { until, watchOutput } from '../../../scripts/test-wait.ts';
import { killAfterTest, PROCESS_START_MS } from '../support/api-process.ts';
import { uniqueName } from '../support/context.ts';
import { freePort } from '../support/pg-cluster.ts';
import { createTestKeys, signToken, TEST_AUDIENCE, TEST_ISSUER } from '../support/tokens.ts';

/**
 * The drain on SIGTERM (src/main.ts `stop`), with the production bundle as a process: the
 * listening socket closes at once (a new connection is refused), a request in flight is
 * answered, then the process exits 0; one still unfinished at SHUTDOWN_TIMEOUT_MS is cut
 * off and the process exits 1, saying so. The request is held by its body: the client
 * sends the headers (the server's 100 Continue tells they arrived) and half the body, and
 * the rest only when the test says.
 */
vi.setConfig({ testTimeout: 2 * PROCESS_START_MS });
const schedulerDir = path.resolve(import.meta.dirname, '../..');

async function start(env: Record<string, string> = {}) {
  const keys = await createTestKeys();
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/main.mjs'], {
    cwd: schedulerDir,
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'shutdown-')),
      AUTH_ISSUER: TEST_ISSUER,
      AUTH_AUDIENCE: TEST_AUDIENCE,
      AUTH_PUBLIC_KEY_FILE: keys.publicKeyFile,
      GEOCODER_URL: 'http://127.0.0.1:9/',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killAfterTest(child);
  const output = watchOutput(child.stdout, child.stderr);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await output.waitFor('"msg":"scheduler ready"');
  const token = await signToken(keys, { tenant: uniqueName('tenant'), role: 'admin', sub: 'admin-1' });
  // Provisioned before the test holds anything.
  const provisioned = await fetch(`http://127.0.0.1:${port}/api/v1/tenant/settings`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(provisioned.status).toBe(200);
  return { child, port, output, exited, token };
}

/** A POST of a role whose body is held half sent; resolves once the server has its headers. */
async function heldRequest(port: number, token: string) {
  const body = JSON.stringify({ name: 'Held over the stop' });
  const request = http.request({
    port,
    host: '127.0.0.1',
    method: 'POST',
    path: '/api/v1/roles',
    agent: false,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      expect: '100-continue',
    },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
  await new Promise<void>((resolve) => request.once('continue', resolve));
  request.write(body.slice(0, 10));
  return { answer, finish: () => request.end(body.slice(10)) };
}

/** Whether a new TCP connection to `port` is refused. */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });

describe('shutting down on SIGTERM', () => {
  it('refuses new connections, answers the request in flight, then exits 0', async () => {
    const { child, port, output, exited, token } = await start();
    const held = await heldRequest(port, token);
    child.kill('SIGTERM');
    await output.waitFor('"msg":"shutting down: finishing in-flight requests"');
    // The listening socket closes once the stop begins (a state: looked at until it holds).
    await until(() => refused(port));
    // Still running: the request in flight holds the stop.
    expect(child.exitCode).toBeNull();
    held.finish();
    const answer = await held.answer;
    expect(answer.status, answer.body).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ name: 'Held over the stop' });
    expect(await exited).toBe(0);
    expect(output.text()).not.toContain('shutdown took longer');
  });

  it('cuts off what is still unfinished at SHUTDOWN_TIMEOUT_MS and exits 1, saying so', async () => {
    const { child, port, output, exited, token } = await start({ SHUTDOWN_TIMEOUT_MS: '1000' });
    const held = await heldRequest(port, token);
    const cut = held.answer.then(
      () => 'answered',
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    child.kill('SIGTERM');
    // The body never comes: the bound ends the wait.
    expect(await exited).toBe(1);
    expect(output.text()).toMatch(
      /"timeoutMs":1000,"msg":"shutdown took longer than SHUTDOWN_TIMEOUT_MS; exiting"/,
    );
    expect(await cut).toBe('ECONNRESET');
  });
});
