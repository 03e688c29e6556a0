import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, WakeupSource } from '../db/database.ts';
import { asBackground } from '../db/lanes.ts';
import { asTenant } from '../db/tenant-scope.ts';
import type { JobKind } from '../db/types.ts';
import { inJobSpan, outsideTraces } from '../tracing/context.ts';
import {
  type ClaimedJob,
  claimJobs,
  completeJobs,
  failJob,
  type HeldRun,
  postponeJob,
  pruneJobs,
} from './repository.ts';

/**
 * What became of one attempt: done; `retry` (a transient failure: again later, with a
 * doubling wait, until the job's attempts are used up); `dead` (no attempt can succeed);
 * `later` (the job is not through, and this run is not counted as a try: due again after
 * `delayMs`, 0 for at once; e.g. a hook's job with more deliveries to send, or waiting
 * for the retry of the delivery it must send first).
 */
export type JobOutcome =
  | { outcome: 'done' }
  | { outcome: 'retry' | 'dead'; error: string }
  | { outcome: 'later'; delayMs: number };

export type JobHandler = (job: ClaimedJob) => Promise<JobOutcome>;

/** Told of every run's outcome and how long its handler took (src/metrics/). */
export type JobObserver = (kind: JobKind, outcome: JobOutcome['outcome'], seconds: number) => void;

/** How a waiting caller is told its job's record was written, or not. */
interface Settle {
  resolve(): void;
  reject(error: unknown): void;
}

export interface WorkerOptions {
  /** Jobs in hand at once in this process. */
  concurrency: number;
  /** Jobs of one tenant in hand at once in this process: the rest of the slots are the others'. */
  perTenant: number;
  /** How long a claimed job is this worker's; a worker gone longer than that loses it. */
  leaseMs: number;
  /** How often an idle worker looks for due jobs (a change in this process wakes it at once). */
  pollMs: number;
  /** The first wait before a retry; doubled each time, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
}

/** How often a worker removes jobs finished long ago. */
const PRUNE_EVERY_MS = 5 * 60_000;
/** Rows one prune statement removes at most; a prune repeats it, a turn of the event loop between. */
const PRUNE_BATCH = 500;
/** Statements one prune runs at most; the next prune takes the rest. */
const PRUNE_ROUNDS = 200;

/** Removes up to `batch` rows of each kind a feature keeps for a while; how many. */
export type Pruner = (db: Db, batch: number) => Promise<number>;

export const defaultWorkerOptions: WorkerOptions = {
  concurrency: 32,
  perTenant: 24,
  leaseMs: 60_000,
  pollMs: 500,
  backoffMs: 1_000,
  maxBackoffMs: 10 * 60_000,
};

/**
 * Runs the jobs of the `jobs` table (migration 0007): any number of processes share the
 * queue, each claiming due jobs with a lease. Fair between tenants: a tenant holds at most
 * `perTenant` of this worker's slots, so one tenant's backlog or hanging endpoints leave
 * the other slots to the others. A handler that throws counts as a transient failure.
 */
export class JobWorker {
  readonly name = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly inHand = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private poller: NodeJS.Timeout | null = null;
  private filling: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  /** Whether the last claim found nothing (for idle()). */
  private drained = false;

  /** A tenant's share of the slots: a quarter (at least one) always stays with the others. */
  private readonly perTenant: number;

  constructor(
    private readonly db: Db,
    private readonly handlers: Record<JobKind, JobHandler>,
    readonly options: WorkerOptions,
    private readonly log: FastifyBaseLogger,
    private readonly wakeups?: WakeupSource,
  ) {
    const reserve = Math.max(1, Math.floor(options.concurrency / 4));
    this.perTenant = Math.max(1, Math.min(options.perTenant, options.concurrency - reserve));
  }

  /**
   * Starts claiming. Call it once the server listens (app.ts does, on listen): the first
   * claims then never stand between a restart and its first answer, however large the
   * backlog.
   */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.poller = setInterval(() => this.kick(), this.options.pollMs);
    this.poller.unref();
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
    if (this.wakeups) {
      this.listening = this.wakeups
        .listen(() => this.kick())
        .catch((error: unknown) => {
          this.log.warn({ err: error }, 'job wake-ups unavailable; polling for due jobs');
          return null;
        });
    }
    this.kick();
  }

