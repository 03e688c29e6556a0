import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDataDir } from '../../common/src/data-dir-lock.ts';
import { runsIf } from '../../scripts/test-skip.ts';
import { until, watchOutput } from '../../scripts/test-wait.ts';
import { publish, setup, startFeedServer, widgetAdvisories } from './support/appliance.ts';
import { advisoryYaml } from './support/feed.ts';

/**
 * The appliance as a process: killed at random moments of a refresh, its cache is always
 * a whole feed; run under strace, it connects to nothing but the feed and its alert
 * targets; it stops cleanly on SIGTERM.
 */
const bin = path.resolve(import.meta.dirname, '../bin/advisory.mjs');
const feedBin = path.resolve(import.meta.dirname, '../bin/advisory-feed.mjs');
const DAY = 86_400_000;

/** Many advisories, so that writing the cache takes long enough to be killed in the middle. */
function bigFeed(version: number): Record<string, string> {
  const files: Record<string, string> = { ...widgetAdvisories };
  for (let i = 0; i < 1200; i++) {
    files[`bulk/b-${i}.yaml`] = advisoryYaml({
      id: `BULK-${i}`,
      product: 'gadget',
      affects: `"<${version}.0.0"`,
      verdict: 'install',
      recommended_version: `"${version}.0"`,
      effective: '2020-01-01',
      expires: '2099-01-01',
    });
  }
  return files;
}

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { ipc?: boolean } = {},
): { child: ChildProcess; done: Promise<number | null> } {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env },
    // With an IPC channel, as `npm start` starts it.
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
  });
  // 'close', not 'exit': the output is read to its end before the test looks at it.
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, done };
}

function cacheVersion(cacheDir: string, keyFile: string): string | null {
  if (!existsSync(cacheDir)) return null;
  const result = spawnSync(
    process.execPath,
    [feedBin, 'verify', '--feed', cacheDir, '--public-key', keyFile],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`the cache does not verify: ${result.stderr}${result.stdout}`);
  return /^feed (\S+) OK/.exec(result.stdout)?.[1] ?? 'unreadable output';
}

/** The cache's copies beside it (`.feed.copy-<hex>`): the one in use, and any being written. */
function copies(cacheDir: string): string[] {
  const base = path.basename(cacheDir);
  return readdirSync(path.dirname(cacheDir)).filter((name) => name.startsWith(`.${base}.copy-`));
}

