import { existsSync, mkdirSync, watch, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';
import { Server as TlsServer } from 'node:tls';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { lockDataDir } from '../../../../common/src/data-dir-lock.ts';
import { until } from '../../../../scripts/test-wait.ts';
import { runAdvisoryCli } from '../../../src/cli/advisory/main.ts';
import { CLIENT_VERSION } from '../../../src/version.ts';
import { setup, startFeedServer } from '../../support/appliance.ts';
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

/** A setup with `first`'s certificate and key written beside it, where SIGHUP reads them. */
function withFirstPair() {
  const s = setup({ publishedAt: new Date(Date.now() - DAY) });
  const certFile = path.join(s.dir, 'dashboard.crt');
  const keyFile = path.join(s.dir, 'dashboard.key');
  writePair(first, certFile, keyFile);
  return { s, certFile, keyFile };
}

function start(env: NodeJS.ProcessEnv, argv: string[] = ['run']) {
  // A worker without the channel (a thread) has no disconnect: nothing to let go of there.
  if (typeof process.disconnect === 'function')
    vi.spyOn(process, 'disconnect').mockImplementation(() => {
      disconnects += 1;
    });
  const lines: string[] = [];
  const errors: string[] = [];
  const done = runAdvisoryCli(
    argv,
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
    const { s, certFile, keyFile } = withFirstPair();
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

  it('takes a pair renewed by SIGHUP while it waits for the state directory', async () => {
    const { s, certFile, keyFile } = withFirstPair();
    mkdirSync(s.stateDir, { recursive: true });
    const release = await lockDataDir(s.stateDir);
    const daemon = start({ ...s.env, ADVISORY_TLS_CERT: certFile, ADVISORY_TLS_KEY: keyFile });
    try {
      await daemon.line(/waiting for it to finish/);
      writePair(renewed, certFile, keyFile);
      signal('SIGHUP');
      await daemon.line(/^SIGHUP: TLS certificate reloaded: CN=advisory-renewed\.test, /);
    } finally {
      await release();
    }
    const [, port] = await daemon.line(/dashboard on https:\/\/127\.0\.0\.1:(\d+)\//);
    expect(daemon.lines).toContainEqual(
      expect.stringMatching(/^TLS certificate: CN=advisory-renewed\.test, /),
    );
    expect(await servedFingerprint(Number(port), [first.cert, renewed.cert])).toBe(renewed.fingerprint);
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
  });

  it('keeps serving its pair when a reload fails other than by a bad file, and says why', async () => {
    const { s, certFile, keyFile } = withFirstPair();
    const daemon = start({ ...s.env, ADVISORY_TLS_CERT: certFile, ADVISORY_TLS_KEY: keyFile });
    const [, port] = await daemon.line(/dashboard on https:\/\/127\.0\.0\.1:(\d+)\//);
    writePair(renewed, certFile, keyFile);
    // A good pair that the server itself fails to take (OpenSSL out of memory, say): a
    // fault of Node's, not of the files, injected where Node takes the pair.
    vi.spyOn(TlsServer.prototype, 'setSecureContext').mockImplementation(() => {
      throw new Error('the server refused the context');
    });
    signal('SIGHUP');
    await daemon.line(/^error: SIGHUP: TLS certificate not reloaded/);
    expect(daemon.errors).toEqual([
      'error: SIGHUP: TLS certificate not reloaded: the server refused the context',
    ]);
    expect(await servedFingerprint(Number(port), [first.cert, renewed.cert])).toBe(first.fingerprint);
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
  });

  it('shows the trusted keys on its feed page, by key id', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const daemon = start(s.env);
    const [, url] = await daemon.line(/dashboard on (http:\/\/127\.0\.0\.1:\d+\/)/);
    const page = await (await fetch(`${url}feed`)).text();
    const trusted = /<dt>Trusted keys<\/dt><dd class="mono">([^<]*)<\/dd>/.exec(page);
    expect(trusted?.[1]).toBe(s.key.publicKey.keynum.toString('hex'));
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
  });

  it('bounds the connections of one client by ADVISORY_DASHBOARD_CLIENT_CONNECTIONS', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const daemon = start({ ...s.env, ADVISORY_DASHBOARD_CLIENT_CONNECTIONS: '1' });
    const [, url, port] = await daemon.line(/dashboard on (http:\/\/127\.0\.0\.1:(\d+)\/)/);
    // One connection, answered (so the dashboard has counted it) and kept open.
    const held: Socket = connect(Number(port), '127.0.0.1');
    const answer = new Promise<string>((resolve) => held.once('data', (d: Buffer) => resolve(d.toString())));
    held.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect(await answer).toMatch(/^HTTP\/1\.1 /);
    try {
      await expect(fetch(`${url}health`)).rejects.toThrow();
    } finally {
      held.destroy();
    }
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
  });

  it('answers to the host name it listens on and to ADVISORY_DASHBOARD_HOSTS', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const name = hostname().toLowerCase();
    const daemon = start({
      ...s.env,
      ADVISORY_LISTEN: `${name}:0`,
      ADVISORY_DASHBOARD_OPEN: 'true',
      ADVISORY_DASHBOARD_HOSTS: 'advisory.example.org',
    });
    const [, port] = await daemon.line(
      new RegExp(`dashboard on http://${name.replace(/\./g, '\\.')}:(\\d+)/`),
    );
    // Healthy or not yet (no refresh so far), but not 421, an unknown host name.
    expect([200, 503]).toContain((await fetch(`http://${name}:${port}/health`)).status);
    const other = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), name);
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.end(`GET /health HTTP/1.1\r\nHost: advisory.example.org\r\nConnection: close\r\n\r\n`);
    });
    expect(other).toMatch(/^HTTP\/1\.1 (200|503) /);
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
  });

  it('writes an IPv6 listen address in brackets', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const daemon = start({ ...s.env, ADVISORY_LISTEN: '[::1]:0' });
    const [, url] = await daemon.line(/dashboard on (\S+) /);
    expect(url).toMatch(/^http:\/\/\[::1\]:\d+\/$/);
    expect([200, 503]).toContain((await fetch(`${url}health`)).status);
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
  });

  it('stops at once, without waiting, on an error opening the state directory other than its lock', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    // A file where the state directory should be.
    writeFileSync(s.stateDir, 'not a directory');
    const daemon = start(s.env);
    // A setting only a person can fix: exit 2, not the wait meant for another process.
    expect(await daemon.done).toBe(2);
    expect(daemon.lines).toEqual([]);
    expect(daemon.errors).toEqual([
      `configuration error: ADVISORY_STATE_DIR: ${s.stateDir}: not a directory`,
    ]);
  });

  it('refuses a dashboard reachable from other machines without credentials, before opening anything (exit 2)', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const daemon = start({ ...s.env, ADVISORY_LISTEN: '0.0.0.0:0' });
    expect(await daemon.done).toBe(2);
    expect(daemon.lines).toEqual([]);
    expect(daemon.errors).toEqual([
      expect.stringMatching(
        /^configuration error: ADVISORY_LISTEN: 0\.0\.0\.0 is reachable from other machines and no dashboard credentials are set: /,
      ),
    ]);
    expect(existsSync(s.stateDir)).toBe(false);
  });

  it('refuses to send the dashboard password in clear to other machines (exit 2)', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const daemon = start({
      ...s.env,
      ADVISORY_LISTEN: '0.0.0.0:0',
      ADVISORY_DASHBOARD_USER: 'operator',
      ADVISORY_DASHBOARD_PASSWORD: 'a long enough secret',
    });
    expect(await daemon.done).toBe(2);
    expect(daemon.lines).toEqual([]);
    expect(daemon.errors).toEqual([
      expect.stringMatching(
        /^configuration error: ADVISORY_LISTEN: 0\.0\.0\.0 is reachable from other machines and the dashboard password .* would cross the network in clear over plain HTTP: /,
      ),
    ]);
    expect(existsSync(s.stateDir)).toBe(false);
  });

  it('refreshes once started: /health turns healthy with the feed it pulled; it lets the state directory go when stopped', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const daemon = start({ ...s.env, ADVISORY_REFRESH_INTERVAL: '2h' });
    const [, url] = await daemon.line(/dashboard on (http:\/\/127\.0\.0\.1:\d+\/)/);
    await expect.poll(async () => (await fetch(`${url}health`)).status).toBe(200);
    const feed = await (await fetch(`${url}feed`)).text();
    expect(feed).toContain('2026.');
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
    // Nothing holds the state directory any more: another process may take it at once.
    const release = await lockDataDir(s.stateDir);
    await release();
  });

  it('refuses words after "run" (exit 2), before reading any setting', async () => {
    const daemon = start({}, ['run', 'now']);
    expect(await daemon.done).toBe(2);
    expect(daemon.lines).toEqual([]);
    expect(daemon.errors).toEqual([
      "Unexpected argument 'now'. This command does not take positional arguments (advisory run --help shows how)",
    ]);
  });

  it('lets go of the IPC channel of a parent that started it (npm start), however it ends', async () => {
    // The channel as a parent's fork gives it (vitest's forks have one; a thread has not).
    const connected = Object.getOwnPropertyDescriptor(process, 'connected');
    const disconnect = Object.getOwnPropertyDescriptor(process, 'disconnect');
    Object.defineProperty(process, 'connected', { configurable: true, writable: true, value: true });
    if (!disconnect)
      Object.defineProperty(process, 'disconnect', {
        configurable: true,
        writable: true,
        value: () => undefined,
      });
    try {
      const before = disconnects;
      const s = setup({ publishedAt: new Date(Date.now() - DAY) });
      const daemon = start({ ...s.env, ADVISORY_REFRESH_INTERVAL: 'soon' });
      expect(await daemon.done).toBe(2);
      expect(disconnects).toBe(before + 1);
    } finally {
      vi.restoreAllMocks();
      for (const [name, descriptor] of [
        ['connected', connected],
        ['disconnect', disconnect],
      ] as const) {
        if (descriptor) Object.defineProperty(process, name, descriptor);
        else Reflect.deleteProperty(process, name);
      }
    }
  });

  it('tries the state directory again once a second while it waits, not in a loop', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    mkdirSync(s.stateDir, { recursive: true });
    const release = await lockDataDir(s.stateDir);
    // Each try at the lock makes a directory of its own there (.lock.new-*) first.
    const tries = new Set<string>();
    const watcher = watch(s.stateDir, (_event, name) => {
      if (name?.startsWith('.lock.new-')) tries.add(name);
    });
    const since = performance.now();
    const daemon = start(s.env);
    try {
      await daemon.line(/waiting for it to finish/);
      await until(() => tries.size >= 3);
    } finally {
      await release();
    }
    const tried = tries.size;
    const seconds = (performance.now() - since) / 1000;
    watcher.close();
    await daemon.line(/dashboard on/);
    signal('SIGTERM');
    expect(await daemon.done).toBe(0);
    // The first try at once, then one a second at most (timers never run early).
    expect(tried).toBeLessThanOrEqual(Math.floor(seconds) + 2);
  });

  it('stops within its grace when a refresh hangs on the feed host, says so, and exits 0', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const host = await startFeedServer(s.feedDir);
    host.mode = 'slow';
    // Past the grace the daemon leaves by process.exit: recorded here, the test's worker stays.
    const exits: unknown[] = [];
    vi.spyOn(process, 'exit').mockImplementation((code) => {
      exits.push(code);
      return undefined as never;
    });
    try {
      const daemon = start({ ...s.env, ADVISORY_FEED_URL: host.url });
      await daemon.line(/dashboard on/);
      await until(() => host.requests.length > 0);
      signal('SIGTERM');
      await daemon.line(/did not finish/);
      expect(daemon.errors).toEqual([
        'the refresh in progress did not finish within 8 s; stopping without it',
      ]);
      expect(exits).toEqual([0]);
      expect(await daemon.done).toBe(0);
    } finally {
      // The held pull fails at once, and the refresh with it: the appliance lets go.
      await host.close();
    }
  });
});
