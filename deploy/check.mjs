#!/usr/bin/env node
// node deploy/check.mjs: what can be checked of the deployment files on a machine with no
// container engine and no systemd running (CI runs it after building both products):
//
//  1. Dockerfiles: every file they COPY from the build context exists and is not left
//     out by .dockerignore; the files the runtime stages take from build stages, made by
//     the same commands here, exist and are newer than their sources.
//  2. compose.yaml: build contexts, Dockerfiles and default host files exist; every
//     variable it sets is one the products read (named in the README's tables).
//  3. The scheduler image's commands outside a container: a production-only install
//     exactly as the runtime stage makes it (no package the lockfile marks as a
//     development dependency), the bundle copied in, CMD started with the image's ENV
//     alone, /health answered, the HEALTHCHECK command passing, SIGTERM stopping it
//     with exit 0. (On this machine's node, not the image's.)
//  4. The appliance image's ENTRYPOINT and CMD: the built binary alone on the PATH, with
//     the image's ENV, as the image's unprivileged user (when run as root) with its
//     state in a folder it owns inside one it cannot write: /health answers, SIGTERM
//     stops it with exit 0.
//  5. systemd units: `systemd-analyze verify` in a scratch root holding the executables
//     their ExecStart names, and an exposure level of 2.0 or better from
//     `systemd-analyze security` (skipped when systemd-analyze is missing, unless
//     REQUIRE_SYSTEMD_ANALYZE is set).
//
// Steps 3 to 5 run what the builds made: without them it stops after step 2, saying which
// command makes each (ADVISORY_BINARY names the appliance binary when it is elsewhere).
// Exit 0 when everything holds; 1 with the list of problems otherwise.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';

const root = path.resolve(import.meta.dirname, '..');
const deploy = path.join(root, 'deploy');
const problems = [];
const fail = (message) => problems.push(message);
const ok = (message) => console.log(`ok    ${message}`);
const advisoryBinary = path.resolve(root, process.env.ADVISORY_BINARY ?? 'advisory/build/advisory');

/** A path as a message shows it: relative to the checkout when inside it. */
function shown(file) {
  const relative = path.relative(root, file);
  return relative.startsWith('..') ? file : relative;
}

