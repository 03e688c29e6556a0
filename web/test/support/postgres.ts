import { afterAll } from 'vitest';
import { findPgBinDir, type PgCluster, startPgCluster } from '../../../scheduler/test/support/pg-cluster.ts';

/** The scheduler's throwaway PostgreSQL clusters come from the machine's server binaries. */
export const postgresAvailable = findPgBinDir() !== null;
export const NEEDS_POSTGRES =
  'needs PostgreSQL server binaries (Debian package postgresql-15; scripts/install-system-packages.sh)';

const clusters: PgCluster[] = [];
afterAll(() => {
  for (const cluster of clusters.splice(0)) cluster.stop();
});

/**
 * The settings that put a test file's scheduler on a PostgreSQL cluster of its own (one
 * URL: the owner migrates, the API's connections take the role scheduler_app), stopped
 * and removed after the file's tests.
 */
export async function onPostgres(): Promise<Record<string, string>> {
  const cluster = await startPgCluster();
  clusters.push(cluster);
  return { DATABASE_URL: cluster.url };
}
