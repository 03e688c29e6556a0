import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import pino from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { until } from '../../../scripts/test-wait.ts';
import type { WakeupSource } from '../../src/db/database.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { newId } from '../../src/ids.ts';
import { type ClaimedJob, claimJobs } from '../../src/jobs/repository.ts';
import {
  defaultWorkerOptions,
  type JobHandler,
  JobWorker,
  type WorkerOptions,
} from '../../src/jobs/worker.ts';
import { pruneWebhookRecords } from '../../src/webhooks/repository.ts';
import { capturedLog } from '../support/captured-log.ts';
import { type FileDatabase, useTestDatabase } from '../support/database.ts';
import { on, withDbHooks } from '../support/db-hooks.ts';
import { bareTenant, bareWebhook, enqueueJobs, queuePushJobs } from '../support/jobs.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * The job queue (src/jobs/) on a real database: several workers share it, each job is
 * done once in the normal case, tenants are served fairly, failures are retried with a
 * doubling wait and then given up, and a job whose worker vanished is taken again once
 * its lease runs out. Runs on PGlite and, with TEST_DB=postgres, on PostgreSQL.
 */
const handle = useTestDatabase();
const silent = pino({ level: 'silent' });
const workers: JobWorker[] = [];

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop();
  // The queue is shared by every tenant: no test leaves work for the next one's workers.
  await handle.owner.deleteFrom('jobs').execute();
});

const tenant = () => bareTenant(handle.owner);

const queue = (tenantId: string, count: number, maxAttempts = 3) =>
  queuePushJobs(handle.db, tenantId, count, maxAttempts);

function worker(handler: JobHandler, options: Partial<WorkerOptions> = {}): JobWorker {
  const made = new JobWorker(
    handle.db,
    { push: handler, webhook: handler },
    { ...defaultWorkerOptions, pollMs: 20, backoffMs: 10, ...options },
    silent,
  );
  workers.push(made);
  return made;
}

const jobsOf = (tenantId: string) =>
  handle.owner
    .selectFrom('jobs')
    .select(['id', 'status', 'attempts', 'last_error', 'locked_by'])
    .where('tenant_id', '=', tenantId)
    .execute();

