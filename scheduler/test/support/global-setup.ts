import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { testAppLogin } from './database.ts';
import { type PgCluster, startPgCluster } from './pg-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `postgres`: real server; `pglite`: embedded. */
    testDb: 'postgres' | 'pglite';
    /** postgres: admin URL of the server holding the migrated template database. */
    pgAdminUrl: string;
    pgTemplate: string;
    /** pglite: path of a migrated data-directory snapshot. */
    pgliteSnapshot: string;
  }
}

/**
 * The production bundle the process tests run (dist/main.mjs, dist/cli/migrate.mjs,
 * dist/cli/tenant.mjs and the chunks they share): built
 * from the sources as they stand, so a test never passes on an old build. Built beside
 * dist/ and renamed into it file by file, so that two runs at once in one checkout never
 * start a process from a file the other is still writing (a rename replaces a file whole).
 */
function buildBundle(): void {
  const schedulerDir = path.resolve(import.meta.dirname, '../..');
  const dist = path.join(schedulerDir, 'dist');
  mkdirSync(dist, { recursive: true });
  const staging = mkdtempSync(path.join(dist, '.build-'));
  try {
    // The last --outdir wins: the package's own build, into the staging folder.
    const build = spawnSync('npm', ['run', '-s', 'build', '--', `--outdir=${staging}`], {
      cwd: schedulerDir,
      encoding: 'utf8',
    });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stderr}${build.stdout}`);
    // The entry points import shared chunks (--splitting) named by their content: the
    // chunks go in first, so an entry never names a chunk not yet in place, and one of
    // the same name another run put there is the same file.
    const entries = ['main.mjs', path.join('cli', 'migrate.mjs'), path.join('cli', 'tenant.mjs')];
    const built = (readdirSync(staging, { recursive: true }) as string[]).filter((file) =>
      file.endsWith('.mjs'),
    );
    const chunks = built.filter((file) => !entries.includes(file));
    for (const file of [...chunks, ...entries]) {
      mkdirSync(path.dirname(path.join(dist, file)), { recursive: true });
      renameSync(path.join(staging, file), path.join(dist, file));
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Builds the production bundle, then migrates once per test run: into a template database on PostgreSQL (each test file
 * clones it), or into a PGlite snapshot (each test file loads it). Test files never
 * share a database, so they never depend on each other's order.
 */
export default async function setup(project: TestProject) {
  buildBundle();
  if (process.env.TEST_DB === 'postgres') {
    let cluster: PgCluster | undefined;
    let adminUrl = process.env.TEST_DATABASE_URL;
    if (!adminUrl) {
      cluster = await startPgCluster();
      adminUrl = cluster.url;
    }
    const template = `sched_template_${process.pid}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${template}`);
    await admin.query(`CREATE DATABASE ${template}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${template}`;
    const handle = await openDatabase({ url: url.toString(), poolSize: 1 });
    await migrateToLatest(handle.owner);
    // The application connects as a login of its own that holds only scheduler_app, as
    // docs/operations.md advises: nothing it runs can step back into the owner's rights.
    await sql
      .raw(
        `DO $$ BEGIN
           IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${testAppLogin}') THEN
             CREATE ROLE ${testAppLogin} LOGIN IN ROLE scheduler_app;
           END IF;
         EXCEPTION WHEN duplicate_object THEN NULL;
         END $$`,
      )
      .execute(handle.owner);
    await handle.close();

    project.provide('testDb', 'postgres');
    project.provide('pgAdminUrl', adminUrl);
    project.provide('pgTemplate', template);
    project.provide('pgliteSnapshot', '');
    return async () => {
      if (cluster) {
        cluster.stop();
        return;
      }
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      const { rows } = await cleanup.query<{ datname: string }>(
        "SELECT datname FROM pg_database WHERE datname LIKE 'sched_t_%' OR datname = $1",
        [template],
      );
      for (const row of rows) await cleanup.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
      await cleanup.end();
    };
  }

  const handle = await openDatabase({ pglite: {} });
  await migrateToLatest(handle.owner);
  const dump = await (handle.pglite as NonNullable<typeof handle.pglite>).dumpDataDir('none');
  await handle.close();
  const snapshot = path.join(tmpdir(), `sched-pglite-${process.pid}.tar`);
  writeFileSync(snapshot, Buffer.from(await dump.arrayBuffer()));
  readFileSync(snapshot); // fail here, not in every test file, if the snapshot is unreadable
  project.provide('testDb', 'pglite');
  project.provide('pgAdminUrl', '');
  project.provide('pgTemplate', '');
  project.provide('pgliteSnapshot', snapshot);
  return () => rmSync(snapshot, { force: true });
}
