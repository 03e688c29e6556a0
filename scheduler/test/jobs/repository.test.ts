import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { claimJobs, completeJobs, failJob, postponeJob } from '../../src/jobs/repository.ts';
import { useTestDatabase } from '../support/database.ts';
import { bareTenant, enqueueJobs, queuePushJobs } from '../support/jobs.ts';

/**
 * The job queue's statements (src/jobs/repository.ts) on their own, on this file's own
 * database: what completing a worker's jobs changes, however many there are.
 */
const handle = useTestDatabase();
// Claims take due jobs of every tenant: no test leaves work for the next one's claims
// (the files run in shuffled order in CI).
beforeEach(async () => {
  await handle.owner.deleteFrom('jobs').execute();
});

const wire = () => randomUUID().replaceAll('-', '');

/** A tenant with `count` push jobs due now. */
async function tenantWithJobs(count: number): Promise<string> {
  const tenantId = await bareTenant(handle.owner);
  await queuePushJobs(handle.db, tenantId, count);
  return tenantId;
}

const rowsOf = (tenantId: string) =>
  handle.owner
    .selectFrom('jobs')
    .select(['status', 'attempts', 'locked_by', 'last_error', sql<boolean>`run_at <= now()`.as('due')])
    .where('tenant_id', '=', tenantId)
    .execute();

describe('completeJobs', () => {
  it('marks 1,500 runs of the worker done at once, and leaves another worker’s as they are', async () => {
    const tenantId = await tenantWithJobs(1600);
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

describe('the record of an attempt', () => {
  const claimOf = async (tenantId: string, worker: string) => {
    const claimed = await claimJobs(handle.db, {
      worker,
      leaseMs: 60_000,
      batch: 10_000,
      perTenant: 1,
      busy: [],
    });
    const job = claimed.find((j) => j.tenant_id === tenantId);
    if (!job) throw new Error('nothing claimed');
    return job;
  };

  it('keeps the first 1,000 characters of an error', async () => {
    const tenantId = await tenantWithJobs(1);
    const job = await claimOf(tenantId, 'w1');
    const error = `${'x'.repeat(999)}yz`;
    expect(await asTenant(tenantId, () => failJob(handle.db, job, 'w1', error, { delayMs: 0 }))).toBe(
      'pending',
    );
    expect((await rowsOf(tenantId))[0]?.last_error).toBe(`${'x'.repeat(999)}y`);
  });

  it('changes nothing of a job another worker holds now, and says so', async () => {
    const tenantId = await tenantWithJobs(1);
    const job = await claimOf(tenantId, 'w1');
    const before = await rowsOf(tenantId);
    expect(before).toEqual([
      { status: 'pending', attempts: 1, locked_by: 'w1', last_error: null, due: true },
    ]);
    // A worker whose lease ran out, meanwhile taken by w1: its records are not w1's.
    expect(await asTenant(tenantId, () => failJob(handle.db, job, 'gone', 'late', 'final'))).toBeNull();
    expect(await asTenant(tenantId, () => postponeJob(handle.db, job, 'gone', 60_000))).toBe(false);
    expect(await rowsOf(tenantId)).toEqual(before);
    // Its own holder sets it back.
    expect(await asTenant(tenantId, () => postponeJob(handle.db, job, 'w1', 60_000))).toBe(true);
    expect(await rowsOf(tenantId)).toEqual([
      { status: 'pending', attempts: 0, locked_by: 'w1', last_error: null, due: false },
    ]);
  });
});
