import { sql } from 'kysely';
import type { Db } from '../../scheduler/src/db/database.ts';
import { startPgBouncer } from '../../scheduler/test/support/pgbouncer.ts';

/** The login the scheduler connects as in a pooler comparison: a member of scheduler_app only. */
const benchLogin = 'bench_api';

/**
 * POOLER=pgbouncer: the scheduler measured twice per round, direct and through a PgBouncer
 * in transaction mode in front of the cluster (scheduler/test/support/pgbouncer.ts), both
 * configured as docs/operations.md tells for a pooler: DATABASE_URL a login holding only
 * scheduler_app, DATABASE_OWNER_URL the owner's, direct. POOLER_SIZE server connections
 * (default 10, as the scheduler's pool). Null without POOLER.
 */
export async function benchPooler(
  clusterUrl: string,
  owner: Db,
): Promise<{ direct: NodeJS.ProcessEnv; pooled: NodeJS.ProcessEnv; stop(): Promise<void> } | null> {
  if (process.env.POOLER !== 'pgbouncer') return null;
  await sql.raw(`CREATE ROLE ${benchLogin} LOGIN IN ROLE scheduler_app`).execute(owner);
  const pooler = await startPgBouncer(clusterUrl, {
    logins: [benchLogin, 'postgres'],
    serverConnections: Number(process.env.POOLER_SIZE ?? 10),
  });
  const login = new URL(clusterUrl);
  login.username = benchLogin;
  return {
    direct: { DATABASE_URL: login.toString(), DATABASE_OWNER_URL: clusterUrl },
    pooled: { DATABASE_URL: pooler.through(login.toString()), DATABASE_OWNER_URL: clusterUrl },
    stop: () => pooler.stop(),
  };
}
