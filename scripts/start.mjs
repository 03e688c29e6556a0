#!/usr/bin/env node
// `npm start`: both products side by side on embedded defaults, and where to go.
//
//  - The scheduler from its TypeScript sources (tsx; `npm run dev -w scheduler` does the
//    same): PGlite in scheduler/data, the local development issuer unless AUTH_ISSUER is set,
//    and with it the demo week (DEMO_DATA; DEMO_DATA=false leaves it out) for the staff app
//    at /app/, whose sign-in lists the demo people.
//  - The advisory appliance: on first run this makes a local demo signing key (kept in the
//    demo folder, never committed), builds and signs the sample feed into that folder, and
//    runs `advisory run` on it with the demo inventory and dashboard credentials of its
//    own. A later `npm start` reuses all of it (and rebuilds the demo feed if it expired).
//
// Signal safety: npm 11 forwards SIGINT and SIGTERM only to its `sh -c` child, so the npm
// script `exec`s this file (no shell in between). This process spawns both servers
// directly, each over an IPC channel; each shuts down when that channel closes, so neither
// outlives this process, however it ends. If either exits, the other is stopped and this
// process exits with that exit code.
//
// Ctrl-C: the terminal sends SIGINT to every process of its foreground process group, and
// npm passes it on to this process as well. Were the servers in that group, each would get
// the terminal's SIGINT and then this process's SIGTERM: two stop requests, and a second
// one means "stop at once" (the appliance's forced path). So each server runs in a process
// group of its own (detached) and is asked to stop exactly once, by this process.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const port = process.env.PORT ?? '8080';
const host = process.env.HOST ?? '127.0.0.1';
const devIssuer = !process.env.AUTH_ISSUER;
const demoDir = path.resolve(process.env.ADVISORY_DEMO_DIR ?? path.join(root, 'advisory', 'data'));
const listen = process.env.ADVISORY_LISTEN ?? '127.0.0.1:8090';
const feedTool = path.join(root, 'advisory', 'bin', 'advisory-feed.mjs');

/** Runs `advisory-feed …`; stops `npm start` with its message when it fails. */
function feedCommand(args) {
  const result = spawnSync(process.execPath, [feedTool, ...args], { encoding: 'utf8' });
  if (result.status !== 0) {
    console.error(`[start] advisory-feed ${args[0]} failed:\n${result.stderr}${result.stdout}`);
    process.exit(result.status ?? 1);
  }
  return result.stdout;
}

/** The demo key, feed and credentials: made once, reused after. */
function prepareAdvisoryDemo() {
  mkdirSync(demoDir, { recursive: true, mode: 0o700 });
  const secretKey = path.join(demoDir, 'demo-feed.sec');
  const publicKey = path.join(demoDir, 'demo-feed.pub');
  const feed = path.join(demoDir, 'feed');
  if (!existsSync(secretKey)) {
    feedCommand([
      'keygen',
      '--secret-key',
      secretKey,
      '--public-key',
      publicKey,
      '--comment',
      'local demo feed',
    ]);
  }
  const verified = existsSync(path.join(feed, 'manifest.yaml.sig'))
    ? spawnSync(process.execPath, [feedTool, 'verify', '--feed', feed, '--public-key', publicKey], {
        encoding: 'utf8',
      }).status === 0
    : false;
  if (!verified) {
    rmSync(feed, { recursive: true, force: true });
    const sample = path.join(root, 'advisory', 'sample-feed');
    for (const entry of readdirSync(sample)) {
      if (statSync(path.join(sample, entry)).isDirectory())
        cpSync(path.join(sample, entry), path.join(feed, entry), { recursive: true });
    }
    feedCommand(['build', '--feed', feed, '--expires-in', '26w']);
    feedCommand(['sign', '--feed', feed, '--secret-key', secretKey]);
  }
  const credentialsFile = path.join(demoDir, 'dashboard-credentials.json');
  if (!existsSync(credentialsFile)) {
    const credentials = { user: 'admin', password: randomBytes(15).toString('base64url') };
    writeFileSync(credentialsFile, `${JSON.stringify(credentials)}\n`, { mode: 0o600 });
  }
  const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8'));
  return {
    credentials,
    env: {
      ADVISORY_FEED_URL: feed,
      ADVISORY_PUBLIC_KEYS: publicKey,
      ADVISORY_INVENTORY:
        process.env.ADVISORY_INVENTORY ?? path.join(root, 'advisory', 'examples', 'demo-inventory.yaml'),
      ADVISORY_STATE_DIR: path.join(demoDir, 'state'),
      ADVISORY_FEED_CACHE: path.join(demoDir, 'feed-cache'),
      ADVISORY_REFRESH_INTERVAL: process.env.ADVISORY_REFRESH_INTERVAL ?? '15m',
      ADVISORY_LISTEN: listen,
      ADVISORY_DASHBOARD_USER: credentials.user,
      ADVISORY_DASHBOARD_PASSWORD: credentials.password,
      ADVISORY_LOG_LEVEL: process.env.ADVISORY_LOG_LEVEL ?? 'warn',
    },
  };
}

