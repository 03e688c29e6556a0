import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';

/**
 * What the scheduler benchmarks share: each server runs in its own process (the load
 * generator must not share its event loop), reports its port on stdout, and is measured
 * by its CPU time as well as by what the load generator sees.
 */
export interface Server {
  port: number;
  child: ChildProcess;
}

let bundle: string | undefined;

/**
 * servers.ts as one ES module, built once per run with esbuild, as the scheduler ships
 * (npm start runs its bundle): no TypeScript loader at run time, and no source maps
 * behind every stack trace a refused request formats (tsx turns them on, which made each
 * refusal cost tens of microseconds that production does not pay). The bundle goes into
 * dist/ beside this file, so its packages resolve from the repository's node_modules.
 */
function serversBundle(): string {
  if (!bundle) {
    const outfile = path.join(import.meta.dirname, 'dist', 'servers.mjs');
    buildSync({
      entryPoints: [path.join(import.meta.dirname, 'servers.ts')],
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node22',
      outfile,
      logLevel: 'warning',
    });
    bundle = outfile;
  }
  return bundle;
}

/** Starts `bench/support/servers.ts <mode>` (from its bundle) and waits for its port. */
export async function startServer(mode: string, env: NodeJS.ProcessEnv): Promise<Server> {
  // PROFILE_DIR=dir writes a V8 CPU profile of each server for a closer look.
  // HEAP_PROFILE_DIR=dir does the same for allocations (sampling heap profile).
  const profile = [
    ...(process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : []),
    ...(process.env.HEAP_PROFILE_DIR
      ? ['--heap-prof', `--heap-prof-dir=${process.env.HEAP_PROFILE_DIR}`]
      : []),
  ];
  const child = spawn(process.execPath, [...profile, serversBundle(), mode], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
  });
  return { port, child };
}

export async function stopServer(server: Server): Promise<void> {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
}

/** CPU seconds a process has used so far (Linux /proc; NaN elsewhere). */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are fields 14 and 15 of stat; after the ") " split they sit at 11 and 12.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Requests to a server under test, as its clients send them: bearer token, JSON in and out. */
export function apiClient(base: string) {
  async function call(method: string, path: string, bearer: string, body?: unknown) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, json: () => (text === '' ? null : JSON.parse(text)) };
  }
  /** The answer's JSON; anything but 2xx stops the run, naming the request. */
  async function must(method: string, path: string, bearer: string, body?: unknown) {
    const answer = await call(method, path, bearer, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status}`);
    return answer.json();
  }
  return { call, must };
}