/** Prints the problems and exits: 1 when there are any. */
function report() {
  if (problems.length > 0) {
    console.error(`\n${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.log('\ndeployment files: all checks passed');
}

/** Dockerfile instructions: continuation lines joined, comments dropped. */
function instructions(file) {
  const text = readFileSync(file, 'utf8').replace(/\\\n/g, ' ');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

const ignored = readFileSync(path.join(root, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const isIgnored = (relative) =>
  ignored.some((pattern) => {
    const p = pattern.replace(/^\*\*\//, '');
    return pattern.startsWith('**/')
      ? relative.split('/').includes(p)
      : relative === p || relative.startsWith(`${p}/`);
  });

// --- 1. Dockerfiles ----------------------------------------------------------------------
const images = {};
for (const name of ['scheduler', 'advisory']) {
  const file = path.join(deploy, `${name}.Dockerfile`);
  const steps = instructions(file);
  images[name] = steps;
  for (const { keyword, args } of steps) {
    if (keyword !== 'COPY' || args.includes('--from=')) continue;
    const parts = args.split(/\s+/).filter((a) => !a.startsWith('--'));
    for (const source of parts.slice(0, -1)) {
      if (!existsSync(path.join(root, source)))
        fail(`${name}.Dockerfile: COPY ${source}: no such file in the build context`);
      else if (isIgnored(source)) fail(`${name}.Dockerfile: COPY ${source} is excluded by .dockerignore`);
    }
  }
  ok(`${name}.Dockerfile: every COPY source is in the build context`);
}
// The runtime stages copy what these commands make: the same commands, run here, and
// what they made must be newer than every source it was made from.
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}
let buildsMissing = false;
for (const [made, sources, command] of [
  ['scheduler/dist/main.mjs', ['scheduler/src'], 'npm run build -w scheduler'],
  ['web/dist/index.html', ['web/src', 'web/public'], 'npm run build -w web'],
  [shown(advisoryBinary), ['advisory/src', 'advisory/scripts'], 'npm run build:binary -w advisory'],
]) {
  const file = path.resolve(root, made);
  if (!existsSync(file)) {
    buildsMissing = true;
    fail(`${made} is missing: run ${command}`);
  } else if (statSync(file).mtimeMs < Math.max(...sources.map((d) => newest(path.join(root, d)))))
    fail(`${made} is older than its sources: run ${command}`);
}

// --- 2. compose.yaml ---------------------------------------------------------------------
const compose = yaml.load(readFileSync(path.join(deploy, 'compose.yaml'), 'utf8'));
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const postgresImageVariables = new Set(['POSTGRES_USER', 'POSTGRES_DB', 'POSTGRES_PASSWORD']);
for (const [service, spec] of Object.entries(compose.services)) {
  if (spec.build) {
    const context = path.resolve(deploy, spec.build.context);
    if (!existsSync(path.join(context, spec.build.dockerfile)))
      fail(`compose ${service}: no ${spec.build.dockerfile}`);
  }
  for (const variable of Object.keys(spec.environment ?? {})) {
    if (postgresImageVariables.has(variable)) continue;
    if (!readme.includes(`\`${variable}\``))
      fail(`compose ${service}: ${variable} is not a documented setting`);
  }
  for (const volume of spec.volumes ?? []) {
    const host =
      /^\$\{[A-Z_]+:-([^}]+)\}:/.exec(volume)?.[1] ?? (volume.startsWith('.') ? volume.split(':')[0] : null);
    if (host && !existsSync(path.resolve(deploy, host)))
      fail(`compose ${service}: volume source ${host} does not exist`);
  }
}
ok('compose.yaml: build files, default host files and settings are real');

// The remaining checks start what the builds made: without them, say what to run.
if (buildsMissing) {
  console.error('stop  the image and unit checks need both builds (see below)');
  report();
}