  private pruner: NodeJS.Timeout | null = null;
  /** What is pruned besides finished jobs: the tables features registered (`prunes`). */
  private readonly pruners: Pruner[] = [pruneJobs];
  private listening: Promise<(() => Promise<void>) | null> | null = null;

  /**
   * Prunes the records of a feature too, on the queue's schedule: `pruner` removes at
   * most `batch` rows of each kind of its own and answers how many (src/app.ts registers
   * the webhooks feature's). The queue itself knows no feature's tables.
   */
  prunes(pruner: Pruner): this {
    this.pruners.push(pruner);
    return this;
  }

  private readonly observers: JobObserver[] = [];

  /** Tells `observer` what became of every run from now on (a throwing handler's: retry). */
  observes(observer: JobObserver): this {
    this.observers.push(observer);
    return this;
  }

  /** Whether the worker claims jobs now: started, and not stopped. */
  get claiming(): boolean {
    return !this.stopped;
  }

  /**
   * Removes jobs finished long ago (a week done, a month dead) and what features
   * registered, in small statements with a turn of the event loop between them: on the
   * embedded database a statement holds the process while it runs.
   */
  prune(): Promise<number> {
    return asBackground(() => this.pruneInBatches());
  }

  private async pruneInBatches(): Promise<number> {
    let removed = 0;
    try {
      for (let round = 0; round < PRUNE_ROUNDS; round++) {
        let count = 0;
        for (const pruner of this.pruners) {
          await nextTurn();
          count += await pruner(this.db, PRUNE_BATCH);
        }
        removed += count;
        if (count === 0) break;
      }
    } catch (error) {
      this.log.warn({ err: error }, 'finished background jobs could not be removed');
    }
    return removed;
  }

  /** Looks for due jobs now (after a change in this process queued some). */
  kick(): void {
    if (this.stopped) return;
    if (this.filling) {
      this.again = true;
      return;
    }
    // Claims, jobs and their bookkeeping wait for requests on the embedded database.
    // Outside the trace of the request that kicked it: claims are the worker's own work.
    this.filling = outsideTraces(() => asBackground(() => this.fill()))
      .catch((error: unknown) => {
        this.log.error({ err: error }, 'background jobs could not be claimed');
      })
      .finally(() => {
        this.filling = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private get held(): number {
    let total = 0;
    for (const count of this.inHand.values()) total += count;
    return total;
  }

  private async fill(): Promise<void> {
    for (;;) {
      // A turn of the event loop before each claim: requests and sends go on between batches.
      await nextTurn();
      const free = this.options.concurrency - this.held;
      if (this.stopped || free <= 0) return;
      const busy = [...this.inHand].filter(([, n]) => n >= this.perTenant).map(([t]) => t);
      // No tenant may pass its share with this claim: take at most what the fullest of
      // the others has left (the loop claims again for the rest).
      const fullest = Math.max(0, ...[...this.inHand.values()].filter((n) => n < this.perTenant));
      const jobs = await claimJobs(this.db, {
        worker: this.name,
        leaseMs: this.options.leaseMs,
        batch: free,
        perTenant: Math.max(1, this.perTenant - fullest),
        busy,
      });
      this.drained = jobs.length === 0;
      if (jobs.length === 0) return;
      for (const job of jobs) this.run(job);
    }
  }

  private run(job: ClaimedJob): void {
    this.inHand.set(job.tenant_id, (this.inHand.get(job.tenant_id) ?? 0) + 1);
    const work = this.attempt(job).finally(() => {
      const left = (this.inHand.get(job.tenant_id) ?? 1) - 1;
      if (left === 0) this.inHand.delete(job.tenant_id);
      else this.inHand.set(job.tenant_id, left);
      this.running.delete(work);
      this.kick();
    });
    this.running.add(work);
  }

  /**
   * In the job's tenant scope: the handler and the bookkeeping see that tenant's rows
   * only. Each job starts on a turn of the event loop of its own.
   */
  private async attempt(job: ClaimedJob): Promise<void> {
    await nextTurn();
    return asTenant(job.tenant_id, () => this.attemptInScope(job));
  }

  private async attemptInScope(job: ClaimedJob): Promise<void> {
    let result: JobOutcome;
    const started = performance.now();
    try {
      // A span in the trace of the request that queued the job (src/tracing/context.ts).
      result = await inJobSpan(
        job,
        () => this.handlers[job.kind](job),
        (r) => r.outcome,
      );
    } catch (error) {
      result = { outcome: 'retry', error: error instanceof Error ? error.message : String(error) };
    }
    const seconds = (performance.now() - started) / 1000;
    for (const observe of this.observers) observe(job.kind, result.outcome, seconds);
    try {
      if (result.outcome === 'done') {
        await this.complete(job);
        return;
      }
      if (result.outcome === 'later') {
        // Back at its time in this process (the run's end kicks the worker when that is now).
        if ((await postponeJob(this.db, job, this.name, result.delayMs)) && result.delayMs > 0) {
          this.wakeAfter(result.delayMs);
        }
        return;
      }
      const delayMs = Math.min(this.options.backoffMs * 2 ** (job.attempts - 1), this.options.maxBackoffMs);
      const status = await failJob(
        this.db,
        job,
        this.name,
        result.error,
        result.outcome === 'dead' ? 'final' : { delayMs },
      );
      if (status === 'dead') {
        this.log.warn(
          {
            job: job.id,
            kind: job.kind,
            tenantId: job.tenant_id,
            attempts: job.attempts,
            error: result.error,
          },
          'background job given up',
        );
      } else if (status === 'pending') {
        this.wakeAfter(delayMs);
      }
    } catch (error) {
      // The lease runs out and the job is claimed again: at least once.
      this.log.error({ err: error, job: job.id }, 'background job outcome not recorded');
    }
  }

  /** Back at its time, in this process at least (another may take it first). */
  private wakeAfter(delayMs: number): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.kick();
    }, delayMs + 5);
    timer.unref();
    this.retryTimers.add(timer);
  }

