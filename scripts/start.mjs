#!/usr/bin/env node
// `npm start`: runs every product that exists on embedded defaults (PGlite in
// scheduler/data, the local development issuer unless AUTH_ISSUER is set) and prints
// where to go and how to get a token, once the server it started answers.
//
// Signal safety: npm 11 forwards SIGTERM only to its `sh -c` child, so the npm script
// `exec`s this file (no shell in between). This process spawns the server directly
// (node --import tsx, no npm or tsx wrapper) over an IPC channel; the server shuts down
// when that channel closes, so it never outlives this process, however this one ends.
// If the server exits, this process exits at once with the server's exit code.
import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const port = process.env.PORT ?? '8080';
const host = process.env.HOST ?? '127.0.0.1';
const devIssuer = !process.env.AUTH_ISSUER;
const env = { ...process.env, PORT: port, HOST: host, ...(devIssuer ? { AUTH_DEV_ISSUER: 'true' } : {}) };

const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
  cwd: path.join(root, 'scheduler'),
  env,
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});

// Set when this process decides to stop the server: the exit code it will end with.
let stopping = null;
server.on('exit', (code, signal) => {
  if (stopping === null) console.error(`[start] scheduler exited (${signal ?? code})`);
  process.exit(stopping ?? code ?? 1);
});

function stop(signal, exitCode = 0) {
  if (stopping !== null) return;
  stopping = exitCode;
  server.kill(signal);
  // The server finishes in-flight requests within 10 s; do not wait for ever.
  setTimeout(() => server.kill('SIGKILL'), 15_000).unref();
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop('SIGTERM'));

// If whatever started this process goes away without a signal, stop too.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop('SIGTERM');
}, 1000).unref();

// The server says it is listening over IPC (so a second instance on the same port is
// never mistaken for it); then its /health must answer before the banner is printed.
server.on('message', async (message) => {
  if (message?.type !== 'ready' || stopping !== null) return;
  const base = `http://${urlHost(host)}:${message.port}`;
  for (let attempt = 0; attempt < 50; attempt++) {
    const health = await fetch(`${base}/health`).catch(() => undefined);
    if (health?.ok) {
      banner(base, message.pid);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  console.error(`[start] the scheduler reported ready but ${base}/health does not answer; stopping`);
  stop('SIGTERM', 1);
});

/** The host part of a URL to reach the server: wildcard addresses mean this machine. */
function urlHost(listen) {
  if (listen === '0.0.0.0') return '127.0.0.1';
  if (listen === '::') return '[::1]';
  return listen.includes(':') ? `[${listen}]` : listen;
}

function banner(base, pid) {
  console.log(`
  Scheduler API   ${base}/api/v1   (docs: ${base}/api/docs/)   pid ${pid}
  Health          ${base}/health
${
  devIssuer
    ? `  Token (dev)     npm run -s token -w scheduler -- --role admin --tenant demo
  Try             curl -H "Authorization: Bearer $(npm run -s token -w scheduler -- --role admin)" ${base}/api/v1/roles`
    : `  Tokens          from your identity provider (${process.env.AUTH_ISSUER})`
}
  Advisory feed   npx advisory-feed verify --feed advisory/sample-feed --public-key advisory/sample-feed.pub --inventory advisory/examples/demo-inventory.yaml
                  (the appliance daemon and its dashboard are not built yet)
  Stop            Ctrl-C
`);
}
