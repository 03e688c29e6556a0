/**
 * bench/shift-window-plan: the plans PostgreSQL 15 makes for the `from`/`to` filters of
 * the lists, for a tenant with 100,000 shifts (4 hours each, one every 2 hours from 2010
 * into 2032, 5,000 events, 20,000 assignments of one employee), on a throwaway cluster,
 * run as the application under the tenant wall: `EXPLAIN (ANALYZE, BUFFERS)` of each
 * list's own query for one week, and of the shift list filtered without the length bound
 * (what a plain `starts_at < to AND ends_at > from` costs), for comparison.
 *
 *   npm run bench:shift-window-plan      (SHIFTS=100000 to change the size)
 */
import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import { selectUserAssignments } from '../../scheduler/src/assignments/repository.ts';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { asTenant } from '../../scheduler/src/db/tenant-scope.ts';
import type { Database } from '../../scheduler/src/db/types.ts';
import { selectEventList } from '../../scheduler/src/events/repository.ts';
import { selectShiftList } from '../../scheduler/src/shifts/repository.ts';
import { fillLargeTenant } from '../../scheduler/test/support/large-tenant.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';

const shifts = Number(process.env.SHIFTS ?? 100_000);
const week = { from: '2026-03-02T00:00:00Z', to: '2026-03-09T00:00:00Z' };

const cluster = await startPgCluster();
try {
  const handle = await openDatabase({ url: cluster.url, poolSize: 2 });
  await migrateToLatest(handle.owner);
  const filled = Date.now();
  const tenant = await fillLargeTenant(handle.owner, {
    shifts,
    events: Math.max(1, Math.round(shifts / 20)),
  });
  console.log(
    `tenant: ${tenant.shifts} shifts, ${tenant.events} events, ${tenant.assignments} assignments of one employee (laid down in ${((Date.now() - filled) / 1000).toFixed(1)} s)`,
  );
  console.log(`window: [${week.from}, ${week.to})\n`);
  const now = new Date();
  const base = { tenantId: tenant.tenantId, now };
  const eventId = await asTenant(tenant.tenantId, async () => {
    const row = await handle.db
      .selectFrom('shifts')
      .select('event_id')
      .where('starts_at', '=', '2026-03-03T00:00:00Z')
      .executeTakeFirstOrThrow();
    return row.event_id;
  });
  const queries: [string, (db: Kysely<Database>) => Compilable][] = [
    [
      'GET /shifts?from&to (admin)',
      (db) => selectShiftList(db, { ...base, onlyVisible: false, window: week }),
    ],
    [
      'GET /shifts?from&to (employee)',
      (db) => selectShiftList(db, { ...base, onlyVisible: true, window: week }),
    ],
    [
      'GET /events/{id}/shifts?from&to',
      (db) => selectShiftList(db, { ...base, onlyVisible: false, eventId, window: week }),
    ],
    ['GET /events?from&to', (db) => selectEventList(db, tenant.tenantId, false, week)],
    [
      'GET /me/assignments?from&to',
      (db) => selectUserAssignments(db, { ...base, userId: tenant.userId, onlyVisible: true, window: week }),
    ],
    [
      'for comparison: GET /shifts with starts_at < to AND ends_at > from, without the length bound',
      (db) =>
        selectShiftList(db, { ...base, onlyVisible: false })
          .where('shifts.starts_at', '<', week.to)
          .where('shifts.ends_at', '>', week.from),
    ],
  ];
  for (const [label, query] of queries) {
    const lines = await asTenant(tenant.tenantId, async () => {
      const compiled = query(handle.db).compile();
      const result = await handle.db.executeQuery<{ 'QUERY PLAN': string }>(
        CompiledQuery.raw(`EXPLAIN (ANALYZE, BUFFERS) ${compiled.sql}`, [...compiled.parameters]),
      );
      return result.rows.map((row) => row['QUERY PLAN']);
    });
    console.log(`## ${label}\n\n${lines.join('\n')}\n`);
  }
  await handle.close();
} finally {
  cluster.stop();
}