// --- 3. the scheduler image's commands, outside a container ---------------------------
const jsonForm = (steps, keyword) => {
  const step = steps.findLast((s) => s.keyword === keyword);
  return step ? JSON.parse(step.args.replace(/^--[^[]*/, '').trim()) : null;
};
const imageEnv = (steps) => {
  const env = {};
  for (const { keyword, args } of steps.slice(steps.findLastIndex((s) => s.keyword === 'FROM'))) {
    if (keyword !== 'ENV') continue;
    for (const pair of args.split(/\s+/)) {
      const [key, ...value] = pair.split('=');
      env[key] = value.join('=');
    }
  }
  return env;
};

/** Whether `child`, listening on `port`, answers 200 on /health within `ms` (while it runs). */
async function answersHealth(child, port, ms) {
  for (const deadline = Date.now() + ms; Date.now() < deadline && child.exitCode === null; ) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

async function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function checkSchedulerImage() {
  const steps = images.scheduler;
  const app = mkdtempSync(path.join(tmpdir(), 'scheduler-image-'));
  for (const file of [
    'package.json',
    'package-lock.json',
    'scheduler/package.json',
    'advisory/package.json',
    'web/package.json',
  ]) {
    mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(app, file));
  }
  // The runtime stage's RUN, as it stands in the Dockerfile (up to the first &&).
  const install = steps
    .filter((s) => s.keyword === 'RUN')
    .at(-1)
    .args.split('&&')[0]
    .trim()
    .split(/\s+/);
  execFileSync(install[0], install.slice(1), { cwd: app, stdio: ['ignore', 'ignore', 'inherit'] });
  for (const dev of ['tsx', 'vitest', 'esbuild', '@biomejs/biome']) {
    if (existsSync(path.join(app, 'node_modules', dev)))
      fail(`scheduler image: development dependency ${dev} installed`);
  }
  cpSync(path.join(root, 'scheduler/dist'), path.join(app, 'scheduler/dist'), { recursive: true });
  cpSync(path.join(root, 'web/dist'), path.join(app, 'web/dist'), { recursive: true });
  const port = await freePort();
  // The image's environment, not this shell's.
  const env = {
    PATH: process.env.PATH,
    ...imageEnv(steps),
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: path.join(app, 'data'),
    AUTH_DEV_ISSUER: 'true',
    LOG_LEVEL: 'warn',
  };
  const [command, ...args] = jsonForm(steps, 'CMD');
  const child = spawn(command === 'node' ? process.execPath : command, args, {
    cwd: app,
    env,
    stdio: 'inherit',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const healthy = await answersHealth(child, port, 60_000);
  if (!healthy) fail('scheduler image: CMD never answered /health');
  const probe = jsonForm(steps, 'HEALTHCHECK');
  const health = spawnSync(probe[0] === 'node' ? process.execPath : probe[0], probe.slice(1), {
    env,
    cwd: app,
  });
  if (health.status !== 0) fail(`scheduler image: HEALTHCHECK exited ${health.status}`);
  const staffApp = await fetch(`http://127.0.0.1:${port}/app/`).catch(() => null);
  if (staffApp?.status !== 200 || !staffApp.headers.get('content-security-policy'))
    fail(`scheduler image: /app/ answered ${staffApp?.status ?? 'nothing'}, not the staff app`);
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) fail(`scheduler image: SIGTERM ended the server with ${code}`);
  rmSync(app, { recursive: true, force: true });
  ok(
    'scheduler image: production-only install, CMD healthy, HEALTHCHECK passes, /app/ served, SIGTERM exits 0',
  );
}
await checkSchedulerImage();

// --- 4. the appliance image's ENTRYPOINT and CMD, as the image runs them ----------------
// The binary alone on the PATH, the image's ENV, and (when this runs as root) the image's
// unprivileged user with its state in a volume it owns inside a folder it cannot write.
async function checkApplianceImage() {
  const steps = images.advisory;
  const [entry] = jsonForm(steps, 'ENTRYPOINT');
  const cmd = jsonForm(steps, 'CMD');
  const built = advisoryBinary;
  const scratch = mkdtempSync(path.join(tmpdir(), 'advisory-image-'));
  chmodSync(scratch, 0o755);
  const bin = path.join(scratch, 'bin');
  mkdirSync(bin, { mode: 0o755 });
  cpSync(built, path.join(bin, path.basename(entry)));
  const version = spawnSync(path.join(bin, path.basename(entry)), ['--version'], {
    encoding: 'utf8',
    env: { PATH: bin },
  });
  if (version.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    return fail(`advisory image: ${entry} --version exited ${version.status}`);
  }
  const state = path.join(scratch, 'var-lib', 'advisory');
  mkdirSync(path.dirname(state), { mode: 0o755 });
  mkdirSync(state, { mode: 0o700 });
  const asRoot = process.getuid?.() === 0;
  const NONROOT = 65532; // distroless's nonroot user
  if (asRoot) chownSync(state, NONROOT, NONROOT);
  const port = await freePort();
  const env = {
    PATH: bin,
    ...imageEnv(steps),
    ADVISORY_STATE_DIR: state,
    ADVISORY_LISTEN: `127.0.0.1:${port}`,
    ADVISORY_FEED_URL: path.join(root, 'advisory/sample-feed'),
    ADVISORY_PUBLIC_KEYS: path.join(root, 'advisory/sample-feed.pub'),
    ADVISORY_INVENTORY: path.join(root, 'advisory/examples/demo-inventory.yaml'),
    ADVISORY_LOG_LEVEL: 'warn',
  };
  const child = spawn(path.join(bin, path.basename(entry)), cmd, {
    env,
    cwd: scratch,
    stdio: ['ignore', 'ignore', 'inherit'],
    ...(asRoot ? { uid: NONROOT, gid: NONROOT } : {}),
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const healthy = await answersHealth(child, port, 30_000);
  if (!healthy) fail(`advisory image: ${[entry, ...cmd].join(' ')} never answered /health`);
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) fail(`advisory image: SIGTERM ended the appliance with ${code}`);
  rmSync(scratch, { recursive: true, force: true });
  if (healthy && code === 0)
    ok(
      `advisory image: ${version.stdout.split('\n')[0]}; ${[entry, ...cmd].join(' ')} healthy${asRoot ? ' as the nonroot user' : ''}, SIGTERM exits 0`,
    );
}
await checkApplianceImage();

// --- 5. systemd units --------------------------------------------------------------------
const analyze = spawnSync('systemd-analyze', ['--version']).status === 0;
if (!analyze) {
  if (process.env.REQUIRE_SYSTEMD_ANALYZE)
    fail('systemd-analyze is required (REQUIRE_SYSTEMD_ANALYZE) but missing');
  else console.log('skip  systemd units: systemd-analyze is not installed');
} else {
  const scratch = mkdtempSync(path.join(tmpdir(), 'units-'));
  const units = readdirSync(path.join(deploy, 'systemd')).filter((f) => f.endsWith('.service'));
  mkdirSync(path.join(scratch, 'etc/systemd/system'), { recursive: true });
  mkdirSync(path.join(scratch, 'usr/lib/systemd'), { recursive: true });
  cpSync('/lib/systemd/system', path.join(scratch, 'usr/lib/systemd/system'), { recursive: true });
  // What each unit's ExecStart names, from this build.
  const builtFiles = {
    '/usr/local/bin/advisory': advisoryBinary,
    '/usr/bin/node': process.execPath,
    '/opt/scheduler/scheduler/dist/main.mjs': path.join(root, 'scheduler/dist/main.mjs'),
  };
  for (const unit of units) {
    cpSync(path.join(deploy, 'systemd', unit), path.join(scratch, 'etc/systemd/system', unit));
    const text = readFileSync(path.join(deploy, 'systemd', unit), 'utf8');
    const place = (word, source) => {
      mkdirSync(path.dirname(path.join(scratch, word)), { recursive: true });
      cpSync(source, path.join(scratch, word));
    };
    const exec = /^ExecStart=(.*)$/m.exec(text)?.[1] ?? '';
    for (const word of exec.split(/\s+/).filter((w) => w.startsWith('/'))) {
      const source = builtFiles[word];
      if (!source) fail(`${unit}: ExecStart names ${word}, which no build makes`);
      else place(word, source);
    }
    // Other commands (ExecReload=/bin/kill) are the system's own: this machine's copy.
    for (const [, line] of text.matchAll(/^Exec(?!Start=)\w+=(.*)$/gm)) {
      const word = line.split(/\s+/)[0];
      if (!word.startsWith('/')) continue;
      if (builtFiles[word]) place(word, builtFiles[word]);
      else if (existsSync(word)) place(word, word);
      else fail(`${unit}: ${line} names ${word}, which this machine does not have`);
    }
  }
  const verify = spawnSync('systemd-analyze', ['verify', `--root=${scratch}`, ...units], {
    encoding: 'utf8',
  });
  if (verify.status !== 0) fail(`systemd-analyze verify: ${verify.stderr}${verify.stdout}`);
  else ok(`systemd-analyze verify: ${units.join(', ')}`);
  for (const unit of units) {
    const security = spawnSync('systemd-analyze', ['security', '--offline=yes', `--root=${scratch}`, unit], {
      encoding: 'utf8',
    });
    const level = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(security.stdout)?.[1]);
    if (!(level <= 2)) fail(`${unit}: exposure level ${level} (want 2.0 or better)`);
    else ok(`${unit}: systemd-analyze security exposure level ${level}`);
  }
  rmSync(scratch, { recursive: true, force: true });
}

report();
