import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import type { Channel } from '../alerts/outbox.ts';
import { type ApplianceCounters, feedOrigin } from '../appliance/status.ts';
import { feedAgeSeconds, verdictCounts } from '../appliance/verdicts-document.ts';
import { LOG_FILE } from '../decisions/store.ts';
import { needsAction } from '../evaluation/verdicts.ts';
import type { DashboardSource } from './server.ts';

/**
 * The appliance's metrics in the Prometheus text format (prom-client), for `/metrics`.
 * Every value is read from the appliance when scraped (the `collect` callbacks): nothing
 * is pushed from the refresh, so the numbers are those of the moment. A registry of the
 * dashboard's own, never prom-client's global one: two dashboards in one process (the
 * tests) never mix their numbers. The names are documented in docs/advisory/appliance.md.
 */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

const CHANNELS: Channel[] = ['webhook', 'email'];

export interface MetricsInput {
  source: DashboardSource;
  version: string;
  now: () => Date;
  /** The health problems as /health judges them now. */
  problems: () => { code: string }[];
}

export function metricsRegistry({ source, version, now, problems }: MetricsInput): Registry {
  const registry = new Registry();
  const registers = [registry];

  new Gauge({
    name: 'advisory_build_info',
    help: 'The running client: always 1, its version in the label.',
    labelNames: ['version'],
    registers,
    collect() {
      this.reset();
      this.set({ version }, 1);
    },
  });

  new Gauge({
    name: 'advisory_feed_info',
    help: 'The feed in use: always 1, its version and where it came from in the labels (from: live or cache; origin: host, directory or cache); no sample while none is in use.',
    labelNames: ['version', 'from', 'origin'],
    registers,
    collect() {
      this.reset();
      const feed = source.status.feed;
      if (feed)
        this.set(
          { version: feed.feed.manifest.feed_version, from: feed.from, origin: feedOrigin(source.status) },
          1,
        );
    },
  });

  // Labelled with the feed's version so that, while no feed is in use, there is no sample
  // at all (absent() in an alert rule) rather than a made-up 0: prom-client always gives
  // an unlabelled gauge a value.
  new Gauge({
    name: 'advisory_feed_age_seconds',
    help: 'Seconds since the feed in use was published (its published_at); no sample while no verified feed is in use.',
    labelNames: ['version'],
    registers,
    collect() {
      this.reset();
      const feed = source.status.feed;
      const age = feedAgeSeconds(source.status, now());
      if (feed && age !== null) this.set({ version: feed.feed.manifest.feed_version }, age);
    },
  });

  new Gauge({
    name: 'advisory_feed_expiry_timestamp_seconds',
    help: 'When the feed in use expires (its expires_at), in Unix seconds; no sample while no verified feed is in use.',
    labelNames: ['version'],
    registers,
    collect() {
      this.reset();
      const feed = source.status.feed;
      const expires = feed ? Date.parse(feed.feed.manifest.expires_at) : Number.NaN;
      if (feed && !Number.isNaN(expires))
        this.set({ version: feed.feed.manifest.feed_version }, expires / 1000);
    },
  });

  new Gauge({
    name: 'advisory_assets',
    help: 'Assets by verdict: blocked, eol, wait-for-patch, hold, install, none (no advisory matches), unknown (the source failed).',
    labelNames: ['verdict'],
    registers,
    collect() {
      for (const [verdict, count] of Object.entries(verdictCounts(source.status.evaluations)))
        this.set({ verdict }, count);
    },
  });

  new Gauge({
    name: 'advisory_assets_needing_action',
    help: 'Assets that need action, as advisory check counts them.',
    registers,
    collect() {
      this.set(source.status.evaluations.filter(needsAction).length);
    },
  });

  new Gauge({
    name: 'advisory_health_problems',
    help: 'Problems /health reports now, by code: 1 while one holds; no sample for a problem that does not.',
    labelNames: ['code'],
    registers,
    collect() {
      this.reset();
      for (const problem of problems()) this.set({ code: problem.code }, 1);
    },
  });

  const counters: ApplianceCounters = source.counters;
  new Counter({
    name: 'advisory_refreshes_total',
    help: 'Refreshes since the process started, by outcome: succeeded, failed (a full disk, damaged state).',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      this.inc({ outcome: 'succeeded' }, counters.refreshes.succeeded);
      this.inc({ outcome: 'failed' }, counters.refreshes.failed);
    },
  });

  new Counter({
    name: 'advisory_feed_pulls_total',
    help: 'Pulls of the live feed since the process started, by outcome: accepted, unchanged, rejected, unreachable.',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      for (const [outcome, count] of Object.entries(counters.pulls)) this.inc({ outcome }, count);
    },
  });

  new Gauge({
    name: 'advisory_outbox_pending',
    help: 'Alert deliveries waiting in the outbox (to be tried or tried again), by channel.',
    labelNames: ['channel'],
    registers,
    async collect() {
      const pending = (await source.outbox?.pending()) ?? [];
      for (const channel of CHANNELS)
        this.set({ channel }, pending.filter((d) => d.channel === channel).length);
    },
  });

  new Gauge({
    name: 'advisory_outbox_failed',
    help: 'Alert deliveries given up after the last attempt (kept in outbox/failed/), by channel.',
    labelNames: ['channel'],
    registers,
    async collect() {
      const failed = (await source.outbox?.failed()) ?? [];
      for (const channel of CHANNELS)
        this.set({ channel }, failed.filter((d) => d.channel === channel).length);
    },
  });

  new Gauge({
    name: 'advisory_decision_log_entries',
    help: 'Entries in the decision log.',
    registers,
    collect() {
      this.set(source.decisions?.head?.seq ?? 0);
    },
  });

  new Gauge({
    name: 'advisory_decision_log_bytes',
    help: 'Size of the decision log file in bytes.',
    registers,
    async collect() {
      const dir = source.decisions?.dir;
      this.set(dir ? await fileSize(path.join(dir, LOG_FILE)) : 0);
    },
  });

  return registry;
}

/** A file's size; 0 while it does not exist yet (a new log). */
async function fileSize(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}