describe('the job queue', () => {
  it('does every job once across three workers, tenant by tenant', async () => {
    const tenants = await Promise.all([tenant(), tenant(), tenant(), tenant()]);
    const queued = (await Promise.all(tenants.map((t) => queue(t, 50)))).flat();
    const done: string[] = [];
    const handler: JobHandler = async (job) => {
      // Other tests' leftovers share the queue (files and tests run in any order).
      if (tenants.includes(job.tenant_id)) done.push(job.id);
      await new Promise((resolve) => setTimeout(resolve, 1));
      return { outcome: 'done' };
    };
    const three = [worker(handler), worker(handler), worker(handler)];
    for (const w of three) w.start();
    await until(() => done.length >= queued.length);
    await Promise.all(three.map((w) => w.idle()));
    expect(done.sort()).toEqual([...queued].sort());
    for (const t of tenants) {
      expect(new Set((await jobsOf(t)).map((j) => `${j.status}/${j.attempts}`))).toEqual(new Set(['done/1']));
    }
  });

  it('keeps one tenant with hanging jobs from holding up another', async () => {
    const [hanging, other] = [await tenant(), await tenant()];
    await queue(hanging, 200);
    const others = await queue(other, 5);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const done: string[] = [];
    const w = worker(
      async (job) => {
        if (job.tenant_id === hanging) await held;
        else done.push(job.id);
        return { outcome: 'done' };
      },
      { concurrency: 8, perTenant: 4 },
    );
    w.start();
    await until(() => done.length === others.length);
    // The hanging tenant holds its share of the slots and no more.
    const inHand = (await jobsOf(hanging)).filter((j) => j.locked_by !== null && j.status === 'pending');
    expect(inHand.length).toBeLessThanOrEqual(4);
    release();
    await w.idle();
    expect((await jobsOf(hanging)).every((j) => j.status === 'done')).toBe(true);
  });

  it('tries again with a doubling wait, then gives up with the last error', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1, 3);
    const tries: number[] = [];
    const w = worker(
      async (job) => {
        if (job.id !== id) return { outcome: 'done' };
        tries.push(Date.now());
        return { outcome: 'retry', error: `try ${job.attempts} failed` };
      },
      { backoffMs: 100 },
    );
    w.start();
    await w.idle();
    expect(tries).toHaveLength(3);
    // 100 ms, then 200 ms (the database's clock and this one's may differ a little).
    expect((tries[1] ?? 0) - (tries[0] ?? 0)).toBeGreaterThanOrEqual(80);
    expect((tries[2] ?? 0) - (tries[1] ?? 0)).toBeGreaterThanOrEqual(180);
    expect(await jobsOf(t)).toEqual([
      { id, status: 'dead', attempts: 3, last_error: 'try 3 failed', locked_by: expect.any(String) },
    ]);
  });

  it('gives up at once on a job no attempt can do, and counts a throwing handler as a try that may succeed later', async () => {
    const t = await tenant();
    const [hopeless, flaky] = await queue(t, 2, 5);
    let thrown = 0;
    const w = worker(async (job) => {
      if (job.id === hopeless) return { outcome: 'dead', error: 'the keys cannot be used' };
      if (job.id === flaky && thrown++ === 0) throw new Error('connection reset');
      return { outcome: 'done' };
    });
    w.start();
    await w.idle();
    const rows = Object.fromEntries((await jobsOf(t)).map((j) => [j.id, j]));
    expect(rows[hopeless as string]).toMatchObject({
      status: 'dead',
      attempts: 1,
      last_error: 'the keys cannot be used',
    });
    expect(rows[flaky as string]).toMatchObject({ status: 'done', attempts: 2, last_error: null });
  });

  it('takes a job again once the lease of a vanished worker runs out; a lost last attempt is given up', async () => {
    const t = await tenant();
    const [again, last] = await queue(t, 2, 1);
    // A worker claims both and is killed: nothing more is heard from it.
    await sql`UPDATE jobs SET max_attempts = 2 WHERE id = ${again}`.execute(handle.owner);
    const claimed: ClaimedJob[] = await claimJobs(handle.db, {
      worker: 'gone',
      leaseMs: 60_000,
      batch: 10,
      perTenant: 10,
      busy: [],
    });
    expect(claimed.map((j) => j.id).sort()).toEqual([again, last].sort());
    const done: string[] = [];
    const w = worker(async (job) => {
      if (job.tenant_id === t) done.push(job.id);
      return { outcome: 'done' };
    });
    w.start();
    // Not before the lease runs out: neither another claim nor the running worker takes them.
    expect(
      await claimJobs(handle.db, { worker: 'early', leaseMs: 60_000, batch: 10, perTenant: 10, busy: [] }),
    ).toEqual([]);
    await w.idle();
    expect(done).toEqual([]);
    // The lease runs out (moved, rather than waited for: a short real lease would race a
    // loaded machine's clock between the claims above).
    await sql`UPDATE jobs SET locked_until = now() - interval '1 second'
               WHERE id IN (${again}, ${last})`.execute(handle.owner);
    await until(async () => done.length === 1);
    await w.idle();
    expect(done).toEqual([again]);
    const rows = Object.fromEntries((await jobsOf(t)).map((j) => [j.id, j]));
    expect(rows[again as string]).toMatchObject({ status: 'done', attempts: 2 });
    expect(rows[last as string]).toMatchObject({
      status: 'dead',
      attempts: 1,
      last_error: 'the worker stopped during the last attempt',
    });
  });

  it('claims nothing of the tenants a worker says it is busy with', async () => {
    const [busy, alsoBusy, free] = [await tenant(), await tenant(), await tenant()];
    await queue(busy, 3);
    await queue(alsoBusy, 2);
    const [wanted] = await queue(free, 1);
    const claimed = await claimJobs(handle.db, {
      worker: 'w',
      leaseMs: 60_000,
      batch: 10,
      perTenant: 10,
      busy: [busy, alsoBusy],
    });
    expect(claimed.map((j) => j.id)).toEqual([wanted]);
  });
});

