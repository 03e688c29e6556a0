#!/usr/bin/env node
// `npm start`: runs every product that exists on embedded defaults (PGlite in
// scheduler/data, the local development issuer unless AUTH_ISSUER is set) and prints
// where to go and how to get a token. Ctrl-C stops everything.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

const port = process.env.PORT ?? '8080';
const host = process.env.HOST ?? '127.0.0.1';
const devIssuer = !process.env.AUTH_ISSUER;
const env = { ...process.env, PORT: port, HOST: host, ...(devIssuer ? { AUTH_DEV_ISSUER: 'true' } : {}) };

const children = [];
function run(name, args) {
  const child = spawn('npm', args, { env, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('exit', (code, signal) => {
    console.log(`[start] ${name} exited (${signal ?? code})`);
    for (const other of children) if (other !== child) other.kill('SIGTERM');
    process.exitCode = code ?? 1;
  });
  children.push(child);
  return child;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGTERM');
  });
}

run('scheduler', ['run', '--silent', 'start', '-w', 'scheduler']);

const base = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
for (let attempt = 0; attempt < 120; attempt++) {
  try {
    const response = await fetch(`${base}/health`);
    if (response.ok) break;
  } catch {
    // not listening yet
  }
  await sleep(500);
}

console.log(`
  Scheduler API   ${base}/api/v1   (docs: ${base}/api/docs/)
  Health          ${base}/health
${
  devIssuer
    ? `  Token (dev)     npm run token -w scheduler -- --role admin --tenant demo
  Try             curl -H "Authorization: Bearer $(npm run -s token -w scheduler -- --role admin)" ${base}/api/v1/roles`
    : `  Tokens          from your identity provider (${process.env.AUTH_ISSUER})`
}
  Advisory feed   npx advisory-feed verify --feed advisory/sample-feed --public-key advisory/sample-feed.pub --inventory advisory/examples/demo-inventory.yaml
                  (the appliance daemon and dashboard are not built yet)
`);
