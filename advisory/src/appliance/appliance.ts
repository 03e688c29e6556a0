import type { Logger } from 'pino';
import { type Alert, withCheckpoint } from '../alerts/alert.ts';
import { mailSender } from '../alerts/email.ts';
import { Outbox } from '../alerts/outbox.ts';
import { postWebhook } from '../alerts/webhook.ts';
import { sha256 } from '../crypto/digest.ts';
import type { PublicKey } from '../crypto/signify.ts';
import type { DecisionKind } from '../decisions/chain.ts';
import { DecisionStore } from '../decisions/store.ts';
import { type AssetEvaluation, evaluate } from '../evaluation/verdicts.ts';
import { defaultLimits } from '../feed/limits.ts';
import { FeedRejectedError, type Rejection } from '../feed/rejection.ts';
import { DirectorySource } from '../feed/sources/directory.ts';
import { defaultHttpLimits, HttpSource } from '../feed/sources/http.ts';
import { type FeedHead, type FeedSource, SourceError } from '../feed/sources/source.ts';
import type { AcceptedState } from '../feed/state.ts';
import { type VerifiedFeed, verifyFeed, verifyHead } from '../feed/verify-feed.ts';
import { collectInventory, loadInventory, type SourceStatus } from '../inventory/collect.ts';
import { InventoryError, type InventoryFile } from '../inventory/config.ts';
import { ensureDir } from '../storage/durable-files.ts';
import { lockStateDir } from '../storage/state-lock.ts';
import { FeedCache } from './cache.ts';
import { type ApplianceConfig, ConfigError } from './config.ts';
import { assessHealth, type Health } from './health.ts';
import { type EvaluationState, planRecording, type Recording } from './record.ts';
import { StateStore } from './state.ts';

/** The feed the appliance evaluates with, and where it came from. */
export interface FeedInUse {
  feed: VerifiedFeed;
  /** `live`: pulled and verified from ADVISORY_FEED_URL; `cache`: re-verified from the cache. */
  from: 'live' | 'cache';
  since: string;
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
  feed: FeedInUse | null;
  /** Why no live feed is in use (the last pull's problem), while that holds. */
  problem: PullOutcome | null;
  lastPull: PullOutcome | null;
  lastRefresh: { startedAt: string; finishedAt: string; ms: number } | null;
  inventory: SourceStatus[];
  /** Why the inventory file as it stands could not be read (the last good one is used). */
  inventoryError: string | null;
  evaluations: AssetEvaluation[];
  evaluatedAt: string | null;
  outbox: { channels: string[]; pending: number; failed: number; damaged: number };
  readOnly: boolean;
  /** The last refresh's failure (a full or read-only disk, damaged state), until one succeeds. */
  lastRefreshError: { at: string; message: string } | null;
  /** Why the decision log cannot be vouched for (decisions/store.ts), while that holds. */
  logProblem: string | null;
}

export interface ApplianceOptions {
  trustedKeys: PublicKey[];
  inventory: InventoryFile;
  logger: Logger;
  now?: () => Date;
  /** Another process holds the state directory: evaluate from the cache, write nothing. */
  readOnly?: boolean;
}

/**
 * The appliance: pull, verify, cache, evaluate, log, alert, in one refresh at a time.
 * A refresh never leaves the appliance without a feed it had: a live feed that cannot be
 * reached or is refused leaves the one in use (from the last pull, or the cache at start)
 * serving, and the status says why.
 */