describe('finished jobs', () => {
  it('are removed a week after they were done, and a month after they were given up', async () => {
    const t = await tenant();
    const [recent, oldDone, deadMonth, deadWeek, pending] = await queue(t, 5);
    const finish = (id: string | undefined, status: 'done' | 'dead', daysAgo: number) =>
      sql`UPDATE jobs SET status = ${status}, finished_at = now() - make_interval(days => ${daysAgo})
           WHERE id = ${id}`.execute(handle.owner);
    await finish(recent, 'done', 6);
    await finish(oldDone, 'done', 8);
    await finish(deadMonth, 'dead', 31);
    await finish(deadWeek, 'dead', 8);
    const w = worker(async () => ({ outcome: 'done' }), { concurrency: 0 });
    expect(await w.prune()).toBe(2);
    expect((await jobsOf(t)).map((j) => j.id).sort()).toEqual([recent, deadWeek, pending].sort());
    expect(await w.prune()).toBe(0);
  });
});

describe('finished webhook deliveries', () => {
  it('are removed 30 days after they were made once delivered or given up; open ones stay', async () => {
    const t = await tenant();
    const hook = await bareWebhook(handle.owner, t, ['form.submitted']);
    const deliveries = [
      ['delivered', 31],
      ['dead', 31],
      ['failed', 40],
      ['pending', 40],
      ['delivered', 29],
    ] as const;
    const ids = deliveries.map(() => newId());
    await handle.owner
      .insertInto('webhook_deliveries')
      .values(
        deliveries.map(([status, daysAgo], i) => ({
          tenant_id: t,
          id: ids[i] as string,
          webhook_id: hook,
          seq: i + 1,
          event_type: 'form.submitted',
          payload: JSON.stringify({ type: 'form.submitted' }),
          status,
          created_at: sql<string>`now() - make_interval(days => ${daysAgo})`,
          delivered_at: status === 'delivered' ? sql<string>`now()` : null,
        })),
      )
      .execute();
    // The webhooks feature's pruning, as src/app.ts registers it.
    const w = worker(async () => ({ outcome: 'done' }), { concurrency: 0 }).prunes(pruneWebhookRecords);
    expect(await w.prune()).toBe(2);
    const left = await handle.owner
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('tenant_id', '=', t)
      .execute();
    expect(left.map((d) => d.id).sort()).toEqual(ids.slice(2).sort());
    expect(await w.prune()).toBe(0);
  });
});

describe('waking a worker', runsIf(inject('testDb') === 'postgres', NEEDS_POSTGRES), () => {
  it('wakes an idle worker of another process at once when a job becomes due, with no poll', async () => {
    const t = await tenant();
    const ran: string[] = [];
    let wake = () => {};
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    // Polls once an hour: only the announcement can bring it to the job in time.
    const listening = new JobWorker(
      handle.db,
      {
        push: async (job) => {
          if (job.tenant_id === t) {
            ran.push(job.id);
            wake();
          }
          return { outcome: 'done' };
        },
        webhook: async () => ({ outcome: 'done' }),
      },
      { ...defaultWorkerOptions, pollMs: 3_600_000 },
      silent,
      handle.wakeups,
    );
    workers.push(listening);
    listening.start();
    await listening.idle();
    // Queued by "another process": nothing here kicks the worker.
    const [id] = await queue(t, 1);
    await woken;
    expect(ran).toEqual([id]);
  });
});

describe('webhook batches', () => {
  it('are removed once no hook needs them, and kept while one does', async () => {
    const t = await tenant();
    const hook = await bareWebhook(handle.owner, t, ['shift.published']);
    const [spent, needed] = [newId(), newId()];
    for (const id of [spent, needed]) {
      await handle.owner
        .insertInto('webhook_batches')
        .values({ tenant_id: t, id, event_type: 'shift.published', size: 2 })
        .execute();
      await handle.owner
        .insertInto('webhook_batch_bodies')
        .values([0, 1].map((position) => ({ tenant_id: t, batch_id: id, position, body: '{}' })))
        .execute();
    }
    await handle.owner
      .insertInto('webhook_fanouts')
      .values({ tenant_id: t, webhook_id: hook, batch_id: needed, first_seq: 1, total: 2 })
      .execute();
    const w = worker(async () => ({ outcome: 'done' }), { concurrency: 0 }).prunes(pruneWebhookRecords);
    // The spent batch's two bodies, then the batch itself (a bounded number per statement).
    expect(await w.prune()).toBe(3);
    const left = () =>
      handle.owner.selectFrom('webhook_batches').select('id').where('tenant_id', '=', t).execute();
    const bodiesLeft = () =>
      handle.owner.selectFrom('webhook_batch_bodies').select('batch_id').where('tenant_id', '=', t).execute();
    expect((await left()).map((b) => b.id)).toEqual([needed]);
    expect((await bodiesLeft()).map((b) => b.batch_id)).toEqual([needed, needed]);
    // A hook removed takes its shares with it; its batch goes with the next prune.
    await handle.owner.deleteFrom('webhooks').where('tenant_id', '=', t).execute();
    expect(await w.prune()).toBe(3);
    expect(await left()).toEqual([]);
    expect(await bodiesLeft()).toEqual([]);
  });
});

