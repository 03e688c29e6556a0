import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { beforeAll, describe, expect, it } from 'vitest';
import { until, watchOutput } from '../../scripts/test-wait.ts';
import { setup } from './support/appliance.ts';
import { makePair, servedFingerprint, type TestPair, writePair } from './support/tls.ts';

/**
 * `advisory run` serving HTTPS as a process: the certificate files swapped under it and
 * SIGHUP sent, as a renewal hook or `systemctl reload` does; a bad pair at reload keeps the
 * one in use and the daemon serving; a bad pair or a password in clear at start stops it
 * with the setting named (exit 2).
 */
const bin = path.resolve(import.meta.dirname, '../bin/advisory.mjs');
const DAY = 86_400_000;

let first: TestPair;
let renewed: TestPair;
let stranger: TestPair;
beforeAll(async () => {
  [first, renewed, stranger] = await Promise.all([
    makePair('advisory.test'),
    makePair('advisory-renewed.test'),
    makePair('someone-else.test'),
  ]);
});

function daemon(env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn(process.execPath, [bin, 'run'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = watchOutput(child.stdout, child.stderr);
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  /** Waits until the output holds `text` (found after `from` characters), as it arrives. */
  const waitFor = (text: string, from = 0) => output.waitFor(text, from);
  return { child, done, waitFor, output: output.text };
}

/** A GET of /health over `agent`: its status, and the connection and certificate it used. */
function health(port: number, agent: Agent) {
  return new Promise<{ status: number; socket: TLSSocket; fingerprint: string | undefined }>(
    (resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/health', agent }, (response) => {
        const socket = response.socket as TLSSocket;
        const fingerprint = socket.getPeerX509Certificate()?.fingerprint256;
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, socket, fingerprint }));
      });
      req.once('error', reject);
      req.end();
    },
  );
}

