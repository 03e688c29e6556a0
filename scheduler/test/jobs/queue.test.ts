import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { inLockOrder, type JobRequest, queueJobRuns } from '../../src/jobs/queue.ts';
import { claimJobs, completeJobs, failJob, postponeJob } from '../../src/jobs/repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { withDbHooks } from '../support/db-hooks.ts';
import { untilAnotherSessionWaitsOnALock } from '../support/held-racer.ts';
import { bareTenant } from '../support/jobs.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * Queuing work under a key (src/jobs/queue.ts) and what the worker's records of a run do
 * with work queued during it (src/jobs/repository.ts, migration 0019): no work queued is
 * ever left behind a job that finishes, whichever commits first.
 */
let handle: TestDatabase;
const onPostgres = inject('testDb') === 'postgres';

beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(async () => handle?.dispose());
// Claims take due jobs of every tenant: no test leaves work for the next one's claims
// (the files run in shuffled order in CI).
beforeEach(async () => {
  await handle.owner.deleteFrom('jobs').execute();
});

const tenant = () => bareTenant(handle.owner);

const job = (key: string, maxAttempts = 3): JobRequest => ({
  kind: 'webhook',
  key,
  payload: { webhook_id: key },
  maxAttempts,
});

const queue = (tenantId: string, ...jobs: JobRequest[]) =>
  asTenant(tenantId, () => queueJobRuns(handle.db, tenantId, jobs));

