import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { until } from '../../../scripts/test-wait.ts';
import { freePort } from './pg-cluster.ts';

/**
 * A PgBouncer of a test's own in front of the test server (Debian's package,
 * /usr/sbin/pgbouncer), in transaction mode: each transaction of a client, and each
 * statement outside one, may run on another server connection than the last. Few server
 * connections are shared by many clients, so two clients' transactions interleave on them.
 * Started as the `postgres` user when the tests run as root (PgBouncer refuses root), as
 * the throwaway cluster is; authentication is `trust`, as the cluster's: the logins are
 * named in the auth file and the server checks nothing more.
 */
export interface PgBouncer {
  /** `server` (a postgres:// URL of the server) with the pooler's host and port instead. */
  through(server: string): string;
  /** Stops the pooler and removes its files. */
  stop(): Promise<void>;
}

/** Where Debian's package puts it; PGBOUNCER names another binary. */
export function findPgBouncer(): string | null {
  const binary = process.env.PGBOUNCER ?? '/usr/sbin/pgbouncer';
  return existsSync(binary) ? binary : null;
}

/**
 * Whether the pooler tests run: on PostgreSQL, with the binary there. With REQUIRE_PGBOUNCER
 * set (CI), a missing binary fails the file instead of skipping it.
 */
export function pgBouncerAvailable(onPostgres: boolean): boolean {
  const found = findPgBouncer() !== null;
  if (onPostgres && !found && process.env.REQUIRE_PGBOUNCER) {
    throw new Error('PgBouncer is required (REQUIRE_PGBOUNCER) but /usr/sbin/pgbouncer is missing');
  }
  return onPostgres && found;
}

/**
 * Starts a pooler in front of the server of `server` (any database on it: `*`), pooling
 * `serverConnections` server connections per database and login, and resolves once it
 * answers a query as `logins[0]`.
 */
export async function startPgBouncer(
  server: string,
  options: { logins: string[]; serverConnections: number },
): Promise<PgBouncer> {
  const binary = findPgBouncer();
  if (!binary) throw new Error('PgBouncer not found (install the Debian package pgbouncer)');
  const target = new URL(server);
  const dir = mkdtempSync(path.join(tmpdir(), 'sched-pgbouncer-'));
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
        gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
      }
    : undefined;
  const port = await freePort();
  const config = path.join(dir, 'pgbouncer.ini');
  writeFileSync(path.join(dir, 'userlist.txt'), options.logins.map((login) => `"${login}" ""\n`).join(''));
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.serverConnections}`,
      'reserve_pool_size = 0',
      'max_client_conn = 1000',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  if (ids) {
    for (const file of [dir, config, path.join(dir, 'userlist.txt')]) chownSync(file, ids.uid, ids.gid);
  }
  chmodSync(dir, 0o700);
  const child: ChildProcess = spawn(binary, [config], { stdio: ['ignore', 'ignore', 'pipe'], ...ids });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const through = (url: string) => {
    const pooled = new URL(url);
    pooled.hostname = '127.0.0.1';
    pooled.port = String(port);
    return pooled.toString();
  };
  const probe = new URL(server);
  probe.username = options.logins[0] ?? 'postgres';
  // Until it answers, or it is gone; the test's timeout bounds the wait.
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}: ${stderr}`);
    const client = new pg.Client({ connectionString: through(probe.toString()) });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }, 50);
  return {
    through,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