describe('the feed cache under kill -9', () => {
  it('holds the old feed or the new one, whole, wherever a refresh is killed', async () => {
    const rounds = 10;
    const start = Date.now() - (rounds + 3) * DAY;
    const s = setup({ publishedAt: new Date(start), files: bigFeed(1) });
    expect(await run(['check'], s.env).done).toBe(1);
    // One undisturbed refresh as the killed ones will be (re-verify the cache, take a new
    // feed): how long it takes here tells where to kill them.
    publish(s, bigFeed(2), new Date(start + DAY));
    const began = Date.now();
    expect(await run(['check'], s.env).done).toBe(1);
    const full = Date.now() - began;
    let accepted = cacheVersion(s.cacheDir, s.keyFile);
    expect(accepted).toBe(new Date(start + DAY).toISOString().slice(0, 10).replaceAll('-', '.'));
    let killedWhileCopying = 0;
    for (let round = 2; round <= rounds + 1; round++) {
      const publishedAt = new Date(start + round * DAY);
      publish(s, bigFeed(round + 1), publishedAt);
      const offered = publishedAt.toISOString().slice(0, 10).replaceAll('-', '.');
      // Copies a kill left before this round do not count as this round's.
      const before = new Set(copies(s.cacheDir));
      const newCopy = () => copies(s.cacheDir).some((name) => !before.has(name));
      const { child, done } = run(['check'], s.env);
      let exited = false;
      void done.then(() => {
        exited = true;
      });
      if (round % 2 === 1) {
        // Anywhere in the refresh, start-up included.
        await new Promise((resolve) => setTimeout(resolve, Math.floor(full * (0.3 + 0.7 * Math.random()))));
      } else {
        // Once the new copy is being written, a little into it; the first time at once, so
        // that at least one kill lands while it is written however fast this machine is now.
        while (!exited && !newCopy()) await new Promise((resolve) => setTimeout(resolve, 2));
        if (round > 2)
          await new Promise((resolve) => setTimeout(resolve, Math.floor(full * 0.2 * Math.random())));
      }
      const copying = newCopy();
      child.kill('SIGKILL');
      const code = await done;
      const now = cacheVersion(s.cacheDir, s.keyFile);
      expect([accepted, offered], `round ${round}: the cache holds ${now}`).toContain(now);
      if (code === null && copying && now === accepted) killedWhileCopying += 1;
      accepted = now;
      // What the state remembers is whole JSON, never a torn write.
      JSON.parse(readFileSync(path.join(s.stateDir, 'accepted.json'), 'utf8'));
    }
    // Undisturbed, the next refresh brings the cache to the newest feed.
    expect(await run(['check'], s.env).done).toBe(1);
    expect(cacheVersion(s.cacheDir, s.keyFile)).toBe(
      new Date(start + (rounds + 1) * DAY).toISOString().slice(0, 10).replaceAll('-', '.'),
    );
    // The log of all those interrupted refreshes still verifies.
    const verify = spawnSync(process.execPath, [bin, 'log', 'verify', '--state-dir', s.stateDir], {
      encoding: 'utf8',
    });
    expect(verify.stdout).toMatch(/^HASH CHAIN INTACT/);
    expect(killedWhileCopying, 'some kills must land while the new copy was written').toBeGreaterThan(0);
    // And the copies those kills left half-written are gone: only the one in use remains.
    expect(copies(s.cacheDir)).toHaveLength(1);
    // (2 × rounds + 4) process runs one after the other (checks of a 1,200-advisory feed and
    // verifies of its cache), 15 s each on a loaded machine: 180 s ran out at a load of 20.
  }, 360_000);
});

const strace = spawnSync('strace', ['-V'], { stdio: 'ignore' }).error === undefined;
if (process.env.REQUIRE_STRACE && !strace)
  throw new Error('strace is required (REQUIRE_STRACE is set) but not installed');
const NEEDS_STRACE = 'needs strace (Debian package; scripts/install-system-packages.sh)';