describe('the jobs table', () => {
  const refused = async (statement: Promise<unknown>) =>
    (
      (await statement.then(
        () => ({ code: 'accepted' }),
        (e: unknown) => e,
      )) as { code?: string }
    ).code;

  it('holds a key once: queuing the same work again adds nothing', async () => {
    const t = await tenant();
    const job = { tenant_id: t, kind: 'push' as const, key: 'n1:s1', payload: {}, max_attempts: 3 };
    await asTenant(t, () => enqueueJobs(handle.db, [{ ...job, id: randomUUID().replaceAll('-', '') }]));
    await asTenant(t, () => enqueueJobs(handle.db, [{ ...job, id: randomUUID().replaceAll('-', '') }]));
    expect(await jobsOf(t)).toHaveLength(1);
    // Past the application, the database refuses the second row itself.
    const insert = sql`INSERT INTO jobs (tenant_id, id, kind, key, payload, max_attempts)
                       VALUES (${t}, ${randomUUID()}, 'push', 'n1:s1', '{}', 3)`.execute(handle.owner);
    expect(await refused(insert)).toBe('23505');
  });

  it('refuses more attempts than the cap, an unknown kind, and a finished job without its time', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1, 2);
    expect(await refused(sql`UPDATE jobs SET attempts = 3 WHERE id = ${id}`.execute(handle.owner))).toBe(
      '23514',
    );
    expect(await refused(sql`UPDATE jobs SET kind = 'mail' WHERE id = ${id}`.execute(handle.owner))).toBe(
      '23514',
    );
    expect(await refused(sql`UPDATE jobs SET status = 'done' WHERE id = ${id}`.execute(handle.owner))).toBe(
      '23514',
    );
  });

  it('shows the application one tenant’s jobs only', async () => {
    const [mine, theirs] = [await tenant(), await tenant()];
    await queue(mine, 1);
    await queue(theirs, 2);
    const seen = await asTenant(mine, () => handle.db.selectFrom('jobs').select('tenant_id').execute());
    expect(seen.map((r) => r.tenant_id)).toEqual([mine]);
    // Queuing a job for another tenant from this tenant's scope is refused.
    const foreign = asTenant(mine, () =>
      enqueueJobs(handle.db, [
        {
          tenant_id: theirs,
          id: randomUUID().replaceAll('-', ''),
          kind: 'push',
          key: 'x',
          payload: {},
          max_attempts: 1,
        },
      ]),
    );
    expect(await refused(foreign)).toBe('42501');
  });

  it('sets a job back without spending a try when its handler says later', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1, 1);
    let calls = 0;
    const w = worker(async (job) => {
      if (job.tenant_id !== t) return { outcome: 'done' };
      calls += 1;
      // Twice not yet: a job with one try only is still done on the third call.
      return calls < 3 ? { outcome: 'later', delayMs: 0 } : { outcome: 'done' };
    });
    w.start();
    await until(async () => (await jobsOf(t))[0]?.status === 'done');
    expect(calls).toBe(3);
    expect(await jobsOf(t)).toEqual([
      { id, status: 'done', attempts: 1, last_error: null, locked_by: expect.any(String) },
    ]);
  });
});

/** A promise and the function that settles it: an event a test waits for. */
function signal<T = void>(): { fire: (value: T) => void; fired: Promise<T> } {
  let fire: (value: T) => void = () => {};
  const fired = new Promise<T>((resolve) => {
    fire = resolve;
  });
  return { fire, fired };
}

