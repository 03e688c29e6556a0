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

let stopping = false;
server.on('exit', (code, signal) => {
  if (!stopping) console.error(`[start] scheduler exited (${signal ?? code})`);
  process.exit(stopping ? 0 : (code ?? 1));
});

function stop(signal) {
  if (stopping) return;
  stopping = true;
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
  if (message?.type !== 'ready' || stopping) return;
  const base = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${message.port}`;
  for (let attempt = 0; attempt < 50; attempt++) {
    const health = await fetch(`${base}/health`).catch(() => undefined);
    if (health?.ok) {
      banner(base, message.pid);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  console.error(`[start] the scheduler reported ready but ${base}/health does not answer; stopping`);
  stop('SIGTERM');
  process.exitCode = 1;
});

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
