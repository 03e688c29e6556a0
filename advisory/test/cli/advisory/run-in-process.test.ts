import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { lockDataDir } from '../../../../common/src/data-dir-lock.ts';
import { until } from '../../../../scripts/test-wait.ts';
import { runAdvisoryCli } from '../../../src/cli/advisory/main.ts';
import { CLIENT_VERSION } from '../../../src/version.ts';
import { setup } from '../../support/appliance.ts';
import { makePair, servedFingerprint, type TestPair, writePair } from '../../support/tls.ts';

/**
 * `advisory run` in this process: its start-up, what it prints, its signals and how it
 * ends, as the process would (run.test.ts, tls-reload.test.ts run it as a process; what
 * only a process shows, a stop that outlasts its grace, stays there). Signals are
 * delivered as node delivers them, an event on `process`. The test process is a worker
 * with an IPC channel to its runner: the daemon lets go of such a channel when it ends
 * (`npm start`), which is watched here instead of done.
 */
const DAY = 86_400_000;
let disconnects = 0;
afterEach(() => {
  vi.restoreAllMocks();
});

let first: TestPair;
let renewed: TestPair;
beforeAll(async () => {
  [first, renewed] = await Promise.all([makePair('advisory.test'), makePair('advisory-renewed.test')]);
});

function start(env: NodeJS.ProcessEnv) {
  // A worker without the channel (a thread) has no disconnect: nothing to let go of there.
  if (typeof process.disconnect === 'function')
    vi.spyOn(process, 'disconnect').mockImplementation(() => {
      disconnects += 1;
    });
  const lines: string[] = [];
  const errors: string[] = [];
  const done = runAdvisoryCli(
    ['run'],
    { out: (l) => lines.push(l), err: (l) => errors.push(l) },
    { ADVISORY_LISTEN: '127.0.0.1:0', ...env },
  );
  const settled = { code: null as number | null };
  void done.then((code) => {
    settled.code = code;
  });
  /** Waits for a line that matches, as it comes (or for the command to end without it). */
  const line = async (pattern: RegExp): Promise<RegExpExecArray> => {
    await until(() => [...lines, ...errors].some((l) => pattern.test(l)) || settled.code !== null);
    const found = [...lines, ...errors].map((l) => pattern.exec(l)).find((m) => m !== null);
    if (!found)
      throw new Error(`ended (${settled.code}) without ${pattern}: ${[...lines, ...errors].join('\n')}`);
    return found;
  };
  return { lines, errors, done, line };
}

const signal = (name: NodeJS.Signals) => process.emit(name, name);

describe('advisory run in this process', () => {
  it('says where its dashboard is, serves it, and stops on SIGTERM (exit 0)', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const before = disconnects;
    const daemon = start({ ...s.env, ADVISORY_REFRESH_INTERVAL: '2h' });
    const [, url] = await daemon.line(
      /^advisory appliance (?:\S+): dashboard on (http:\/\/127\.0\.0\.1:\d+\/) /,
    );
    expect(daemon.lines[0]).toBe(
      `advisory appliance ${CLIENT_VERSION}: dashboard on ${url} (refresh every 2h)`,
    );
    expect((await fetch(`${url}health`)).status).toBeLessThan(600);
    signal('SIGHUP');
    await daemon.line(/^SIGHUP: nothing to reload \(ADVISORY_TLS_CERT and ADVISORY_TLS_KEY are not set\)$/);
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
    expect(daemon.lines).toContain('SIGTERM: stopping');
    expect(daemon.lines.some((l) => l.startsWith('TLS certificate'))).toBe(false);
    expect(daemon.errors).toEqual([]);
    await expect(fetch(`${url}health`)).rejects.toThrow();
    expect(disconnects).toBe(before + (process.connected ? 1 : 0));
  });

  it('stops a start-up with a bad setting, naming it (exit 2)', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const daemon = start({ ...s.env, ADVISORY_REFRESH_INTERVAL: 'soon' });
    expect(await daemon.done).toBe(2);
    expect(daemon.errors.join('\n')).toContain('ADVISORY_REFRESH_INTERVAL');
    expect(daemon.lines).toEqual([]);
  });

  it('exits 1 when it cannot listen, and lets the state directory go', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const daemon = start({ ...s.env, ADVISORY_LISTEN: `127.0.0.1:${port}` });
      expect(await daemon.done).toBe(1);
      expect(daemon.errors).toEqual([
        `error: ADVISORY_LISTEN: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`,
      ]);
      const release = await lockDataDir(s.stateDir);
      await release();
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('waits while another process holds the state directory, says so once, and may be stopped meanwhile', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    mkdirSync(s.stateDir, { recursive: true });
    const release = await lockDataDir(s.stateDir);
    try {
      const daemon = start(s.env);
      await daemon.line(/another advisory process holds ADVISORY_STATE_DIR; waiting for it to finish/);
      signal('SIGINT');
      expect(await daemon.done).toBe(0);
      expect(daemon.lines).toEqual([
        'another advisory process holds ADVISORY_STATE_DIR; waiting for it to finish',
      ]);
    } finally {
      await release();
    }
  });

  it('starts once the state directory is free, having said it waits only once', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    mkdirSync(s.stateDir, { recursive: true });
    const release = await lockDataDir(s.stateDir);
    const daemon = start(s.env);
    await daemon.line(/waiting for it to finish/);
    // Held a while longer: not a synchronisation (the test holds however many times it
    // tries meanwhile), a chance for it to try again (once a second) and keep silent.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await release();
    await daemon.line(/dashboard on/);
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
    expect(daemon.lines.filter((l) => /waiting/.test(l))).toHaveLength(1);
  });

  it('serves HTTPS with the certificate files, and takes new ones on SIGHUP', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const certFile = path.join(s.dir, 'dashboard.crt');
    const keyFile = path.join(s.dir, 'dashboard.key');
    writePair(first, certFile, keyFile);
    const daemon = start({ ...s.env, ADVISORY_TLS_CERT: certFile, ADVISORY_TLS_KEY: keyFile });
    const [, port] = await daemon.line(/dashboard on https:\/\/127\.0\.0\.1:(\d+)\//);
    await daemon.line(/^TLS certificate: CN=advisory\.test, /);
    const trusting = [first.cert, renewed.cert];
    expect(await servedFingerprint(Number(port), trusting)).toBe(first.fingerprint);
    writePair(renewed, certFile, keyFile);
    signal('SIGHUP');
    await daemon.line(/^SIGHUP: TLS certificate reloaded: CN=advisory-renewed\.test, /);
    expect(await servedFingerprint(Number(port), trusting)).toBe(renewed.fingerprint);
    writeFileSync(keyFile, 'not a key', { mode: 0o600 });
    signal('SIGHUP');
    await daemon.line(
      /^error: SIGHUP: TLS certificate not reloaded: .*; still serving CN=advisory-renewed\.test, /,
    );
    expect(await servedFingerprint(Number(port), trusting)).toBe(renewed.fingerprint);
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
  });
});