/** A worker on `db` (the test database, or a view of it) logging to `log`. */
function workerOn(
  db: FileDatabase['db'],
  handler: JobHandler,
  log: FastifyBaseLogger,
  options: Partial<WorkerOptions> = {},
  wakeups?: WakeupSource,
): JobWorker {
  const made = new JobWorker(
    db,
    { push: handler, webhook: handler },
    { ...defaultWorkerOptions, pollMs: 20, backoffMs: 10, ...options },
    log,
    wakeups,
  );
  workers.push(made);
  return made;
}

describe('a tenant’s share of the slots', () => {
  it('never holds more jobs than its slots, nor a tenant more than its share, however many are due', async () => {
    const tenants = [await tenant(), await tenant()];
    for (const t of tenants) await queue(t, 10);
    // Every job waits until the slots are full once, so that a claim past them would show.
    const full = signal();
    const inHand = new Map<string, number>();
    let most = 0;
    let mostOfOne = 0;
    let ran = 0;
    const w = worker(
      async (job) => {
        if (!tenants.includes(job.tenant_id)) return { outcome: 'done' };
        inHand.set(job.tenant_id, (inHand.get(job.tenant_id) ?? 0) + 1);
        const held = [...inHand.values()].reduce((a, b) => a + b, 0);
        most = Math.max(most, held);
        mostOfOne = Math.max(mostOfOne, ...inHand.values());
        if (held === 3) full.fire();
        await full.fired;
        // Turns go by with the slots full: a worker that claimed past them would run more.
        for (let turn = 0; turn < 5; turn++) await nextTurn();
        inHand.set(job.tenant_id, (inHand.get(job.tenant_id) ?? 1) - 1);
        ran += 1;
        return { outcome: 'done' };
      },
      // 3 slots: a quarter (one) stays with the others, so a tenant's share is 2.
      { concurrency: 3, perTenant: 24 },
    );
    w.start();
    await w.idle();
    expect([ran, most, mostOfOne]).toEqual([20, 3, 2]);
  });

  it('is what a quarter of the slots leaves (6 of 8), taken up again as its jobs finish', async () => {
    const [hanging, other] = [await tenant(), await tenant()];
    // The default share (24) is more than 8 slots allow: a quarter stays with the others.
    const ids = await queue(hanging, 20);
    const quick = ids[0] as string;
    // The quick job is the tenant's first: it is claimed at once and finishes while the others hang.
    await sql`UPDATE jobs SET run_at = now() - interval '1 minute' WHERE id = ${quick}`.execute(handle.owner);
    const [first] = await queue(other, 1);
    const release = signal();
    let hung = 0;
    const otherDone = new Set<string>();
    const w = worker(
      async (job) => {
        if (job.tenant_id === other) otherDone.add(job.id);
        else if (job.tenant_id === hanging && job.id !== quick) {
          hung += 1;
          await release.fired;
        }
        return { outcome: 'done' };
      },
      { concurrency: 8 },
    );
    w.start();
    const statusOf = async (id: string) =>
      (await jobsOf(hanging)).concat(await jobsOf(other)).find((j) => j.id === id)?.status;
    // The quick job and the other tenant's are recorded done: their slots were handed on.
    await until(async () => (await statusOf(quick)) === 'done' && (await statusOf(first ?? '')) === 'done');
    // Another job of the other tenant, claimed after that: the hanging tenant had its turn too.
    const [second] = await queue(other, 1);
    await until(async () => (await statusOf(second ?? '')) === 'done');
    expect(hung).toBe(6);
    const held = (await jobsOf(hanging)).filter((j) => j.status === 'pending' && j.locked_by === w.name);
    expect(held).toHaveLength(6);
    release.fire();
    await w.idle();
    expect(hung).toBe(19);
  });
});

