import type { Logger } from 'pino';
import { conditionAlert, withCheckpoint } from '../alerts/alert.ts';
import type { Channel, Outbox } from '../alerts/outbox.ts';
import type { PublicKey } from '../crypto/signify.ts';
import type { DecisionStore } from '../decisions/store.ts';
import { type AssetEvaluation, evaluate } from '../evaluation/verdicts.ts';
import type { AcceptedState } from '../feed/format/accepted-state.ts';
import type { VerifiedFeed } from '../feed/verify/verify-feed.ts';
import { collectInventory, loadInventory } from '../inventory/collect.ts';
import { InventoryError, type InventoryFile } from '../inventory/config.ts';
import { conditionChanges } from './conditions.ts';
import type { ApplianceConfig } from './config.ts';
import { FeedKeeper } from './feed-keeper.ts';
import { assessHealth, type Health } from './health.ts';
import { logLoss } from './log-head.ts';
import { type EvaluationState, planRecording, type Recording } from './record.ts';
import type { StateStore } from './state.ts';
import type { ApplianceCounters, ApplianceStatus, PullOutcome } from './status.ts';

export type { ApplianceCounters, ApplianceStatus, FeedInUse, PullOutcome } from './status.ts';

export interface ApplianceOptions {
  trustedKeys: PublicKey[];
  inventory: InventoryFile;
  logger: Logger;
  now?: () => Date;
  /** Another process holds the state directory: evaluate from the cache, write nothing. */
  readOnly?: boolean;
}

/** What the composition root (open.ts) hands the appliance. */
export interface ApplianceParts {
  config: ApplianceConfig;
  options: ApplianceOptions;
  state: StateStore;
  decisions: DecisionStore | null;
  outbox: Outbox;
  accepted: AcceptedState | null;
  evaluation: EvaluationState | null;
  /** Lets the state directory go (null when read-only: it was never taken). */
  release: (() => Promise<void>) | null;
}

/**
 * The appliance: pull, verify, cache, evaluate, log, alert, in one refresh at a time.
 * A refresh never leaves the appliance without a feed it had: a live feed that cannot be
 * reached or is refused leaves the one in use (from the last pull, or the cache at start)
 * serving, and the status says why.
 */
