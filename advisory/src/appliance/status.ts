import type { ChannelTrouble } from '../alerts/outbox.ts';
import type { AssetEvaluation } from '../evaluation/verdicts.ts';
import type { Rejection } from '../feed/format/rejection.ts';
import type { VerifiedFeed } from '../feed/verify/verify-feed.ts';
import type { SourceStatus } from '../inventory/collect.ts';
import type { HealthProblem } from './health.ts';

/**
 * What the appliance knows of itself, as the dashboard, `/health` and `advisory check`
 * read it. Types (and feedOrigin, which reads them) only: every module above may read it
 * without importing the appliance.
 */
/** The feed the appliance evaluates with, and where it came from. */
export interface FeedInUse {
  feed: VerifiedFeed;
  /**
   * `live`: read and verified from ADVISORY_FEED_URL by this process, the feed host or the
   * feed directory (ApplianceStatus.feedSource says which; feedOrigin tells them apart);
   * `cache`: re-verified from the cache.
   */
  from: 'live' | 'cache';
  since: string;
}

/**
 * Where the feed in use came from, as every output reports it (`origin` in /health,
 * /verdicts.json, `check --json` and /metrics; the words of `check`'s first line):
 * `host` pulled over HTTP(S) from the feed host, `directory` read from the feed directory
 * (ADVISORY_FEED_URL a path or `file://` URL: nothing was pulled over a network),
 * `cache` re-verified from the cache, `none` no verified feed is in use.
 */
export type FeedOrigin = 'host' | 'directory' | 'cache' | 'none';

/** The origin of the feed in use (FeedOrigin): the one place `live` is told apart by its source. */
export function feedOrigin(status: Pick<ApplianceStatus, 'feed' | 'feedSource'>): FeedOrigin {
  if (!status.feed) return 'none';
  if (status.feed.from === 'cache') return 'cache';
  return status.feedSource === 'directory' ? 'directory' : 'host';
}

export interface PullOutcome {
  at: string;
  outcome: 'accepted' | 'unchanged' | 'rejected' | 'unreachable';
  message: string;
  rejection?: Rejection;
}

export interface ApplianceStatus {
  startedAt: string;
  feedLocation: string;
  /** What ADVISORY_FEED_URL names: the feed host (`http`, HTTP(S)) or a feed directory. */
  feedSource: 'http' | 'directory';
  feed: FeedInUse | null;
  /** Why no live feed is in use (the last pull's problem), while that holds. */
  problem: PullOutcome | null;
  /** Why no feed serves when the last one expired, until a feed is accepted (appliance/feed-keeper.ts). */
  expired?: PullOutcome | null;
  lastPull: PullOutcome | null;
  /**
   * The live feed's refusal in effect (appliance/feed-keeper.ts): kept while later pulls
   * cannot reach the host, until a feed is accepted or unchanged.
   */
  refused?: PullOutcome | null;
  /** The cache found not to verify at start, but for expiry (tampering, damage), while this process runs. */
  cacheRefused?: PullOutcome | null;
  lastRefresh: { startedAt: string; finishedAt: string; ms: number } | null;
  inventory: SourceStatus[];
  /** Why the inventory file as it stands could not be read (the last good one is used). */
  inventoryError: string | null;
  evaluations: AssetEvaluation[];
  evaluatedAt: string | null;
  outbox: {
    channels: string[];
    pending: number;
    failed: number;
    damaged: number;
    /** Channels whose deliveries keep failing (alerts/outbox.ts), until one succeeds. */
    failing?: ChannelTrouble[];
  };
  /** How long before the feed in use expires it is said to be expiring (ADVISORY_FEED_EXPIRY_WARNING). */
  feedExpiryWarningMs: number;
  readOnly: boolean;
  /** The last refresh's failure (a full or read-only disk, damaged state), until one succeeds. */
  lastRefreshError: { at: string; message: string } | null;
  /** Why the decision log cannot be vouched for (decisions/store.ts), while that holds. */
  logProblem: string | null;
  /** Why the decision log is not the one the state recorded (appliance/log-head.ts): deleted, cut short, replaced. */
  logLost?: string | null;
  /**
   * Read-only (`advisory check` beside the daemon): the problems the process holding the
   * state directory last judged and kept there (appliance/state.ts, health.json); null
   * otherwise, or when it kept none.
   */
  kept?: KeptHealth | null;
}

/** The health a writing process keeps in its state directory, for a read-only check. */
export interface KeptHealth {
  /** When it was judged. */
  at: string;
  /** The process that judged it. */
  pid: number;
  problems: HealthProblem[];
}

/**
 * What this process has done since it started, for /metrics (Prometheus counters: they
 * start again from zero at a restart, which Prometheus expects).
 */
export interface ApplianceCounters {
  /** Refreshes that went through and that failed (a full disk, damaged state). */
  refreshes: { succeeded: number; failed: number };
  /** Pulls of the live feed, by outcome. */
  pulls: Record<PullOutcome['outcome'], number>;
}