describe('a worker’s life', () => {
  it('marks the jobs it holds with its name: host, process and a random part of its own', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1);
    const w = worker(async () => ({ outcome: 'done' }));
    expect(w.name).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{6}$`));
    expect(worker(async () => ({ outcome: 'done' })).name).not.toBe(w.name);
    w.start();
    await w.idle();
    expect(await jobsOf(t)).toEqual([
      { id, status: 'done', attempts: 1, last_error: null, locked_by: w.name },
    ]);
  });

  it('claims nothing when stopped before its first look', async () => {
    const t = await tenant();
    await queue(t, 1);
    const ran: string[] = [];
    const w = worker(async (job) => {
      ran.push(job.id);
      return { outcome: 'done' };
    });
    w.start();
    await w.stop();
    expect(ran).toEqual([]);
    expect((await jobsOf(t)).map((j) => [j.status, j.attempts, j.locked_by])).toEqual([['pending', 0, null]]);
  });

  it('takes no more work once stopped, however it is asked', async () => {
    const t = await tenant();
    const ran: string[] = [];
    const w = worker(async (job) => {
      ran.push(job.id);
      return { outcome: 'done' };
    });
    w.start();
    await w.idle();
    await w.stop();
    await queue(t, 1);
    w.kick();
    await w.idle();
    expect(ran).toEqual([]);
    expect((await jobsOf(t)).map((j) => j.attempts)).toEqual([0]);
  });

  it('waits, when stopped, for the jobs in hand, and records them done', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1);
    const entered = signal();
    const release = signal();
    const w = worker(async (job) => {
      if (job.tenant_id === t) {
        entered.fire();
        await release.fired;
      }
      return { outcome: 'done' };
    });
    w.start();
    await entered.fired;
    let stopped = false;
    const stopping = w.stop().then(() => {
      stopped = true;
    });
    // Turns of the event loop go by: the job is still in hand, so stop() has not returned.
    for (let turn = 0; turn < 10; turn++) await nextTurn();
    expect(stopped).toBe(false);
    release.fire();
    await stopping;
    expect(await jobsOf(t)).toEqual([
      { id, status: 'done', attempts: 1, last_error: null, locked_by: w.name },
    ]);
  });

  it('listens for wake-ups once however often it is started, and stops listening when stopped', async () => {
    const events: string[] = [];
    const wakeups: WakeupSource = {
      async listen() {
        events.push('listen');
        return async () => {
          events.push('unlisten');
        };
      },
    };
    const w = workerOn(handle.db, async () => ({ outcome: 'done' }), silent, {}, wakeups);
    w.start();
    w.start();
    await w.stop();
    expect(events).toEqual(['listen', 'unlisten']);
  });

  it('is brought to a due job by a wake-up, without its poll', async () => {
    const t = await tenant();
    let wake = () => {};
    const wakeups: WakeupSource = {
      async listen(onWake) {
        wake = onWake;
        return async () => {};
      },
    };
    const ran = signal<string>();
    const w = workerOn(
      handle.db,
      async (job) => {
        if (job.tenant_id === t) ran.fire(job.id);
        return { outcome: 'done' };
      },
      silent,
      { pollMs: 3_600_000 },
      wakeups,
    );
    w.start();
    await w.idle();
    const [id] = await queue(t, 1);
    wake();
    expect(await ran.fired).toBe(id);
  });

  it('polls for due jobs when wake-ups cannot be had, and says so in the log', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1);
    const { log, lines } = capturedLog();
    const wakeups: WakeupSource = {
      listen: () => Promise.reject(new Error('LISTEN refused')),
    };
    const w = workerOn(handle.db, async () => ({ outcome: 'done' }), log, {}, wakeups);
    w.start();
    await w.idle();
    await w.stop();
    expect(lines.filter((line) => line.msg === 'job wake-ups unavailable; polling for due jobs')).toEqual([
      expect.objectContaining({ level: 40, err: expect.objectContaining({ message: 'LISTEN refused' }) }),
    ]);
    expect((await jobsOf(t)).map((j) => [j.id, j.status])).toEqual([[id, 'done']]);
  });

  it('claims again after a claim failed, and logs the failure', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1);
    const hooks = withDbHooks(handle.db);
    const { log, lines } = capturedLog();
    // The claim: a select from the function claim_jobs.
    hooks.failNext(on('select', 'claim_jobs'), new Error('connection reset'));
    const w = workerOn(hooks.db, async () => ({ outcome: 'done' }), log);
    w.start();
    await w.idle();
    expect(lines.filter((line) => line.msg === 'background jobs could not be claimed')).toEqual([
      expect.objectContaining({ level: 50, err: expect.objectContaining({ message: 'connection reset' }) }),
    ]);
    expect((await jobsOf(t)).map((j) => [j.id, j.status])).toEqual([[id, 'done']]);
  });
});

describe('the outcome of an attempt', () => {
  it('comes back after the wait a handler asked for, without a poll', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1, 1);
    let calls = 0;
    const w = worker(
      async (job) => {
        if (job.tenant_id !== t) return { outcome: 'done' };
        calls += 1;
        return calls === 1 ? { outcome: 'later', delayMs: 200 } : { outcome: 'done' };
      },
      { pollMs: 3_600_000 },
    );
    w.start();
    // idle() waits for the wake this worker set for the job's time.
    await w.idle();
    expect(calls).toBe(2);
    expect(await jobsOf(t)).toEqual([
      { id, status: 'done', attempts: 1, last_error: null, locked_by: w.name },
    ]);
  });

  it('waits the first back-off before the second try', async () => {
    const t = await tenant();
    await queue(t, 1, 3);
    const tried = signal();
    const w = worker(
      async (job) => {
        if (job.tenant_id === t) tried.fire();
        return { outcome: 'retry', error: 'HTTP 503' };
      },
      { backoffMs: 60_000 },
    );
    w.start();
    await tried.fired;
    // stop() waits for the attempt's record.
    await w.stop();
    const { rows } = await sql<{ status: string; attempts: number; wait: number }>`
      SELECT status, attempts, extract(epoch FROM run_at - now())::float AS wait
        FROM jobs WHERE tenant_id = ${t}`.execute(handle.owner);
    expect(rows).toEqual([{ status: 'pending', attempts: 1, wait: expect.any(Number) }]);
    // 60 s after the try (the test takes a few seconds at most on a loaded machine).
    expect(rows[0]?.wait).toBeGreaterThan(30);
    expect(rows[0]?.wait).toBeLessThanOrEqual(60);
  });

  it('logs a job given up, with its kind, tenant, tries and error', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1, 2);
    const { log, lines } = capturedLog();
    const w = workerOn(handle.db, async () => ({ outcome: 'retry', error: 'HTTP 500' }), log, {
      backoffMs: 1,
    });
    w.start();
    await w.idle();
    expect(lines.filter((line) => line.msg === 'background job given up')).toEqual([
      expect.objectContaining({
        level: 40,
        job: id,
        kind: 'push',
        tenantId: t,
        attempts: 2,
        error: 'HTTP 500',
      }),
    ]);
  });

  it('logs an outcome it could not record and leaves the job to its lease', async () => {
    const t = await tenant();
    const [id] = await queue(t, 1);
    const hooks = withDbHooks(handle.db);
    const { log, lines } = capturedLog();
    hooks.failNext(on('update', 'jobs'), new Error('connection lost'));
    const w = workerOn(hooks.db, async () => ({ outcome: 'done' }), log);
    w.start();
    await w.idle();
    expect(lines.filter((line) => line.msg === 'background job outcome not recorded')).toEqual([
      expect.objectContaining({
        level: 50,
        job: id,
        err: expect.objectContaining({ message: 'connection lost' }),
      }),
    ]);
    // Still this worker's until the lease runs out; then it is done again (at least once).
    expect(await jobsOf(t)).toEqual([
      { id, status: 'pending', attempts: 1, last_error: null, locked_by: w.name },
    ]);
  });
});

describe('pruning', () => {
  it('removes every finished job however many batches that takes', async () => {
    const t = await tenant();
    await queue(t, 1_201);
    await sql`UPDATE jobs SET status = 'done', finished_at = now() - interval '8 days'
               WHERE tenant_id = ${t}`.execute(handle.owner);
    const hooks = withDbHooks(handle.db);
    const w = workerOn(hooks.db, async () => ({ outcome: 'done' }), silent, { concurrency: 0 });
    expect(await w.prune()).toBe(1_201);
    expect(await jobsOf(t)).toEqual([]);
    // 500, 500 and 201 rows, then one that finds none and ends the prune.
    expect(hooks.statements).toHaveLength(4);
  });

  it('logs a prune that failed and answers what it removed', async () => {
    const hooks = withDbHooks(handle.db);
    const { log, lines } = capturedLog();
    hooks.failNext(() => true, new Error('statement timeout'));
    const w = workerOn(hooks.db, async () => ({ outcome: 'done' }), log, { concurrency: 0 });
    expect(await w.prune()).toBe(0);
    expect(lines.filter((line) => line.msg === 'finished background jobs could not be removed')).toEqual([
      expect.objectContaining({ level: 40, err: expect.objectContaining({ message: 'statement timeout' }) }),
    ]);
  });
});
