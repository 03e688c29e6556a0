/**
 * Start-up times of what operators run in production, each against a floor measured in
 * the same run:
 *
 *  - the scheduler: from spawning the process to the first 200 from /health, on an
 *    embedded database migrated beforehand, run from the TypeScript sources through tsx
 *    (how it ran before) and from the compiled bundle (`npm run build -w scheduler`,
 *    how it runs now); the floor is a bare node:http server answering /health;
 *  - the appliance's single executable (`npm run build:binary -w advisory`): `--version`
 *    and `advisory-feed verify` of the sample feed, against the same commands through
 *    the ES module bundle on this machine's node, and `node -e 0` as the floor; plus the
 *    binary's size.
 *
 * Usage: npm run bench:startup [-- --runs 15]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from '../support/harness.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
const root = path.resolve(import.meta.dirname, '../..');
const scheduler = path.join(root, 'scheduler');
const advisory = path.join(root, 'advisory');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Milliseconds from spawn to the first 200 of /health; the process is stopped after. */
async function timeToHealthy(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  const port = await freePort();
  const start = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`)
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) return performance.now() - start;
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
}

/** Milliseconds of one whole command, run to its end. */
function timeCommand(command: string, args: string[]): number {
  const start = performance.now();
  execFileSync(command, args, { stdio: 'ignore', cwd: advisory });
  return performance.now() - start;
}

function row(name: string, ms: number[], floor: number): string {
  const m = median(ms);
  return `${name.padEnd(44)} ${m.toFixed(0).padStart(6)} ms   ${(m / floor).toFixed(2).padStart(6)}x floor`;
}

// --- the scheduler --------------------------------------------------------------------
if (!existsSync(path.join(scheduler, 'dist', 'main.mjs'))) {
  execFileSync('npm', ['run', 'build', '-w', 'scheduler'], { cwd: root, stdio: 'inherit' });
}
const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-startup-'));
const env = { DATA_DIR: dataDir, AUTH_DEV_ISSUER: 'true' };
// The first start makes the database and the issuer key; the runs measure later starts.
await timeToHealthy(['dist/main.mjs'], env, scheduler);
const floorServer = `require('node:http').createServer((q, s) => s.end('{"status":"ok"}')).listen(process.env.PORT, '127.0.0.1')`;
const measured = { floor: [] as number[], tsx: [] as number[], bundle: [] as number[] };
// Interleaved, so a slow moment of the machine hits every variant alike.
for (let i = 0; i < runs; i++) {
  measured.floor.push(await timeToHealthy(['-e', floorServer], {}, scheduler));
  measured.tsx.push(await timeToHealthy(['--import', 'tsx', 'src/main.ts'], env, scheduler));
  measured.bundle.push(await timeToHealthy(['dist/main.mjs'], env, scheduler));
}
const floor = median(measured.floor);
console.log(`scheduler start-up to the first 200 from /health (median of ${runs}, node ${process.version})`);
console.log(row('floor: bare node:http server', measured.floor, floor));
console.log(row('before: node --import tsx src/main.ts', measured.tsx, floor));
console.log(row('now: node dist/main.mjs', measured.bundle, floor));
console.log(`bundle / tsx: ${(median(measured.bundle) / median(measured.tsx)).toFixed(2)}`);

// --- the appliance's single executable -----------------------------------------------
const binary = path.join(advisory, 'build', 'advisory');
if (!existsSync(binary))
  execFileSync('npm', ['run', 'build:binary', '-w', 'advisory'], { cwd: root, stdio: 'inherit' });
const bundle = path.join(advisory, 'dist', 'advisory.mjs');
const verify = ['verify', '--feed', 'sample-feed', '--public-key', 'sample-feed.pub'];
const times = {
  floor: [] as number[],
  binVersion: [] as number[],
  esmVersion: [] as number[],
  binVerify: [] as number[],
  esmVerify: [] as number[],
};
for (let i = 0; i < runs; i++) {
  times.floor.push(timeCommand(process.execPath, ['-e', '0']));
  times.binVersion.push(timeCommand(binary, ['--version']));
  times.esmVersion.push(timeCommand(process.execPath, [bundle, '--version']));
  times.binVerify.push(timeCommand(binary, ['feed', ...verify]));
  times.esmVerify.push(
    timeCommand(process.execPath, [path.join(advisory, 'bin', 'advisory-feed.mjs'), ...verify]),
  );
}
const nodeFloor = median(times.floor);
const size = statSync(binary).size;
console.log(
  `\nthe appliance binary: ${(size / 1024 / 1024).toFixed(1)} MiB (${size} bytes); median of ${runs}`,
);
console.log(row('floor: node -e 0', times.floor, nodeFloor));
console.log(row('binary: advisory --version', times.binVersion, nodeFloor));
console.log(row('bundle: node dist/advisory.mjs --version', times.esmVersion, nodeFloor));
console.log(row('binary: advisory feed verify (sample feed)', times.binVerify, nodeFloor));
console.log(row('bundle: advisory-feed verify (sample feed)', times.esmVerify, nodeFloor));