describe('no phone-home', runsIf(strace, NEEDS_STRACE), () => {
  it('connects only to the feed and the configured alert targets', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const feed = await startFeedServer(s.feedDir);
    const received: string[] = [];
    const hook = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        received.push(request.url ?? '');
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const hookPort = (hook.address() as AddressInfo).port;
    const feedPort = Number(new URL(feed.url).port);
    const trace = path.join(s.dir, 'connect.trace');
    const child = spawn(
      'strace',
      ['-f', '-qq', '-e', 'trace=connect', '-o', trace, process.execPath, bin, 'run'],
      {
        env: {
          ...process.env,
          ...s.env,
          ADVISORY_FEED_URL: feed.url,
          ADVISORY_NOTIFY_WEBHOOK_URL: `http://127.0.0.1:${hookPort}/alert`,
          ADVISORY_LISTEN: '127.0.0.1:0',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group: SIGTERM reaches strace and the appliance it runs.
        detached: true,
      },
    );
    let output = '';
    child.stdout?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    try {
      // The first alert, once sent: the test's timeout bounds the wait.
      await until(() => received.length > 0, 100);
      expect(received, output).toEqual(['/alert']);
    } finally {
      process.kill(-(child.pid as number), 'SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
      hook.close();
      await feed.close();
    }
    const connects = readFileSync(trace, 'utf8')
      .split('\n')
      .filter((line) => line.includes('connect('));
    const inet = connects.filter((line) => /AF_INET6?/.test(line));
    expect(inet.length).toBeGreaterThan(0);
    const targets = new Set(
      inet.map((line) => {
        const port = /htons\((\d+)\)/.exec(line)?.[1];
        const address = /inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"/.exec(line);
        return `${address?.[1] ?? address?.[2]}:${port}`;
      }),
    );
    expect([...targets].sort()).toEqual([`127.0.0.1:${feedPort}`, `127.0.0.1:${hookPort}`].sort());
    writeFileSync(path.join(s.dir, 'targets.txt'), [...targets].join('\n'));
  }, 90_000);
});

describe('advisory run', () => {
  it('serves /health, and stops cleanly on SIGTERM', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const { child, done } = run(['run'], { ...s.env, ADVISORY_LISTEN: '127.0.0.1:0' });
    const output = watchOutput(child.stdout);
    const url = (await output.waitFor(/dashboard on (\S+)/))[1] as string;
    // Listening at once, serving the feed once its first refresh has verified it.
    let health = await fetch(`${url}health`);
    await until(async () => {
      health = await fetch(`${url}health`);
      return health.status === 200;
    }, 100);
    expect(await health.json()).toMatchObject({ status: 'ok', feed: { from: 'live' } });
    child.kill('SIGTERM');
    expect(await done).toBe(0);
    expect(output.text()).toMatch(/SIGTERM: stopping/);
  }, 60_000);

  it('prints only JSON lines on stderr from start to stop: no warning of a library among them', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const { child, done } = run(['run'], {
      ...s.env,
      ADVISORY_LISTEN: '127.0.0.1:0',
      ADVISORY_LOG_LEVEL: 'debug',
      ADVISORY_DASHBOARD_USER: 'operator',
      ADVISORY_DASHBOARD_PASSWORD: 'correct horse battery',
    });
    const output = watchOutput(child.stdout);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const url = (await output.waitFor(/dashboard on (\S+)/))[1] as string;
    // A refresh logged, and the dashboard's own lines (a failed login).
    await until(() => stderr.includes('feed accepted'), 100);
    await fetch(`${url}health`);
    await fetch(url, {
      headers: { authorization: `Basic ${Buffer.from('operator:wrong').toString('base64')}` },
    });
    await until(() => stderr.includes('dashboard login failed'), 100);
    child.kill('SIGTERM');
    expect(await done).toBe(0);
    const lines = stderr.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(stderr).not.toMatch(/Warning|FSTDEP/);
  }, 60_000);

  // 19 runs of the appliance, one after the other: 10 s a run is room for a loaded machine.
  it('stops at once with the variable named when the configuration is wrong (exit 2)', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const fifo = path.join(s.dir, 'a-fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    for (const [change, variable] of [
      [{ ADVISORY_REFRESH_INTERVAL: '6 hours' }, 'ADVISORY_REFRESH_INTERVAL'],
      [{ ADVISORY_LISTEN: 'everywhere' }, 'ADVISORY_LISTEN'],
      [{ ADVISORY_PUBLIC_KEYS: path.join(s.dir, 'missing.pub') }, 'ADVISORY_PUBLIC_KEYS'],
      [{ ADVISORY_INVENTORY: s.keyFile }, 'ADVISORY_INVENTORY'],
      [{ ADVISORY_FEED_URL: 'ftp://feed.example/' }, 'ADVISORY_FEED_URL'],
      [{ ADVISORY_SMTP_URL: 'smtp://mail.lan:587' }, 'ADVISORY_SMTP_FROM'],
      [
        {
          ADVISORY_SMTP_URL: 'smtp://mail.lan:587',
          ADVISORY_SMTP_FROM: 'advisory@example.org',
          ADVISORY_SMTP_TO: 'ops@example.org',
          ADVISORY_SMTP_CA_FILE: path.join(s.dir, 'missing-ca.pem'),
        },
        'ADVISORY_SMTP_CA_FILE',
      ],
      [
        {
          ADVISORY_SMTP_URL: 'smtp://mail.lan:587',
          ADVISORY_SMTP_FROM: 'advisory@example.org',
          ADVISORY_SMTP_TO: 'ops@example.org',
          ADVISORY_SMTP_CA_FILE: s.keyFile,
        },
        'ADVISORY_SMTP_CA_FILE',
      ],
      [{ ADVISORY_STATE_DIR: s.keyFile }, 'ADVISORY_STATE_DIR'],
      // The inventory open to the network without credentials, unless explicitly meant.
      [{ ADVISORY_LISTEN: '0.0.0.0:0' }, 'ADVISORY_LISTEN'],
      [{ ADVISORY_LISTEN: '0.0.0.0:0', ADVISORY_DASHBOARD_OPEN: 'yes' }, 'ADVISORY_DASHBOARD_OPEN'],
      [{ ADVISORY_TRUST_PROXY: 'true' }, 'ADVISORY_TRUST_PROXY'],
      // "Every address" written as ranges: refused as true is, before anything is opened.
      [{ ADVISORY_TRUST_PROXY: '0.0.0.0/0' }, 'ADVISORY_TRUST_PROXY'],
      [{ ADVISORY_TRUST_PROXY: '1' }, 'ADVISORY_TRUST_PROXY'],
      [{ ADVISORY_DASHBOARD_HOSTS: 'advisory.lan, not a name' }, 'ADVISORY_DASHBOARD_HOSTS'],
      [{ ADVISORY_FEED_CACHE: s.dir }, 'ADVISORY_FEED_CACHE'],
      // A FIFO where a file should be is refused at once, never waited on.
      [{ ADVISORY_PUBLIC_KEYS: fifo }, 'ADVISORY_PUBLIC_KEYS'],
      [{ ADVISORY_INVENTORY: fifo }, 'ADVISORY_INVENTORY'],
      [
        {
          ADVISORY_SMTP_URL: 'smtp://mail.lan:587',
          ADVISORY_SMTP_FROM: 'advisory@example.org',
          ADVISORY_SMTP_TO: 'ops@example.org',
          ADVISORY_SMTP_CA_FILE: fifo,
        },
        'ADVISORY_SMTP_CA_FILE',
      ],
    ] as const) {
      const { child, done } = run(['run'], { ...s.env, ...change });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      expect(await done, variable).toBe(2);
      expect(stderr, variable).toContain(`configuration error: ${variable}:`);
      expect(stderr, variable).not.toMatch(/^\s+at /m);
      // Nothing left holding the state directory: the next start is not kept waiting.
      expect(existsSync(path.join(s.env.ADVISORY_STATE_DIR as string, 'lock')), variable).toBe(false);
    }
  }, 200_000);
});