const rowOf = async (tenantId: string, key: string) =>
  handle.owner
    .selectFrom('jobs')
    .select([
      'id',
      'status',
      'attempts',
      'run_again',
      'finished_at',
      'last_error',
      sql<boolean>`run_at <= now()`.as('due'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .executeTakeFirstOrThrow();

/** Claims the tenant's due jobs as `worker`. */
const claim = (tenantId: string, worker: string) =>
  claimJobs(handle.db, { worker, leaseMs: 60_000, batch: 10, perTenant: 10, busy: [] }).then((jobs) =>
    jobs.filter((j) => j.tenant_id === tenantId),
  );

describe('the order jobs are queued in', () => {
  const request = (kind: JobRequest['kind'], key: string, n = 0): JobRequest => ({
    kind,
    key,
    payload: { n },
    maxAttempts: 3,
  });

  it('is by kind, then by key in code-unit order, each key once with its last request', () => {
    const jobs = [
      request('webhook', 'hook:b'),
      request('push', 'z'),
      request('webhook', 'hook:a', 1),
      request('push', 'Z'),
      request('webhook', 'hook:a', 2),
      request('push', 'hook:a'),
      request('webhook', 'hook:b'),
    ];
    expect(inLockOrder(jobs).map((j) => [j.kind, j.key, j.payload.n])).toEqual([
      ['push', 'Z', 0],
      ['push', 'hook:a', 0],
      ['push', 'z', 0],
      ['webhook', 'hook:a', 2],
      ['webhook', 'hook:b', 0],
    ]);
    // Whatever order it is given in.
    expect(inLockOrder([...jobs].reverse()).map((j) => `${j.kind} ${j.key}`)).toEqual([
      'push Z',
      'push hook:a',
      'push z',
      'webhook hook:a',
      'webhook hook:b',
    ]);
  });

  it('sends no statement for no jobs', async () => {
    const t = await tenant();
    const hooks = withDbHooks(handle.db);
    await asTenant(t, () => queueJobRuns(hooks.db, t, []));
    expect(hooks.statements).toEqual([]);
  });
});

describe('queuing a run of a job', () => {
  it('queues a new key due now, once however often it is named in one call', async () => {
    const t = await tenant();
    await queue(t, job('a'), job('a'), job('b'));
    expect(await rowOf(t, 'a')).toMatchObject({
      status: 'pending',
      attempts: 0,
      run_again: false,
      due: true,
    });
    const rows = await handle.owner.selectFrom('jobs').select('key').where('tenant_id', '=', t).execute();
    expect(rows.map((r) => r.key).sort()).toEqual(['a', 'b']);
  });

  it('makes a finished job due again with fresh tries, whether it was done or given up', async () => {
    const t = await tenant();
    await queue(t, job('done'), job('dead'));
    await sql`UPDATE jobs SET status = 'done', attempts = 1, finished_at = now(), run_at = now() + interval '1 day'
               WHERE tenant_id = ${t} AND key = 'done'`.execute(handle.owner);
    await sql`UPDATE jobs SET status = 'dead', attempts = 3, finished_at = now(), last_error = 'no'
               WHERE tenant_id = ${t} AND key = 'dead'`.execute(handle.owner);
    await queue(t, job('done'), job('dead'));
    for (const key of ['done', 'dead']) {
      expect(await rowOf(t, key)).toMatchObject({
        status: 'pending',
        attempts: 0,
        finished_at: null,
        last_error: null,
        run_again: false,
        due: true,
      });
    }
  });

  it('leaves a job waiting for its retry at its time, its tries and its error', async () => {
    const t = await tenant();
    await queue(t, job('waiting'));
    await sql`UPDATE jobs SET attempts = 2, run_at = now() + interval '1 hour', last_error = 'HTTP 500'
               WHERE tenant_id = ${t} AND key = 'waiting'`.execute(handle.owner);
    await queue(t, job('waiting'));
    expect(await rowOf(t, 'waiting')).toMatchObject({
      status: 'pending',
      attempts: 2,
      last_error: 'HTTP 500',
      run_again: false,
      due: false,
    });
  });
});

describe('a job queued again while a worker holds it', () => {
  it('is due again at once when the run is recorded done, its tries counted afresh', async () => {
    const t = await tenant();
    await queue(t, job('held'));
    const [held] = await claim(t, 'w1');
    expect(held?.attempts).toBe(1);
    await queue(t, job('held'));
    expect(await rowOf(t, 'held')).toMatchObject({ run_again: true });
    await asTenant(t, () =>
      completeJobs(handle.db, t, 'w1', [{ id: held?.id ?? '', attempts: held?.attempts ?? 0 }]),
    );
    expect(await rowOf(t, 'held')).toMatchObject({
      status: 'pending',
      attempts: 0,
      run_again: false,
      finished_at: null,
      due: true,
    });
    // And it is claimed again: the new work gets its run.
    expect((await claim(t, 'w2')).map((j) => j.id)).toEqual([held?.id]);
  });

  it('is not given up when the held run was its last try: the new work gets tries of its own', async () => {
    const t = await tenant();
    await queue(t, job('last', 1));
    const [held] = await claim(t, 'w1');
    await queue(t, job('last', 1));
    const status = await asTenant(t, () =>
      failJob(handle.db, held ?? { tenant_id: t, id: '', attempts: 1 }, 'w1', 'boom', { delayMs: 0 }),
    );
    expect(status).toBe('pending');
    expect(await rowOf(t, 'last')).toMatchObject({ status: 'pending', attempts: 0, run_again: false });
  });

  it('is given up as before when nothing was queued during the last try', async () => {
    const t = await tenant();
    await queue(t, job('last', 1));
    const [held] = await claim(t, 'w1');
    const status = await asTenant(t, () =>
      failJob(handle.db, held ?? { tenant_id: t, id: '', attempts: 1 }, 'w1', 'boom', { delayMs: 0 }),
    );
    expect(status).toBe('dead');
  });

  it('leaves the new work to the next run when the held run is set back', async () => {
    const t = await tenant();
    await queue(t, job('later'));
    const [held] = await claim(t, 'w1');
    await queue(t, job('later'));
    expect(
      await asTenant(t, () =>
        postponeJob(handle.db, held ?? { tenant_id: t, id: '', attempts: 1 }, 'w1', 60_000),
      ),
    ).toBe(true);
    expect(await rowOf(t, 'later')).toMatchObject({
      status: 'pending',
      attempts: 0,
      run_again: false,
      due: false,
    });
  });

  it('runs again when queued after its lease ran out while its run was still going', async () => {
    const t = await tenant();
    await queue(t, job('overrun'));
    const [held] = await claim(t, 'w1');
    // The lease is over, the run not recorded yet (a run slower than its lease).
    await sql`UPDATE jobs SET locked_until = now() - interval '1 second'
               WHERE tenant_id = ${t} AND key = 'overrun'`.execute(handle.owner);
    await queue(t, job('overrun'));
    expect(await rowOf(t, 'overrun')).toMatchObject({ run_again: true });
    await asTenant(t, () =>
      completeJobs(handle.db, t, 'w1', [{ id: held?.id ?? '', attempts: held?.attempts ?? 0 }]),
    );
    expect(await rowOf(t, 'overrun')).toMatchObject({ status: 'pending', run_again: false, due: true });
  });

  it('is due again with fresh tries, and every claim goes on, when its worker was lost during the last try', async () => {
    const [t, other] = [await tenant(), await tenant()];
    await queue(t, job('lost', 1));
    await claim(t, 'gone');
    await queue(t, job('lost', 1));
    // The worker is killed; its lease runs out.
    await sql`UPDATE jobs SET locked_until = now() - interval '1 second'
               WHERE tenant_id = ${t} AND key = 'lost'`.execute(handle.owner);
    await queue(other, job('theirs'));
    // The claim gives up lost last tries first: this one may not be given up (run_again).
    const claimed = await claimJobs(handle.db, {
      worker: 'w2',
      leaseMs: 60_000,
      batch: 10,
      perTenant: 10,
      busy: [],
    });
    expect(
      claimed.filter((j) => j.tenant_id === t || j.tenant_id === other).map((j) => [j.tenant_id, j.attempts]),
    ).toEqual(
      expect.arrayContaining([
        [t, 1],
        [other, 1],
      ]),
    );
    expect(await rowOf(t, 'lost')).toMatchObject({ status: 'pending', run_again: false });
  });

  it('is refused by the database as run again when finished', async () => {
    const t = await tenant();
    await queue(t, job('rule'));
    const refused = await sql`UPDATE jobs SET status = 'done', finished_at = now(), run_again = true
                               WHERE tenant_id = ${t} AND key = 'rule'`
      .execute(handle.owner)
      .then(
        () => 'accepted',
        (error: { code?: string }) => error.code,
      );
    expect(refused).toBe('23514');
  });
});

describe('queuing racing the record of a run', runsIf(onPostgres, NEEDS_POSTGRES), () => {
  it('counts a queuing that commits while the record waits for the row: the job is due again', async () => {
    const t = await tenant();
    await queue(t, job('race'));
    const [held] = await claim(t, 'w1');
    let recorded: Promise<void> | undefined;
    await asTenant(t, () =>
      handle.db.transaction().execute(async (trx) => {
        await queueJobRuns(trx, t, [job('race')]);
        // The worker records its run done now, from another connection: it waits for this row.
        recorded = asTenant(t, () =>
          completeJobs(handle.db, t, 'w1', [{ id: held?.id ?? '', attempts: held?.attempts ?? 0 }]),
        );
        await untilAnotherSessionWaitsOnALock(handle.owner, recorded);
      }),
    );
    await recorded;
    expect(await rowOf(t, 'race')).toMatchObject({ status: 'pending', run_again: false, due: true });
  });

  it('revives the job when the record commits first and the queuing waits for the row', async () => {
    const t = await tenant();
    await queue(t, job('race2'));
    const [held] = await claim(t, 'w1');
    let queued: Promise<void> | undefined;
    await asTenant(t, () =>
      handle.db.transaction().execute(async (trx) => {
        await completeJobs(trx, t, 'w1', [{ id: held?.id ?? '', attempts: held?.attempts ?? 0 }]);
        queued = queue(t, job('race2'));
        await untilAnotherSessionWaitsOnALock(handle.owner, queued);
      }),
    );
    await queued;
    expect(await rowOf(t, 'race2')).toMatchObject({ status: 'pending', attempts: 0, due: true });
  });
});
