import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ChangeType } from '../changes/catalogue.ts';
import type { PoolUse } from '../db/database.ts';
import type { JobKind } from '../db/types.ts';
import type { LimitAnswer, SubmitLimiter } from '../deps.ts';
import type { QueueDepthRow } from '../jobs/repository.ts';
import type { JobOutcome } from '../jobs/worker.ts';

/** The content type of the Prometheus text format (version 0.0.4) that /metrics answers with. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** The route label of a request no route matched (404): one label, never the raw path. */
export const UNMATCHED_ROUTE = 'unmatched';

/** What the metrics read when they are scraped, rather than being told as it happens. */
export interface MetricsSources {
  pool?: (() => PoolUse) | undefined;
  queue?: (() => Promise<QueueDepthRow[]>) | undefined;
  /** Whether this process's job worker is claiming (false also where it runs none). */
  workerRunning: () => boolean;
}

/** Seconds, for request and job durations: 5 ms to 30 s. */
const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The scheduler's metrics (prom-client), in a registry of this app's own: never
 * prom-client's global one, so two apps in one process (the tests) never mix numbers. The
 * app records what happens (requests, job runs, committed changes, refused submissions);
 * the pool, the queue and the worker are read at each scrape. Labels are bounded: route
 * templates, methods, statuses, job kinds and outcomes, change types; never a raw path,
 * a tenant or a user. The names are listed in docs/operations.md.
 */
export class SchedulerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly statementTimeouts: Counter<'deadline'>;
  private readonly jobRuns: Counter<'kind' | 'outcome'>;
  private readonly jobSeconds: Histogram<'kind'>;
  private readonly changes: Counter<'type'>;
  private readonly reminders: Counter;
  private readonly submitRefusals: Counter;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'scheduler_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status (route "unmatched": no route, 404).',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'scheduler_http_request_duration_seconds',
      help: 'Time from a request’s arrival to its answer, by method and route template.',
      labelNames: ['method', 'route'],
      buckets: durationBuckets,
      registers,
    });
    this.statementTimeouts = new Counter({
      name: 'scheduler_db_statement_timeouts_total',
      help: 'Requests failed by a database deadline: "server" (statement_timeout cancelled it) or "client" (no answer within the timeout and a second).',
      labelNames: ['deadline'],
      registers,
    });
    this.jobRuns = new Counter({
      name: 'scheduler_job_runs_total',
      help: 'Runs of background jobs in this process, by kind and outcome (done, retry, dead, later).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.jobSeconds = new Histogram({
      name: 'scheduler_job_run_duration_seconds',
      help: 'How long one run of a job took, by kind: a push run sends one Web Push message, a webhook run the deliveries due to one webhook.',
      labelNames: ['kind'],
      buckets: durationBuckets,
      registers,
    });
    this.changes = new Counter({
      name: 'scheduler_changes_total',
      help: 'Changes committed by this process, by type (src/changes/catalogue.ts).',
      labelNames: ['type'],
      registers,
    });
    this.reminders = new Counter({
      name: 'scheduler_reminders_sent_total',
      help: 'Shift reminders this process queued for their people (changes of type reminder.sent).',
      registers,
    });
    this.submitRefusals = new Counter({
      name: 'scheduler_form_submit_refusals_total',
      help: 'Form submissions refused by the submit limiter (429).',
      registers,
    });
    const pool = sources.pool;
    if (pool) {
      new Gauge({
        name: 'scheduler_db_pool_connections',
        help: 'The application pool’s connections now, by state: in_use (lent out) or idle.',
        labelNames: ['state'],
        registers,
        collect() {
          const use = pool();
          this.set({ state: 'in_use' }, use.open - use.idle);
          this.set({ state: 'idle' }, use.idle);
        },
      });
      new Gauge({
        name: 'scheduler_db_pool_max_connections',
        help: 'Connections the application pool may open (DATABASE_POOL_SIZE).',
        registers,
        collect() {
          this.set(pool().max);
        },
      });
      new Gauge({
        name: 'scheduler_db_pool_waiting',
        help: 'Callers waiting for a connection of the application pool now.',
        registers,
        collect() {
          this.set(pool().waiting);
        },
      });
    }
    const queue = sources.queue;
    if (queue) {
      // One read of the queue per scrape, shared by the three gauges.
      let reading: Promise<QueueDepthRow[]> | null = null;
      const depth = () => {
        reading ??= queue().finally(() => {
          reading = null;
        });
        return reading;
      };
      const byKind = (name: string, help: string, value: (d: QueueDepthRow) => number) =>
        new Gauge({
          name,
          help,
          labelNames: ['kind'],
          registers,
          async collect() {
            this.reset();
            for (const row of await depth()) this.set({ kind: row.kind }, value(row));
          },
        });
      byKind(
        'scheduler_jobs_pending',
        'Jobs of every tenant not finished yet (due, leased or waiting for their time), by kind.',
        (d) => d.pending,
      );
      byKind('scheduler_jobs_due', 'Jobs due now that no worker holds, by kind.', (d) => d.due);
      byKind(
        'scheduler_jobs_oldest_due_age_seconds',
        'Seconds since the oldest job due now and held by no worker became due, by kind; 0 when none is.',
        (d) => d.oldestDueSeconds,
      );
    }
    new Gauge({
      name: 'scheduler_job_worker_running',
      help: '1 while this process’s job worker is claiming jobs, 0 otherwise (stopped, or JOB_CONCURRENCY=0).',
      registers,
      collect() {
        this.set(sources.workerRunning() ? 1 : 0);
      },
    });
  }

  /** One answered request; `route` the template, or UNMATCHED_ROUTE. */
  request(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.requestSeconds.observe({ method, route }, seconds);
  }

  statementTimeout(deadline: 'server' | 'client'): void {
    this.statementTimeouts.inc({ deadline });
  }

  jobRun(kind: JobKind, outcome: JobOutcome['outcome'], seconds: number): void {
    this.jobRuns.inc({ kind, outcome });
    this.jobSeconds.observe({ kind }, seconds);
  }

  /** The changes of one committed unit of work. */
  committed(types: readonly ChangeType[]): void {
    for (const type of types) {
      this.changes.inc({ type });
      if (type === 'reminder.sent') this.reminders.inc();
    }
  }

  /** `limiter`, its refusals counted. */
  countingRefusals(limiter: SubmitLimiter): SubmitLimiter {
    const count = (answer: LimitAnswer): LimitAnswer => {
      if (!answer.allowed) this.submitRefusals.inc();
      return answer;
    };
    return {
      limit: limiter.limit,
      take: (key, now) => {
        const answer = limiter.take(key, now);
        return answer instanceof Promise ? answer.then(count) : count(answer);
      },
    };
  }

  /** The text format of every metric now. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