describe('advisory run over HTTPS', () => {
  it('serves the certificate files, takes new ones on SIGHUP and keeps the old ones when the new are bad', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const certFile = path.join(s.dir, 'dashboard.crt');
    const keyFile = path.join(s.dir, 'dashboard.key');
    writePair(first, certFile, keyFile);
    const run = daemon({
      ...s.env,
      ADVISORY_LISTEN: '127.0.0.1:0',
      ADVISORY_TLS_CERT: certFile,
      ADVISORY_TLS_KEY: keyFile,
    });
    const trusting = [first.cert, renewed.cert, stranger.cert];
    // One connection kept open across the reload: it must not be dropped.
    const kept = new Agent({ ca: trusting, keepAlive: true, maxSockets: 1, keepAliveMsecs: 1000 });
    try {
      await run.waitFor('TLS certificate: ');
      const port = Number(/dashboard on https:\/\/127\.0\.0\.1:(\d+)\//.exec(run.output())?.[1]);
      expect(port).toBeGreaterThan(0);
      expect(run.output()).toContain(`TLS certificate: CN=advisory.test, valid until `);
      expect(run.output()).toContain(`, SHA-256 ${first.fingerprint}\n`);
      expect(await servedFingerprint(port, trusting)).toBe(first.fingerprint);
      // Healthy once the first refresh has verified the feed (listening comes before that).
      const fresh = new Agent({ ca: trusting });
      await until(async () => (await health(port, fresh)).status === 200);
      const before = await health(port, kept);
      expect(before.fingerprint).toBe(first.fingerprint);

      // A renewal: both files replaced, then SIGHUP.
      writePair(renewed, certFile, keyFile);
      let mark = run.output().length;
      run.child.kill('SIGHUP');
      await run.waitFor(`SIGHUP: TLS certificate reloaded: CN=advisory-renewed.test, valid until `, mark);
      expect(run.output().slice(mark)).toContain(`SHA-256 ${renewed.fingerprint}\n`);
      expect(await servedFingerprint(port, trusting)).toBe(renewed.fingerprint);
      // The connection made before the reload still answers, on the same socket.
      const after = await health(port, kept);
      expect(after.status).toBe(200);
      expect(after.socket).toBe(before.socket);

      // Half a renewal: a new certificate beside the old key. Refused; the renewed pair stays.
      writePair({ cert: stranger.cert, key: renewed.key }, certFile, keyFile);
      mark = run.output().length;
      run.child.kill('SIGHUP');
      await run.waitFor('error: SIGHUP: TLS certificate not reloaded: ', mark);
      expect(run.output().slice(mark)).toContain(
        `error: SIGHUP: TLS certificate not reloaded: ADVISORY_TLS_KEY: ${keyFile}: not the private key of the certificate in ${certFile}; still serving CN=advisory-renewed.test, valid until `,
      );
      expect(run.output().slice(mark)).not.toMatch(/^\s+at /m);
      expect(await servedFingerprint(port, trusting)).toBe(renewed.fingerprint);

      // The key gone altogether: the same.
      rmSync(keyFile);
      mark = run.output().length;
      run.child.kill('SIGHUP');
      await run.waitFor(
        `ADVISORY_TLS_KEY: ${keyFile}: no such file; still serving CN=advisory-renewed.test`,
        mark,
      );
      expect(await servedFingerprint(port, trusting)).toBe(renewed.fingerprint);

      // And the daemon serves on.
      expect(run.child.exitCode).toBeNull();
      expect((await health(port, new Agent({ ca: trusting }))).status).toBe(200);
    } finally {
      kept.destroy();
      run.child.kill('SIGTERM');
    }
    expect(await run.done).toBe(0);
    expect(run.output()).toMatch(/SIGTERM: stopping/);
  }, 60_000);

  it('without TLS, SIGHUP says there is nothing to reload and the daemon serves on', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const run = daemon({ ...s.env, ADVISORY_LISTEN: '127.0.0.1:0' });
    try {
      await run.waitFor('dashboard on http://');
      run.child.kill('SIGHUP');
      await run.waitFor('SIGHUP: nothing to reload (ADVISORY_TLS_CERT and ADVISORY_TLS_KEY are not set)');
      const url = /dashboard on (\S+)/.exec(run.output())?.[1] as string;
      // Serving on: healthy once the first refresh has verified the feed.
      await until(async () => (await fetch(`${url}health`)).status === 200);
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.done).toBe(0);
  }, 60_000);

  it('stops at start (exit 2) on a bad pair or a password that would cross the network in clear', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const certFile = path.join(s.dir, 'dashboard.crt');
    const keyFile = path.join(s.dir, 'dashboard.key');
    writePair({ cert: renewed.cert, key: first.key }, certFile, keyFile);
    const missing = path.join(s.dir, 'missing.crt');
    // A good pair, but the key readable by everyone (written by a umask of 022).
    const openCert = path.join(s.dir, 'open.crt');
    const openKey = path.join(s.dir, 'open.key');
    writePair(first, openCert, openKey);
    chmodSync(openKey, 0o644);
    const credentials = {
      ADVISORY_DASHBOARD_USER: 'operator',
      ADVISORY_DASHBOARD_PASSWORD: 'correct horse battery',
    };
    for (const [change, expected] of [
      [
        { ADVISORY_TLS_CERT: certFile, ADVISORY_TLS_KEY: keyFile },
        `configuration error: ADVISORY_TLS_KEY: ${keyFile}: not the private key of the certificate in ${certFile}`,
      ],
      [
        { ADVISORY_TLS_CERT: missing, ADVISORY_TLS_KEY: keyFile },
        `configuration error: ADVISORY_TLS_CERT: ${missing}: no such file`,
      ],
      [
        { ADVISORY_TLS_CERT: openCert, ADVISORY_TLS_KEY: openKey },
        `configuration error: ADVISORY_TLS_KEY: ${openKey}: mode 0644 lets other users read or change the private key`,
      ],
      [
        { ADVISORY_TLS_CERT: certFile },
        'configuration error: ADVISORY_TLS_KEY: set it together with ADVISORY_TLS_CERT',
      ],
      [
        { ...credentials, ADVISORY_LISTEN: '0.0.0.0:0' },
        'configuration error: ADVISORY_LISTEN: 0.0.0.0 is reachable from other machines and the dashboard password',
      ],
      [
        { ...credentials, ADVISORY_LISTEN: '0.0.0.0:0', ADVISORY_ALLOW_PLAIN_HTTP_AUTH: 'yes' },
        'configuration error: ADVISORY_ALLOW_PLAIN_HTTP_AUTH: expected true or false, got "yes"',
      ],
    ] as const) {
      const run = daemon({ ...s.env, ADVISORY_LISTEN: '127.0.0.1:0', ...change });
      expect(await run.done, expected).toBe(2);
      expect(run.output(), expected).toContain(expected);
      expect(run.output(), expected).not.toMatch(/^\s+at /m);
      expect(run.output(), expected).not.toContain('dashboard on');
    }
  }, 60_000);
});