  /** Jobs done, recorded together a few milliseconds later (one statement per tenant, not one per job). */
  private readonly done = new Map<string, { runs: HeldRun[]; recorded: Settle[] }>();
  private doneTimer: NodeJS.Timeout | null = null;

  /**
   * Records a job done. A process killed in the few milliseconds before the record leaves
   * the job to be sent again once its lease runs out: at least once, as ever.
   */
  private complete(job: ClaimedJob): Promise<void> {
    const batch = this.done.get(job.tenant_id) ?? { runs: [], recorded: [] };
    this.done.set(job.tenant_id, batch);
    batch.runs.push({ id: job.id, attempts: job.attempts });
    this.doneTimer ??= setTimeout(() => void this.recordDone(), 10);
    return new Promise<void>((resolve, reject) => batch.recorded.push({ resolve, reject }));
  }

  private async recordDone(): Promise<void> {
    this.doneTimer = null;
    const batches = [...this.done];
    this.done.clear();
    await Promise.all(
      batches.map(async ([tenantId, batch]) => {
        try {
          await asTenant(tenantId, () => completeJobs(this.db, tenantId, this.name, batch.runs));
          for (const r of batch.recorded) r.resolve();
        } catch (error) {
          for (const r of batch.recorded) r.reject(error);
        }
      }),
    );
  }

  /**
   * Resolves once nothing is in hand, nothing is due and no retry this process set is
   * waiting (tests; and a graceful stop of a process that owns the queue's last work).
   */
  async idle(): Promise<void> {
    for (;;) {
      this.kick();
      while (this.filling || this.running.size > 0) {
        await Promise.all([this.filling, ...this.running]);
      }
      if (this.retryTimers.size > 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      if (this.drained || this.stopped) return;
    }
  }

  /** Stops claiming; waits for the jobs in hand (their leases would hand them on anyway). */
  async stop(): Promise<void> {
    this.stopped = true;
    const unlisten = await this.listening;
    this.listening = null;
    await unlisten?.().catch(() => undefined);
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    if (this.pruner) clearInterval(this.pruner);
    this.pruner = null;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    // What is done is recorded now rather than left to the leases.
    if (this.doneTimer) {
      clearTimeout(this.doneTimer);
      await this.recordDone();
    }
    while (this.filling || this.running.size > 0) await Promise.all([this.filling, ...this.running]);
  }
}
