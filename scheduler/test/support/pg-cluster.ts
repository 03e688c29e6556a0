import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A throwaway PostgreSQL cluster in a temp directory, from the machine's server binaries.
 * Used by the test setup and the benchmarks; `.ci/run` starts its own the same way.
 */
export interface PgCluster {
  url: string;
  stop(): void;
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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export async function startPgCluster(): Promise<PgCluster> {
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
  run('pg_ctl', [
    '-D',
    data,
    '-l',
    path.join(dir, 'pg.log'),
    '-w',
    '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
    'start',
  ]);
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
