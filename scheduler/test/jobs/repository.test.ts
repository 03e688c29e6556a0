import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { claimJobs, completeJobs } from '../../src/jobs/repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { bareTenant, enqueueJobs } from '../support/jobs.ts';

/**
 * The job queue's statements (src/jobs/repository.ts) on their own, on this file's own
 * database: what completing a worker's jobs changes, however many there are.
 */
let handle: TestDatabase;

beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(async () => handle?.dispose());

const wire = () => randomUUID().replaceAll('-', '');

describe('completeJobs', () => {
  it('marks 1,500 runs of the worker done at once, and leaves another worker’s as they are', async () => {
    const tenantId = await bareTenant(handle.owner);
    const ids = Array.from({ length: 1600 }, wire);
    await asTenant(tenantId, () =>
      enqueueJobs(
        handle.db,
        ids.map((id) => ({
          tenant_id: tenantId,
          id,
          kind: 'push' as const,
          key: id,
          payload: {},
          max_attempts: 3,
        })),
      ),
    );
    const options = { leaseMs: 60_000, perTenant: 2000, busy: [] };
    const mine = await claimJobs(handle.db, { ...options, worker: 'mine', batch: 1500 });
    const theirs = await claimJobs(handle.db, { ...options, worker: 'theirs', batch: 100 });
    expect([mine.length, theirs.length]).toEqual([1500, 100]);
    // Every run: the other worker's 100 are named too, and stay theirs.
    const runs = [...mine, ...theirs].map((job) => ({ id: job.id, attempts: job.attempts }));
    await asTenant(tenantId, () => completeJobs(handle.db, tenantId, 'mine', runs));
    const { rows } = await sql<{ status: string; locked_by: string; n: number }>`
      SELECT status, locked_by, count(*)::int AS n FROM jobs WHERE tenant_id = ${tenantId}
       GROUP BY status, locked_by ORDER BY locked_by`.execute(handle.owner);
    expect(rows).toEqual([
      { status: 'done', locked_by: 'mine', n: 1500 },
      { status: 'pending', locked_by: 'theirs', n: 100 },
    ]);
  });
});

describe('a run whose lease ran out', () => {
  it('is not recorded done once the job was claimed again: the later attempt holds it', async () => {
    const tenantId = await bareTenant(handle.owner);
    const [id] = [wire()];
    await asTenant(tenantId, () =>
      enqueueJobs(handle.db, [
        { tenant_id: tenantId, id: id as string, kind: 'push', key: 'k', payload: {}, max_attempts: 3 },
      ]),
    );
    const claim = (worker: string, leaseMs: number) =>
      claimJobs(handle.db, { worker, leaseMs, batch: 10, perTenant: 10, busy: [] }).then((jobs) =>
        jobs.filter((job) => job.tenant_id === tenantId),
      );
    const [first] = await claim('w', 1);
    // Its lease runs out at once; the same worker claims the job again (a later attempt).
    await sql`UPDATE jobs SET locked_until = now() - interval '1 second' WHERE id = ${id}`.execute(
      handle.owner,
    );
    const [second] = await claim('w', 60_000);
    expect([first?.attempts, second?.attempts]).toEqual([1, 2]);
    // The first run's record comes late: it changes nothing.
    await asTenant(tenantId, () =>
      completeJobs(handle.db, tenantId, 'w', [{ id: id as string, attempts: 1 }]),
    );
    const row = () =>
      handle.owner
        .selectFrom('jobs')
        .select(['status', 'attempts'])
        .where('id', '=', id as string)
        .executeTakeFirstOrThrow();
    expect(await row()).toEqual({ status: 'pending', attempts: 2 });
    await asTenant(tenantId, () =>
      completeJobs(handle.db, tenantId, 'w', [{ id: id as string, attempts: 2 }]),
    );
    expect(await row()).toEqual({ status: 'done', attempts: 2 });
  });
});
