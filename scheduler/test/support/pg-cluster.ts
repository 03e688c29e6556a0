import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A throwaway PostgreSQL cluster in a temp directory, from the machine's server binaries.
 * Used by the test setup and the benchmarks; `.ci/run` starts its own the same way.
 */
export interface PgCluster {
  url: string;
  /** Stops the server and removes its files. */
  stop(): void;
  /** Stops the server, keeping its files: `fast` ends sessions cleanly, `immediate` as a crash would. */
  halt(mode: 'fast' | 'immediate'): void;
  /** Starts a halted server again on the same port. */
  resume(): void;
  /**
   * Freezes the running server with SIGSTOP, the postmaster and every process it started
   * (the backends serving connections among them): its sockets stay open, accepting
   * connections and bytes, and nothing answers. Linux only.
   */
  freeze(): void;
  /** Lets a frozen server go on (SIGCONT), where it stopped. */
  thaw(): void;
}

/** The processes whose parent is `parent`, from /proc. */
function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid …: the command may hold spaces and parentheses, the last ")" ends it.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === parent) children.push(Number(entry));
  }
  return children;
}

export function findPgBinDir(): string | null {
  const fromEnv = process.env.PG_BINDIR;
  if (fromEnv && existsSync(path.join(fromEnv, 'initdb'))) return fromEnv;
  const debian = '/usr/lib/postgresql/15/bin';
  if (existsSync(path.join(debian, 'initdb'))) return debian;
  const probe = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const dir = probe.status === 0 ? probe.stdout.trim() : '';
  return dir && existsSync(path.join(dir, 'initdb')) ? dir : null;
}

/** Whether a port can be listened on at 127.0.0.1 now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The last port handed out here; the next is the one after it (null: none yet). */
let lastPort: number | null = null;

/**
 * A port for a server a test starts in another process (it can only be told one, and
 * binds it seconds later). Taken below the kernel's ephemeral range, which every
 * `listen(0)` and every outgoing connection draws from, so nothing else here takes it in
 * the meantime; from a slice of its own for each test worker running in parallel; and
 * never the same twice in one test file (the ports are handed out one after the other
 * from a random start), since the first may not be bound yet when the second is asked for.
 */
export async function freePort(): Promise<number> {
  let ephemeralStart = 32_768;
  try {
    ephemeralStart = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
  } catch {
    // Not Linux: the usual start of the range.
  }
  const low = 10_000;
  const high = Math.max(low + 1_000, ephemeralStart - 1);
  const worker = Number(process.env.VITEST_POOL_ID ?? 1);
  const slices = 8;
  const size = Math.floor((high - low) / slices);
  const from = low + ((worker - 1) % slices) * size;
  let offset = lastPort === null ? Math.floor(Math.random() * size) : lastPort - from + 1;
  for (let attempt = 0; attempt < 100; attempt++, offset++) {
    const port = from + (offset % size);
    if (await bindable(port)) {
      lastPort = port;
      return port;
    }
  }
  throw new Error('no free port found');
}

/**
 * A throwaway cluster, tuned for speed: no fsync, no full-page writes (the machine itself
 * does not crash under a test), and commits that do not wait for their WAL to be written.
 * `crashSafe` keeps commits waiting for it: a test that stops the server as a crash would
 * (`halt('immediate')`) must not lose what the server acknowledged.
 */
export async function startPgCluster(options: { crashSafe?: boolean } = {}): Promise<PgCluster> {
  const bin = findPgBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found (set PG_BINDIR or install postgresql-15)');
  const dir = mkdtempSync(path.join(tmpdir(), 'sched-pg-'));
  const asRoot = process.getuid?.() === 0;
  // initdb refuses to run as root: hand the directory to the postgres user.
  const run = (command: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args], { stdio: 'pipe' })
      : execFileSync(path.join(bin, command), args, { stdio: 'pipe' });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const data = path.join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '-N']);
  const start = () =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(dir, 'pg.log'),
      '-w',
      '-o',
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=${options.crashSafe ? 'on' : 'off'} -c full_page_writes=off -c max_connections=200`,
      'start',
    ]);
  start();
  let stopped = false;
  const frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen.splice(0)) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // already gone
      }
    }
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    freeze() {
      const postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      // The postmaster first: once stopped it forks no new backend behind the list's back.
      process.kill(postmaster, 'SIGSTOP');
      frozen.push(postmaster);
      for (const pid of childrenOf(postmaster)) {
        process.kill(pid, 'SIGSTOP');
        frozen.push(pid);
      }
    },
    thaw,
    halt(mode) {
      run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
    },
    resume: start,
    stop() {
      if (stopped) return;
      stopped = true;
      // A frozen server would never answer pg_ctl's stop.
      thaw();
      try {
        if (existsSync(path.join(data, 'postmaster.pid'))) {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