const demo = prepareAdvisoryDemo();
const children = {
  scheduler: spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: path.join(root, 'scheduler'),
    env: {
      ...process.env,
      PORT: port,
      HOST: host,
      ...(devIssuer ? { AUTH_DEV_ISSUER: 'true', DEMO_DATA: process.env.DEMO_DATA ?? 'true' } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  }),
  appliance: spawn(process.execPath, [path.join(root, 'advisory', 'bin', 'advisory.mjs'), 'run'], {
    env: { ...process.env, ...demo.env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    detached: true,
  }),
};

// Set when this process decides to stop: the exit code it will end with.
let stopping = null;
let running = 2;
for (const [name, child] of Object.entries(children)) {
  child.on('exit', (code, signal) => {
    running -= 1;
    if (stopping === null) {
      console.error(`[start] the ${name} exited (${signal ?? code})`);
      stop('SIGTERM', code ?? 1);
    }
    if (running === 0) process.exit(stopping ?? code ?? 1);
  });
}

function stop(signal, exitCode = 0) {
  if (stopping !== null) return;
  stopping = exitCode;
  for (const child of Object.values(children)) if (child.exitCode === null) child.kill(signal);
  // The servers finish in-flight work within 10 s; do not wait for ever.
  setTimeout(() => {
    for (const child of Object.values(children)) child.kill('SIGKILL');
  }, 15_000).unref();
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop('SIGTERM'));

// If whatever started this process goes away without a signal, stop too.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop('SIGTERM');
}, 1000).unref();

async function answers(url, tries, init) {
  for (let attempt = 0; attempt < tries && stopping === null; attempt++) {
    const response = await fetch(url, init).catch(() => undefined);
    if (response?.ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

// The scheduler says it is listening over IPC (so another server on the same port is
// never mistaken for it); the appliance prints its address. Both /health must answer.
const schedulerReady = new Promise((resolve) =>
  children.scheduler.on('message', (message) => {
    if (message?.type === 'ready') resolve(message);
  }),
);
const applianceReady = new Promise((resolve) => {
  // Only the output before the address line is kept (the rest passes straight through).
  let output = '';
  children.appliance.stdout.on('data', (chunk) => {
    process.stdout.write(chunk);
    if (output === null) return;
    output += chunk.toString();
    const match = /dashboard on (http\S+)/.exec(output);
    if (match) {
      output = null;
      resolve(match[1].replace(/\/$/, ''));
    }
  });
});

const [ready, dashboard] = await Promise.all([schedulerReady, applianceReady]);
const base = `http://${urlHost(host)}:${ready.port}`;
if (!(await answers(`${base}/health`, 50))) {
  console.error(`[start] the scheduler reported ready but ${base}/health does not answer; stopping`);
  stop('SIGTERM', 1);
} else if (!(await answers(`${dashboard}/health`, 150))) {
  console.error(`[start] the appliance has no verified feed after 30 s (${dashboard}/health); stopping`);
  stop('SIGTERM', 1);
} else if (stopping === null) {
  banner(base, ready.pid, dashboard, children.appliance.pid);
}

/** The host part of a URL to reach the server: wildcard addresses mean this machine. */
function urlHost(address) {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}

function banner(api, schedulerPid, dashboardUrl, appliancePid) {
  console.log(`
  Scheduler API   ${api}/api/v1   (docs: ${api}/api/docs/)   pid ${schedulerPid}
  Health          ${api}/health
  Web app         ${api}/app/   ${devIssuer ? '(staff: a demo employee; manager: Alex Admin)' : '(sign in with your identity provider)'}
${
  devIssuer
    ? `  Token (dev)     npm run -s token -w scheduler -- --role admin --tenant demo
  Try             curl -H "Authorization: Bearer $(npm run -s token -w scheduler -- --role admin)" ${api}/api/v1/roles`
    : `  Tokens          from your identity provider (${process.env.AUTH_ISSUER})`
}

  Advisory        ${dashboardUrl}/   pid ${appliancePid}
  Dashboard login ${demo.credentials.user} / ${demo.credentials.password}
  Demo feed       ${demo.env.ADVISORY_FEED_URL} (signed with the local demo key in ${demoDir})
  Log check       node advisory/bin/advisory.mjs log verify --state-dir ${demo.env.ADVISORY_STATE_DIR}

  Stop            Ctrl-C
`);
}