describe('as an unprivileged user', () => {
  // Containers and systemd units run the appliance as a user that owns its state
  // directory and nothing around it (a volume, StateDirectory=). Needs root to switch.
  const root = process.getuid?.() === 0;
  const NOBODY = 65534;

  it(
    'checks and serves with a state directory inside a folder it cannot write',
    runsIf(root, 'needs root: switches to the user nobody', { timeout: 60_000 }),
    async () => {
      const s = setup({ publishedAt: new Date(Date.now() - DAY) });
      chmodSync(s.dir, 0o755);
      chmodSync(s.feedDir, 0o755);
      const parent = path.join(s.dir, 'var-lib');
      mkdirSync(parent, { mode: 0o755 });
      const stateDir = path.join(parent, 'advisory');
      mkdirSync(stateDir, { mode: 0o700 });
      chownSync(stateDir, NOBODY, NOBODY);
      const env = {
        ...process.env,
        ...s.env,
        ADVISORY_STATE_DIR: stateDir,
        ADVISORY_FEED_CACHE: path.join(stateDir, 'feed-cache'),
        ADVISORY_LISTEN: '127.0.0.1:0',
      };
      const check = spawnSync(process.execPath, [bin, 'check'], {
        env,
        uid: NOBODY,
        gid: NOBODY,
        encoding: 'utf8',
      });
      expect(check.status, `${check.stdout}${check.stderr}`).toBe(1);
      expect(check.stdout).toMatch(/^old-box +eol /m);

      const child = spawn(process.execPath, [bin, 'run'], {
        env,
        uid: NOBODY,
        gid: NOBODY,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const done = new Promise<string>((resolve) =>
        child.on('exit', (code, signal) => resolve(`${code} ${signal}`)),
      );
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /dashboard on (http\S+)/.exec(out);
          if (match) resolve(match[1] as string);
        });
        child.once('exit', (code) => reject(new Error(`advisory run exited ${code}: ${stderr}`)));
      });
      expect((await fetch(`${url}health`)).status).toBe(200);
      child.kill('SIGTERM');
      expect(await done, stderr).toBe('0 null');
    },
  );
});