export class Appliance {
  /** The status but for the feed's part, which the keeper holds. */
  private readonly current: Omit<
    ApplianceStatus,
    'feed' | 'problem' | 'lastPull' | 'expired' | 'refused' | 'cacheRefused'
  >;
  private readonly now: () => Date;
  private readonly keeper: FeedKeeper;
  private refreshing: Promise<ApplianceStatus> | null = null;
  private inventory: InventoryFile;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Refreshes and pulls since start, counted as they end (read by /metrics). */
  readonly counters: ApplianceCounters = {
    refreshes: { succeeded: 0, failed: 0 },
    pulls: { accepted: 0, unchanged: 0, rejected: 0, unreachable: 0 },
  };
  /** Conditions are judged one at a time (a refresh and the outbox's ticks both do). */
  private judging: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly config: ApplianceConfig,
    private readonly options: ApplianceOptions,
    private readonly state: StateStore,
    readonly decisions: DecisionStore | null,
    readonly outbox: Outbox,
    accepted: AcceptedState | null,
    private evaluation: EvaluationState | null,
    private readonly release: (() => Promise<void>) | null,
  ) {
    this.now = options.now ?? (() => new Date());
    this.inventory = options.inventory;
    this.keeper = new FeedKeeper(
      {
        config,
        trustedKeys: options.trustedKeys,
        state,
        logger: options.logger,
        now: this.now,
        readOnly: !!options.readOnly,
        decisions,
      },
      accepted,
    );
    this.current = {
      startedAt: this.now().toISOString(),
      feedLocation: this.keeper.location,
      feedSource: config.feed.kind,
      lastRefresh: null,
      inventory: [],
      inventoryError: null,
      evaluations: [],
      evaluatedAt: null,
      outbox: { channels: outbox.channels, pending: 0, failed: 0, damaged: 0 },
      readOnly: !!options.readOnly,
      feedExpiryWarningMs: config.feedExpiryWarningMs,
      lastRefreshError: null,
      logProblem: decisions?.unaccounted ?? null,
    };
  }

  /**
   * The status as of now, a snapshot: a feed whose expiry has passed is shown as no longer
   * serving, refresh or not. A read changes nothing (the next refresh takes the expired
   * feed out of use), and what a reader does with the snapshot changes nothing either.
   */
  get status(): ApplianceStatus {
    const { feed, problem, lastPull, expired, refused, cacheRefused } = this.keeper;
    const expiry = this.keeper.expiry();
    return expiry
      ? { ...this.current, feed: null, problem: expiry, lastPull, expired: expiry, refused, cacheRefused }
      : { ...this.current, feed, problem, lastPull, expired, refused, cacheRefused };
  }

  /** The status judged for monitoring (appliance/health.ts), as of now. */
  health(): Health {
    return assessHealth(this.status, this.now(), this.config.feedMaxAgeMs);
  }

  /**
   * The appliance from its parts, made and wired by the composition root (open.ts
   * openAppliance); re-verifies the cache, which serves until a live pull succeeds.
   */
  static async assemble(parts: ApplianceParts): Promise<Appliance> {
    const appliance = new Appliance(
      parts.config,
      parts.options,
      parts.state,
      parts.decisions,
      parts.outbox,
      parts.accepted,
      parts.evaluation,
      parts.release,
    );
    if (parts.decisions) {
      // A log that existed (its head recorded) and is gone is an alarm, not a fresh start.
      appliance.current.logLost = logLoss(await parts.state.logHead(), parts.decisions.head);
      if (appliance.current.logLost)
        parts.options.logger.error({ problem: appliance.current.logLost }, 'decision log missing');
    }
    await appliance.keeper.loadCache();
    return appliance;
  }

  /**
   * The inventory file is read again at every refresh (operators edit it while the daemon
   * runs); a version that does not parse leaves the last good one in use, and says why.
   */
  private async reloadInventory(): Promise<void> {
    try {
      this.inventory = await loadInventory(this.config.inventoryFile);
      this.current.inventoryError = null;
    } catch (error) {
      if (!(error instanceof InventoryError)) throw error;
      this.current.inventoryError = error.message;
      this.log.warn({ problem: error.message }, 'inventory file refused; the last good one stays in use');
    }
  }

  private get log(): Logger {
    return this.options.logger;
  }

  /** The daemon's log, for the dashboard beside it (failed logins). */
  get logger(): Logger {
    return this.options.logger;
  }

  /**
   * One refresh: pull, verify, evaluate, log, alert. Concurrent calls share one. A failure
   * (a full or read-only disk, no file descriptors) is kept in the status until a refresh
   * goes through, and raised.
   */
  refresh(): Promise<ApplianceStatus> {
    this.refreshing ??= this.refreshOnce()
      .then((status) => {
        this.counters.refreshes.succeeded += 1;
        return status;
      })
      .catch(async (error: unknown) => {
        this.counters.refreshes.failed += 1;
        this.current.lastRefreshError = { at: this.now().toISOString(), message: describeFailure(error) };
        await this.keepHealth();
        throw error;
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<ApplianceStatus> {
    const started = this.now();
    // Beside the daemon: what it judged, from the state directory (a damaged file fails
    // the refresh, and says which file).
    if (this.options.readOnly) this.current.kept = await this.state.health();
    if (!this.options.readOnly) {
      await this.finishRecording();
      await this.keeper.pull();
      const pulled = this.keeper.lastPull;
      if (pulled) this.counters.pulls[pulled.outcome] += 1;
    }
    this.keeper.expire();
    await this.reloadInventory();
    const known = new Map(Object.entries(this.evaluation?.known ?? {}));
    const collection = await collectInventory(this.config.inventoryFile, this.inventory, known);
    this.current.inventory = collection.sources;
    const feed = this.keeper.feed?.feed ?? null;
    if (feed) {
      const now = this.now();
      const evaluations = evaluate(feed.advisories, collection.assets, now);
      this.current.evaluations = evaluations;
      this.current.evaluatedAt = now.toISOString();
      if (!this.options.readOnly) await this.record(evaluations, collection.assets, feed, now);
    }
    if (!this.options.readOnly) {
      await this.refreshOutboxStatus();
      await this.alertConditions();
      await this.outbox.flush();
      // What the flush learnt of the channels (one failing, or working again) is news now,
      // not at the next refresh: it goes out on the other channels at once.
      await this.refreshOutboxStatus();
      if (await this.alertConditions()) await this.outbox.flush();
    }
    await this.refreshOutboxStatus();
    // It went through: the health kept for a check beside this process says so.
    this.current.lastRefreshError = null;
    await this.keepLogHead();
    await this.keepHealth();
    const finished = this.now();
    this.current.lastRefresh = {
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
    await this.keeper.pull();
    return this.keeper.lastPull;
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

  /**
   * Alerts the conditions (appliance/conditions.ts) that started or cleared since the last
   * refresh. Queued before they are remembered: a crash between the two queues them again
   * under the same ids, which the outbox takes once.
   */
  private alertConditions(): Promise<boolean> {
    const judged = this.judging.then(() => this.judgeConditions());
    this.judging = judged.catch(() => undefined);
    return judged;
  }

  /** Whether any condition started or cleared (and was queued). */
  private async judgeConditions(): Promise<boolean> {
    const now = this.now();
    const before = await this.state.conditions();
    const { changes, active } = conditionChanges(before, this.health(), now);
    if (changes.length === 0) return false;
    const feedVersion = this.keeper.feed?.feed.manifest.feed_version ?? null;
    for (const change of changes) {
      this.log.warn({ condition: change.code, state: change.state }, change.message);
      // A failing channel is announced (started and cleared) on the others, never on itself.
      const except = change.channel ? [change.channel as Channel] : [];
      if (except.length > 0 && this.outbox.channels.every((c) => except.includes(c)))
        this.log.warn(
          { condition: change.code },
          'no other alert channel is configured: this shows on the dashboard, /health and advisory check only',
        );
      await this.outbox.enqueue(
        conditionAlert(change, feedVersion, this.decisions?.latestCheckpoint ?? null, now),
        except,
      );
    }
    await this.state.saveConditions(active);
    return true;
  }

  /** After the outbox's own flushes (the daemon): a channel failing or working again is news. */
  private async afterDelivery(): Promise<void> {
    // Before the first refresh has pulled the feed, "no feed" would be judged, and alerted.
    if (this.options.readOnly || this.current.lastRefresh === null) return;
    await this.refreshOutboxStatus();
    await this.alertConditions();
    await this.keepHealth();
  }

  /** The log head last recorded (log-head.json), to write it only when it moves. */
  private keptLogHead: string | null = null;

  /**
   * Records the decision log's head in the state directory when it moved, unless the log
   * is not the one recorded: then the record stays, and so does the alarm, until the log
   * is restored or the operator removes log-head.json.
   */
  private async keepLogHead(): Promise<void> {
    const head = this.decisions?.head;
    if (!head || this.current.logLost) return;
    const text = `${head.seq}:${head.hash}`;
    if (text === this.keptLogHead) return;
    await this.state.saveLogHead(head);
    this.keptLogHead = text;
  }

  /** The problems last kept in the state directory (JSON), to write them only when they change. */
  private keptProblems: string | null = null;

  /**
   * Keeps the health as judged now in the state directory (health.json), where a
   * read-only `advisory check` beside this process reads it: the same problems as
   * /health, not "ok" from a process that pulled nothing. Written when the problems
   * change; a disk that refuses it is logged, and tried again at the next judgement.
   */
  private async keepHealth(): Promise<void> {
    if (this.options.readOnly) return;
    const problems = this.health().problems;
    const text = JSON.stringify(problems);
    if (text === this.keptProblems) return;
    try {
      await this.state.saveHealth({ at: this.now().toISOString(), pid: process.pid, problems });
      this.keptProblems = text;
    } catch (error) {
      this.log.warn({ err: error }, 'the health could not be kept in the state directory');
    }
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

  private async refreshOutboxStatus(): Promise<void> {
    this.current.outbox = {
      channels: this.outbox.channels,
      pending: (await this.outbox.pending()).length,
      failed: (await this.outbox.failed()).length,
      damaged: (await this.outbox.damaged()).length,
      failing: await this.outbox.failing(),
    };
  }

  /** Refreshes now and every ADVISORY_REFRESH_INTERVAL after the previous one ends; delivers alerts. */
  start(): void {
    this.stopped = false;
    this.outbox.start(() => this.afterDelivery());
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
    // Judging after a delivery writes the conditions and queues alerts: it ends before the lock goes.
    await this.judging;
    await this.keeper.close();
    await this.release?.();
  }
}

/** A refresh failure in one line: the system error's code and what it was doing. */
function describeFailure(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e?.code && e.syscall) return `${e.code}: ${e.syscall}${e.path ? ` ${e.path}` : ''} failed`;
  return e instanceof Error ? e.message : String(error);
}