export class Appliance {
  private readonly current: ApplianceStatus;
  private readonly now: () => Date;
  private readonly source: FeedSource;
  private readonly cache: FeedCache;
  private refreshing: Promise<ApplianceStatus> | null = null;
  private inventory: InventoryFile;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  private constructor(
    readonly config: ApplianceConfig,
    private readonly options: ApplianceOptions,
    private readonly state: StateStore,
    readonly decisions: DecisionStore | null,
    readonly outbox: Outbox,
    private accepted: AcceptedState | null,
    private evaluation: EvaluationState | null,
    private readonly release: (() => Promise<void>) | null,
  ) {
    this.now = options.now ?? (() => new Date());
    this.inventory = options.inventory;
    this.source =
      config.feed.kind === 'http'
        ? new HttpSource(config.feed.url, {
            ...defaultHttpLimits,
            totalMs: config.feedTimeoutMs,
            pullMs: config.feedPullMs,
            connectMs: Math.min(10_000, config.feedTimeoutMs),
          })
        : new DirectorySource(config.feed.path);
    this.cache = new FeedCache(config.feedCache);
    this.current = {
      startedAt: this.now().toISOString(),
      feedLocation: this.source.location,
      feed: null,
      problem: null,
      lastPull: null,
      lastRefresh: null,
      inventory: [],
      inventoryError: null,
      evaluations: [],
      evaluatedAt: null,
      outbox: { channels: outbox.channels, pending: 0, failed: 0, damaged: 0 },
      readOnly: !!options.readOnly,
      lastRefreshError: null,
      logProblem: decisions?.unaccounted ?? null,
    };
  }

  /** The status as of now: a feed whose expiry has passed no longer serves, refresh or not. */
  get status(): ApplianceStatus {
    this.expireFeed();
    return this.current;
  }

  /** The status judged for monitoring (appliance/health.ts), as of now. */
  health(): Health {
    return assessHealth(this.status, this.now(), this.config.feedMaxAgeMs);
  }