describe('advisory run under a service manager', () => {
  function started(env: NodeJS.ProcessEnv) {
    const { child, done } = run(['run'], { ...env, ADVISORY_LISTEN: '127.0.0.1:0' });
    const out = watchOutput(child.stdout, child.stderr);
    return { child, done, waitFor: (pattern: RegExp) => out.waitFor(pattern), output: out.text };
  }

  it('stops within seconds on SIGTERM while a refresh waits on a feed host that never answers', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const server = await startFeedServer(s.feedDir);
    server.mode = 'slow';
    try {
      const daemon = started({ ...s.env, ADVISORY_FEED_URL: server.url, ADVISORY_FEED_TIMEOUT: '10m' });
      await daemon.waitFor(/dashboard on/);
      // The refresh waits on the feed host.
      await until(() => server.requests.length > 0, 50);
      const t0 = Date.now();
      daemon.child.kill('SIGTERM');
      expect(await daemon.done).toBe(0);
      // It gives the refresh 8 s, then stops: far sooner than the feed's 10 minutes would
      // allow, with room for a loaded machine.
      expect(Date.now() - t0).toBeLessThan(60_000);
      expect(daemon.output()).toMatch(/did not finish within 8 s; stopping without it/);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('two checks started together on a fresh install: the second waits for the first, then runs in full', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    const runs = [run(['check'], s.env), run(['check'], s.env)].map(({ child, done }) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      return done.then((code) => ({ code, out }));
    });
    const results = await Promise.all(runs);
    for (const result of results) {
      expect(result.code).toBe(1);
      expect(result.out).not.toContain('holds the state directory');
      expect(result.out).toMatch(/^new-box +install +widget 2.1 -> 2.5/m);
    }
    const kinds = readFileSync(path.join(s.stateDir, 'decisions.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { kind: string }).kind);
    expect(kinds).toEqual(['feed-accepted', 'initial-evaluation']);
  }, 60_000);

  it('check beside the process holding the state directory reads its cache and writes nothing', async () => {
    const publishedAt = new Date(Date.now() - DAY);
    const s = setup({ publishedAt });
    expect(await run(['check'], s.env).done).toBe(1);
    const log = path.join(s.stateDir, 'decisions.jsonl');
    const before = readFileSync(log, 'utf8');
    const release = await lockDataDir(s.stateDir);
    try {
      const { child, done } = run(['check'], s.env);
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      expect(await done).toBe(1);
      expect(out).toContain(
        'another advisory process (the daemon) holds the state directory: evaluated from its cache, nothing written',
      );
      expect(out).toMatch(/^new-box +install +widget 2.1 -> 2.5/m);
      expect(out).toContain(
        `feed ${publishedAt.toISOString().slice(0, 10).replaceAll('-', '.')} from the cache`,
      );
      expect(readFileSync(log, 'utf8')).toBe(before);
    } finally {
      await release();
    }
  }, 60_000);

  it('check beside the daemon reports the problems of its /health (refused feed, failing webhook), exit 1', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    expect(await run(['check'], s.env).done).toBe(1);
    // The live feed now fails its signature; alerts go to an address nobody answers at.
    writeFileSync(path.join(s.feedDir, 'manifest.yaml'), '# tampered\n', { flag: 'a' });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const daemon = started({
      ...s.env,
      ADVISORY_NOTIFY_WEBHOOK_URL: `http://127.0.0.1:${port}/hook`,
      ADVISORY_ALERT_ATTEMPTS: '1',
    });
    try {
      const url = (await daemon.waitFor(/dashboard on (\S+)/))[1] as string;
      let codes: string[] = [];
      await until(async () => {
        const body = (await (await fetch(`${url}health`)).json()) as { problems: { code: string }[] };
        codes = body.problems.map((p) => p.code).sort();
        return codes.includes('feed-refused') && codes.includes('alerts-failing-webhook');
      }, 100);
      const json = run(['check', '--json'], s.env);
      let out = '';
      json.child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      expect(await json.done).toBe(1);
      const document = JSON.parse(out) as { health: { status: string; problems: { code: string }[] } };
      expect(document.health.status).toBe('degraded');
      expect(document.health.problems.map((p) => p.code).sort()).toEqual(codes);
      const text = run(['check'], s.env);
      let table = '';
      text.child.stdout?.on('data', (chunk: Buffer) => {
        table += chunk.toString();
      });
      expect(await text.done).toBe(1);
      expect(table).toContain('holds the state directory');
      expect(table).toMatch(/^warning: the feed from the feed directory was refused: .*signature/m);
      expect(table).toMatch(/^warning: alert delivery by webhook keeps failing/m);
      expect(table).toMatch(/the appliance needs attention: .*feed-refused/);
    } finally {
      daemon.child.kill('SIGTERM');
      expect(await daemon.done).toBe(0);
    }
  }, 120_000);

  it('check beside the daemon whose kept health is damaged says so, never ok (exit 1)', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    expect(await run(['check'], s.env).done).toBe(1);
    writeFileSync(path.join(s.stateDir, 'health.json'), '{"at":');
    const release = await lockDataDir(s.stateDir);
    try {
      const { child, done } = run(['check', '--json'], s.env);
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      expect(await done).toBe(1);
      const document = JSON.parse(out) as {
        health: { status: string; problems: { code: string; message: string }[] };
      };
      expect(document.health.status).toBe('degraded');
      expect(document.health.problems).toEqual([
        expect.objectContaining({
          code: 'refresh-failed',
          message: expect.stringContaining('health.json: not JSON'),
        }),
      ]);
    } finally {
      await release();
    }
  }, 60_000);

  it('waits while another process holds the state directory, then starts', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY) });
    mkdirSync(s.stateDir, { recursive: true });
    const release = await lockDataDir(s.stateDir);
    const daemon = started(s.env);
    try {
      await daemon.waitFor(/another advisory process holds ADVISORY_STATE_DIR; waiting for it to finish/);
      // Longer than one retry (1 s): still waiting, neither serving nor gone. A wait for what
      // must not happen: a slower machine retries less often meanwhile, which cannot make
      // this fail wrongly.
      await new Promise((r) => setTimeout(r, 2500));
      expect(daemon.output()).not.toMatch(/dashboard on/);
      expect(daemon.child.exitCode).toBeNull();
      await release();
      await daemon.waitFor(/dashboard on/);
    } finally {
      daemon.child.kill('SIGTERM');
    }
    expect(await daemon.done).toBe(0);
  }, 60_000);

  it.each([
    ['', false],
    [', started with an IPC channel as npm start does', true],
  ])(
    'exits 1 (to be restarted) when its address is taken%s',
    async (_, ipc) => {
      const s = setup({ publishedAt: new Date(Date.now() - DAY) });
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      try {
        const port = (blocker.address() as AddressInfo).port;
        const { child, done } = run(['run'], { ...s.env, ADVISORY_LISTEN: `127.0.0.1:${port}` }, { ipc });
        let stderr = '';
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        expect(await done).toBe(1);
        expect(stderr).toContain(`ADVISORY_LISTEN: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
      } finally {
        blocker.close();
      }
    },
    30_000,
  );
});
