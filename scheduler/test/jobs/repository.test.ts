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
  it('marks 1,500 jobs of the worker done at once, and leaves another worker’s as they are', async () => {
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
    // Every id: the other worker's 100 are named too, and stay theirs.
    await asTenant(tenantId, () => completeJobs(handle.db, tenantId, 'mine', ids));
    const { rows } = await sql<{ status: string; locked_by: string; n: number }>`
      SELECT status, locked_by, count(*)::int AS n FROM jobs WHERE tenant_id = ${tenantId}
       GROUP BY status, locked_by ORDER BY locked_by`.execute(handle.owner);
    expect(rows).toEqual([
      { status: 'done', locked_by: 'mine', n: 1500 },
      { status: 'pending', locked_by: 'theirs', n: 100 },
    ]);
  });
});