  /**
   * Opens the state directory (locked for this process unless read-only), the decision
   * log, the outbox, and re-verifies the cache, which serves until a live pull succeeds.
   * A damaged remembered state is an error (StateError), never a silent fresh start.
   */
  static async open(config: ApplianceConfig, options: ApplianceOptions): Promise<Appliance> {
    try {
      await ensureDir(config.stateDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const problem =
        code === 'EEXIST' || code === 'ENOTDIR'
          ? 'not a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (error as Error).message;
      throw new ConfigError('ADVISORY_STATE_DIR', `${config.stateDir}: ${problem}`);
    }
    const cacheRefused = await new FeedCache(config.feedCache).refusal(config.stateDir);
    if (cacheRefused) throw new ConfigError('ADVISORY_FEED_CACHE', cacheRefused);
    const release = options.readOnly ? null : await lockStateDir(config.stateDir);
    try {
      const state = new StateStore(config.stateDir);
      if (!options.readOnly) await state.clearTemporaries();
      const accepted = await state.accepted();
      const evaluation = await state.evaluation();
      const decisions = options.readOnly
        ? null
        : await DecisionStore.open(config.stateDir, options.now?.() ?? new Date());
      const senders: ConstructorParameters<typeof Outbox>[1] = {};
      const webhook = config.webhookUrl;
      if (webhook) senders.webhook = (alert: Alert) => postWebhook(webhook, alert);
      if (config.smtp) senders.email = mailSender(config.smtp);
      const outbox = new Outbox(`${config.stateDir}/outbox`, senders, {
        ...config.alerts,
        ...(options.now ? { now: options.now } : {}),
      });
      if (!options.readOnly) await outbox.recover();
      const appliance = new Appliance(
        config,
        options,
        state,
        decisions,
        outbox,
        accepted,
        evaluation,
        release,
      );
      await appliance.loadCache();
      return appliance;
    } catch (error) {
      await release?.();
      throw error;
    }
  }

  /**
   * The inventory file is read again at every refresh (operators edit it while the daemon
   * runs); a version that does not parse leaves the last good one in use, and says why.
   */
  private async reloadInventory(): Promise<void> {
    try {
      this.inventory = await loadInventory(this.config.inventoryFile);
      this.status.inventoryError = null;
    } catch (error) {
      if (!(error instanceof InventoryError)) throw error;
      this.status.inventoryError = error.message;
      this.log.warn({ problem: error.message }, 'inventory file refused; the last good one stays in use');
    }
  }

  private get log(): Logger {
    return this.options.logger;
  }

  /** The cache, re-verified against the remembered state before it is used. */
  private async loadCache(): Promise<void> {
    if (!this.options.readOnly) await this.cache.recover();
    const copy = await this.cache.current();
    if (!copy) return;
    const result = await verifyFeed(new DirectorySource(this.config.feedCache), {
      trustedKeys: this.options.trustedKeys,
      lastAccepted: this.accepted,
      now: this.now(),
    });
    const at = this.now().toISOString();
    if (result.ok) {
      this.status.feed = { feed: result.feed, from: 'cache', since: at };
      this.log.info({ feed: result.feed.manifest.feed_version }, 'cached feed verified');
      // The cache is written before the state: after a crash between the two, catch up
      // (or at the next pull, when the disk refuses it now).
      if (!this.options.readOnly) {
        await this.settleAccepted(result.feed, this.now()).catch((error: unknown) => {
          this.log.warn({ err: error }, 'the accepted feed could not be recorded yet');
        });
      }
    } else {
      const message = 'rejection' in result ? result.rejection.message : result.unreachable;
      this.status.problem = {
        at,
        outcome: 'rejected',
        message: `the cached feed does not verify: ${message}`,
      };
      this.log.warn({ problem: message }, 'cached feed refused');
    }
  }

  /**
   * One refresh: pull, verify, evaluate, log, alert. Concurrent calls share one. A failure
   * (a full or read-only disk, no file descriptors) is kept in the status until a refresh
   * goes through, and raised.
   */
  refresh(): Promise<ApplianceStatus> {
    this.refreshing ??= this.refreshOnce()
      .then((status) => {
        this.current.lastRefreshError = null;
        return status;
      })
      .catch((error: unknown) => {
        this.current.lastRefreshError = { at: this.now().toISOString(), message: describeFailure(error) };
        throw error;
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<ApplianceStatus> {
    const started = this.now();
    if (!this.options.readOnly) {
      await this.finishRecording();
      await this.pull();
    }
    this.expireFeed();
    await this.reloadInventory();
    const known = new Map(Object.entries(this.evaluation?.known ?? {}));
    const collection = await collectInventory(this.config.inventoryFile, this.inventory, known);
    this.status.inventory = collection.sources;
    const feed = this.status.feed?.feed ?? null;
    if (feed) {
      const now = this.now();
      const evaluations = evaluate(feed.advisories, collection.assets, now);
      this.status.evaluations = evaluations;
      this.status.evaluatedAt = now.toISOString();
      if (!this.options.readOnly) await this.record(evaluations, collection.assets, feed, now);
    }
    if (!this.options.readOnly) await this.outbox.flush();
    await this.refreshOutboxStatus();
    const finished = this.now();
    this.status.lastRefresh = {
      startedAt: started.toISOString(),
      finishedAt: finished.toISOString(),
      ms: finished.getTime() - started.getTime(),
    };
    return this.status;
  }

  /**
   * The feed step of a refresh alone: fetches the live feed, accepts it when it verifies,
   * keeps the feed in use when not. (Benchmarks time it on its own.)
   */
  async pullFeed(): Promise<PullOutcome | null> {
    await this.pull();
    return this.status.lastPull;
  }

  /** Fetches the live feed; accepts it when it verifies, keeps the feed in use when not. */
  private async pull(): Promise<void> {
    const at = this.now();
    const pullState = await this.state.pull();
    const inUse = this.status.feed;
    if (inUse && inUse.feed.manifestSha256 !== this.accepted?.manifest_sha256) {
      // Cached, but not yet logged and remembered (the disk refused it last time).
      await this.settleAccepted(inUse.feed, at);
    }
    // Ask "changed since?" only while the feed in use is the accepted one.
    const conditional = inUse !== null && inUse.feed.manifestSha256 === this.accepted?.manifest_sha256;
    let outcome: PullOutcome;
    try {
      const head = await this.source.readHead(defaultLimits, conditional ? pullState.validators : null);
      if (head === 'unchanged' || (inUse && sha256(head.manifest) === inUse.feed.manifestSha256)) {
        outcome = { at: at.toISOString(), outcome: 'unchanged', message: 'the feed has not changed' };
        if (inUse) inUse.from = 'live';
        const same =
          JSON.stringify(head === 'unchanged' ? pullState.validators : head.validators) ===
          JSON.stringify(pullState.validators);
        if (!same && head !== 'unchanged')
          await this.state.savePull({ ...pullState, validators: head.validators });
      } else {
        outcome = await this.verifyLive(head, at, pullState);
      }
    } catch (error) {
      if (error instanceof FeedRejectedError) {
        outcome = await this.rejected(error.rejection, null, at, pullState);
      } else if (error instanceof SourceError) {
        outcome = { at: at.toISOString(), outcome: 'unreachable', message: error.message };
        this.log.warn({ problem: error.message }, 'feed unreachable');
      } else {
        throw error;
      }
    }
    this.status.lastPull = outcome;
    this.status.problem =
      outcome.outcome === 'rejected' || outcome.outcome === 'unreachable' ? outcome : null;
  }

  private async verifyLive(
    head: FeedHead,
    at: Date,
    pullState: Awaited<ReturnType<StateStore['pull']>>,
  ): Promise<PullOutcome> {
    const copy = await this.cache.prepare();
    const result = await verifyHead(this.source, head, {
      trustedKeys: this.options.trustedKeys,
      lastAccepted: this.accepted,
      now: at,
      signature: 'required',
      copyTo: copy,
      limits: defaultLimits,
    }).catch(async (error: unknown) => {
      await this.cache.discard(copy);
      throw error;
    });
    if (!result.ok) {
      await this.cache.discard(copy);
      if ('rejection' in result) return this.rejected(result.rejection, sha256(head.manifest), at, pullState);
      this.log.warn({ problem: result.unreachable }, 'feed unreachable');
      return { at: at.toISOString(), outcome: 'unreachable', message: result.unreachable };
    }
    const feed = result.feed;
    // Cache first, then the log and the remembered state: a crash between leaves a cache
    // that is newer, which the next start or pull catches up (settleAccepted).
    await this.cache.commit(copy, feed);
    this.status.feed = { feed, from: 'live', since: at.toISOString() };
    await this.settleAccepted(feed, at);
    await this.state.savePull({ validators: head.validators, lastRejection: null });
    this.log.info({ feed: feed.manifest.feed_version, advisories: feed.advisoryCount }, 'feed accepted');
    return {
      at: at.toISOString(),
      outcome: 'accepted',
      message: `feed ${feed.manifest.feed_version} accepted`,
    };
  }

  /**
   * Logs the acceptance of the feed now in the cache and remembers it, unless both are
   * done. The log entry comes first and is not written twice: a crash or a full disk
   * between the two is caught up at the next start or pull.
   */
  private async settleAccepted(feed: VerifiedFeed, at: Date): Promise<void> {
    if (this.accepted?.manifest_sha256 === feed.manifestSha256) return;
    const logged = await this.decisions?.lastEntry('feed-accepted');
    if (logged?.data.manifest_sha256 !== feed.manifestSha256) {
      await this.logDecisions(
        [
          {
            kind: 'feed-accepted',
            data: {
              feed_version: feed.manifest.feed_version,
              published_at: feed.manifest.published_at,
              expires_at: feed.manifest.expires_at,
              manifest_sha256: feed.manifestSha256,
              signed_by: feed.signedBy,
              advisories: feed.advisoryCount,
              source: this.source.location,
            },
          },
        ],
        at,
      );
    }
    await this.state.saveAccepted(feed.state);
    this.accepted = feed.state;
  }

  private async rejected(
    rejection: Rejection,
    manifestSha256: string | null,
    at: Date,
    pullState: Awaited<ReturnType<StateStore['pull']>>,
  ): Promise<PullOutcome> {
    this.log.warn({ reason: rejection.reason, problem: rejection.message }, 'feed rejected');
    const key = { reason: rejection.reason, manifestSha256: manifestSha256 ?? '' };
    const repeat =
      pullState.lastRejection?.reason === key.reason &&
      pullState.lastRejection.manifestSha256 === key.manifestSha256;
    if (!repeat) {
      await this.logDecisions(
        [
          {
            kind: 'feed-rejected',
            data: {
              reason: rejection.reason,
              message: rejection.message,
              ...(rejection.file ? { file: rejection.file } : {}),
              ...(manifestSha256 ? { manifest_sha256: manifestSha256 } : {}),
              source: this.source.location,
            },
          },
        ],
        at,
      );
      await this.state.savePull({ ...pullState, lastRejection: key });
    }
    return { at: at.toISOString(), outcome: 'rejected', message: rejection.message, rejection };
  }

  /** A feed past its expiry is no longer verified: it stops serving, and the status says so. */
  private expireFeed(): void {
    const feed = this.current.feed;
    if (!feed) return;
    if (Date.parse(feed.feed.manifest.expires_at) > this.now().getTime()) return;
    this.current.feed = null;
    this.current.problem = {
      at: this.now().toISOString(),
      outcome: 'rejected',
      message: `the feed in use expired at ${feed.feed.manifest.expires_at} and no fresher feed was accepted`,
    };
  }

  /**
   * Logs what changed since the last evaluation, alerts on it, and remembers this one, as
   * one recording (appliance/record.ts): planned and written down first, then carried out.
   */
  private async record(
    evaluations: AssetEvaluation[],
    assets: { name: string; source: string; status: string }[],
    feed: VerifiedFeed,
    now: Date,
  ): Promise<void> {
    const plan = planRecording(this.evaluation, evaluations, assets, feed.manifest.feed_version, now);
    if (plan.entries.length === 0 && plan.alert === null) {
      // No news: only the remembered state moves (nothing to repeat after a crash).
      await this.state.saveEvaluation(plan.evaluation);
      this.evaluation = plan.evaluation;
      return;
    }
    const recording: Recording = { ...plan, after: this.decisions?.head ?? null };
    await this.state.saveRecording(recording);
    await this.carryOut(recording);
  }

  /**
   * Carries out a recording, or what is left of one a crash or a full disk interrupted:
   * the entries are appended unless the log already holds them, the alert is queued under
   * its own id (a file already queued is left as it is), then the state is saved.
   */
  private async carryOut(recording: Recording): Promise<void> {
    const decisions = this.decisions;
    if (decisions) {
      const head = decisions.head;
      const planned = recording.after;
      if ((head?.seq ?? 0) === (planned?.seq ?? 0) && (head?.hash ?? '') === (planned?.hash ?? '')) {
        await decisions.append(recording.entries, new Date(recording.at));
      } else if ((head?.seq ?? 0) !== (planned?.seq ?? 0) + recording.entries.length) {
        this.log.warn(
          { recording: recording.id, head, planned },
          'the decision log moved on since this recording was planned; its entries are not appended again',
        );
      }
    }
    if (recording.alert) {
      await this.outbox.enqueue({
        ...recording.alert,
        checkpoint: withCheckpoint(decisions?.latestCheckpoint ?? null),
      });
    }
    await this.state.saveEvaluation(recording.evaluation);
    this.evaluation = recording.evaluation;
    await this.state.clearRecording();
  }

  /** Finishes a recording a crash or a failed write left under way (at each refresh). */
  private async finishRecording(): Promise<void> {
    const recording = await this.state.recording();
    if (!recording) return;
    if (this.evaluation?.record === recording.id) {
      await this.state.clearRecording();
      return;
    }
    this.log.info({ recording: recording.id }, 'finishing a recording left under way');
    await this.carryOut(recording);
  }

  private async logDecisions(
    entries: { kind: DecisionKind; data: Record<string, unknown> }[],
    at: Date,
  ): Promise<void> {
    if (!this.decisions || entries.length === 0) return;
    await this.decisions.append(entries, at);
  }

  private async refreshOutboxStatus(): Promise<void> {
    this.status.outbox = {
      channels: this.outbox.channels,
      pending: (await this.outbox.pending()).length,
      failed: (await this.outbox.failed()).length,
      damaged: (await this.outbox.damaged()).length,
    };
  }

  /** Refreshes now and every ADVISORY_REFRESH_INTERVAL after the previous one ends; delivers alerts. */
  start(): void {
    this.stopped = false;
    this.outbox.start();
    const cycle = async () => {
      this.timer = null;
      try {
        await this.refresh();
      } catch (error) {
        this.log.error({ err: error }, 'refresh failed');
      }
      if (!this.stopped) this.timer = setTimeout(cycle, this.config.refreshIntervalMs);
    };
    void cycle();
  }

  /** Stops refreshing and delivering, waits for work under way, releases the state directory. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.refreshing?.catch(() => undefined);
    await this.outbox.stop();
    if (this.source instanceof HttpSource) await this.source.close();
    await this.release?.();
  }
}

/** A refresh failure in one line: the system error's code and what it was doing. */
function describeFailure(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e?.code && e.syscall) return `${e.code}: ${e.syscall}${e.path ? ` ${e.path}` : ''} failed`;
  return e instanceof Error ? e.message : String(error);
}
