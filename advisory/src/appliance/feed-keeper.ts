import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { sha256 } from '../crypto/digest.ts';
import type { PublicKey } from '../crypto/signify.ts';
import type { DecisionEntry, DecisionKind } from '../decisions/chain.ts';
import type { AcceptedState } from '../feed/format/accepted-state.ts';
import { defaultLimits } from '../feed/format/limits.ts';
import { FeedRejectedError, type Rejection } from '../feed/format/rejection.ts';
import { MANIFEST_FILE } from '../feed/format/rules.ts';
import { DirectorySource } from '../feed/sources/directory.ts';
import { defaultHttpLimits, HttpSource } from '../feed/sources/http.ts';
import { type FeedHead, type FeedSource, SourceError } from '../feed/sources/source.ts';
import { type ReusableResults, resultsOf } from '../feed/verify/stored-results.ts';
import { type VerifiedFeed, verifyFeed, verifyHead } from '../feed/verify/verify-feed.ts';
import { FeedCache, resultsKey } from './cache.ts';
import type { ApplianceConfig } from './config.ts';
import type { StateStore } from './state.ts';
import type { FeedInUse, PullOutcome } from './status.ts';

export interface FeedKeeperOptions {
  config: Pick<ApplianceConfig, 'feed' | 'feedCache' | 'feedTimeoutMs' | 'feedPullMs' | 'stateDir'>;
  trustedKeys: PublicKey[];
  state: StateStore;
  logger: Logger;
  now: () => Date;
  readOnly: boolean;
  /** The decision log, to record acceptances and refusals (null when read-only). */
  decisions: {
    append(entries: { kind: DecisionKind; data: Record<string, unknown> }[], at: Date): Promise<unknown>;
    lastEntry(kind: DecisionKind): Promise<DecisionEntry | null>;
  } | null;
}

/**
 * The feed the appliance evaluates with, kept: the cache re-verified at start, the live
 * feed pulled, verified, cached and remembered (rollback protection), refusals logged
 * once, and a feed taken out of use the moment it expires. A pull never leaves the
 * appliance without a feed it had: a live feed that cannot be reached or is refused
 * leaves the one in use serving, and `problem` says why.
 */
export class FeedKeeper {
  feed: FeedInUse | null = null;
  /** Why no live feed is in use (the last pull's problem, or expiry), while that holds. */
  problem: PullOutcome | null = null;
  lastPull: PullOutcome | null = null;
  /**
   * Why no feed serves when the last one expired (in use, or the cache at start), kept
   * through later pulls that fail otherwise (an unreachable host), until a feed is accepted.
   */
  expired: PullOutcome | null = null;
  /**
   * The live feed's refusal in effect: its cause is gone only when a pull finds a feed
   * accepted or unchanged, not when the host cannot be reached (blocking the host must not
   * clear the alarm). Remembered in pull.json across restarts.
   */
  refused: PullOutcome | null = null;
  /**
   * The cache found not to verify at start (tampered, damaged, older than the accepted
   * feed), but for expiry: held while this process runs, even once a live feed replaced
   * it, so that an operator learns of it (appliance/health.ts, cache-refused).
   */
  cacheRefused: PullOutcome | null = null;
  readonly location: string;
  private readonly source: FeedSource;
  private readonly cache: FeedCache;

  constructor(
    private readonly options: FeedKeeperOptions,
    private accepted: AcceptedState | null,
  ) {
    const { config } = options;
    this.source =
      config.feed.kind === 'http'
        ? new HttpSource(config.feed.url, {
            ...defaultHttpLimits,
            totalMs: config.feedTimeoutMs,
            pullMs: config.feedPullMs,
            connectMs: Math.min(10_000, config.feedTimeoutMs),
          })
        : new DirectorySource(config.feed.path);
    this.location = this.source.location;
    this.cache = new FeedCache(config.feedCache);
  }

  private get log(): Logger {
    return this.options.logger;
  }

  private now(): Date {
    return this.options.now();
  }

  private get state(): StateStore {
    return this.options.state;
  }

  private async logEntries(
    entries: { kind: DecisionKind; data: Record<string, unknown> }[],
    at: Date,
  ): Promise<void> {
    if (!this.options.decisions || entries.length === 0) return;
    await this.options.decisions.append(entries, at);
  }

  async close(): Promise<void> {
    if (this.source instanceof HttpSource) await this.source.close();
  }

  /** The cache, re-verified against the remembered state before it is used. */
  async loadCache(): Promise<void> {
    this.refused = (await this.state.pull()).refused;
    if (!this.options.readOnly) await this.cache.recover();
    const copy = await this.cache.current();
    if (!copy) return;
    const result = await verifyFeed(new DirectorySource(this.cache.path), {
      trustedKeys: this.options.trustedKeys,
      lastAccepted: this.accepted,
      now: this.now(),
      reuse: await this.storedResults(),
    });
    const at = this.now().toISOString();
    if (result.ok) {
      this.feed = { feed: result.feed, from: 'cache', since: at };
      this.expired = null;
      this.log.info(
        { feed: result.feed.manifest.feed_version, reused: result.feed.reusedCount },
        'cached feed verified',
      );
      // The cache is written before the state: after a crash between the two, catch up
      // (or at the next pull, when the disk refuses it now).
      if (!this.options.readOnly) {
        await this.settleAccepted(result.feed, this.now()).catch((error: unknown) => {
          this.log.warn({ err: error }, 'the accepted feed could not be recorded yet');
        });
      }
    } else {
      const message = 'rejection' in result ? result.rejection.message : result.unreachable;
      this.problem = {
        at,
        outcome: 'rejected',
        message: `the cached feed does not verify: ${message}`,
        ...('rejection' in result ? { rejection: result.rejection } : {}),
      };
      if ('rejection' in result && result.rejection.reason === 'expired') this.expired = this.problem;
      else this.cacheRefused = this.problem;
      this.log.warn({ problem: message }, 'cached feed refused');
    }
  }

  /** Fetches the live feed; accepts it when it verifies, keeps the feed in use when not. */
  async pull(): Promise<void> {
    const at = this.now();
    const pullState = await this.state.pull();
    const inUse = this.feed;
    if (inUse && inUse.feed.manifestSha256 !== this.accepted?.manifest_sha256) {
      // Cached, but not yet logged and remembered (the disk refused it last time).
      await this.settleAccepted(inUse.feed, at);
    }
    // Ask "changed since?" only while the feed in use is the accepted one.
    const conditional = inUse !== null && inUse.feed.manifestSha256 === this.accepted?.manifest_sha256;
    let outcome: PullOutcome;
    try {
      const head = await this.source.readHead(defaultLimits, conditional ? pullState.validators : null);
      // The same manifest with other signature bytes (another mirror, a broken signature) is
      // verified again, never taken as unchanged on the manifest's word alone.
      const sameFeed =
        head !== 'unchanged' &&
        inUse !== null &&
        sha256(head.manifest) === inUse.feed.manifestSha256 &&
        sameBytes(head.signature, inUse.feed.head.signature);
      if (head === 'unchanged' || sameFeed) {
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
    this.lastPull = outcome;
    this.problem = outcome.outcome === 'rejected' || outcome.outcome === 'unreachable' ? outcome : null;
    await this.keepRefusal(outcome);
  }

  /** The refusal in effect after this pull: kept while the host is unreachable, remembered. */
  private async keepRefusal(outcome: PullOutcome): Promise<void> {
    const before = this.refused;
    let refused: PullOutcome | null = null;
    if (outcome.outcome === 'unreachable') refused = before;
    else if (outcome.outcome === 'rejected') {
      // The same refusal again keeps its first time (and pull.json is not written again).
      const same =
        before?.message === outcome.message && before.rejection?.reason === outcome.rejection?.reason;
      refused = same ? before : outcome;
    }
    if (refused === before) return;
    await this.state.savePull({ ...(await this.state.pull()), refused });
    this.refused = refused;
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
      reuse: await this.reusableResults(),
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
    const resultsProblem = await this.cache.commit(copy, feed, await this.resultsKey());
    if (resultsProblem) this.log.warn({ problem: resultsProblem }, 'validated results not stored');
    this.feed = { feed, from: 'live', since: at.toISOString() };
    this.expired = null;
    await this.settleAccepted(feed, at);
    await this.state.savePull({ validators: head.validators, lastRejection: null, refused: null });
    this.log.info(
      { feed: feed.manifest.feed_version, advisories: feed.advisoryCount, reused: feed.reusedCount },
      'feed accepted',
    );
    return {
      at: at.toISOString(),
      outcome: 'accepted',
      message: `feed ${feed.manifest.feed_version} accepted`,
    };
  }

  private resultsKeyValue: Buffer | null = null;

  /** The key sealing the stored results (made at the first need, never when read-only). */
  private async resultsKey(): Promise<Buffer | null> {
    this.resultsKeyValue ??= await resultsKey(this.options.config.stateDir, !this.options.readOnly);
    return this.resultsKeyValue;
  }

  /**
   * What a pull reuses: the results of the feed in use, held in memory, when it is the
   * accepted one (it was verified in this process), with the cache copy holding its bytes;
   * otherwise those stored with the cache (every file is then read from the source).
   */
  private async reusableResults(): Promise<ReusableResults | null> {
    const inUse = this.feed?.feed;
    if (inUse && inUse.manifestSha256 === this.accepted?.manifest_sha256.toLowerCase()) {
      // Its bytes are in the cache copy, checked when it was accepted or verified at start:
      // unchanged files are linked from there, not fetched again. Only the copy of this
      // very feed (its manifest's digest), never whatever the cache names after a failure.
      const copy = await this.cache.current();
      const manifest = copy ? await readFile(path.join(copy, MANIFEST_FILE)).catch(() => null) : null;
      const bytesIn = manifest && sha256(manifest) === inUse.manifestSha256 ? copy : null;
      return { ...resultsOf(inUse), ...(bytesIn ? { bytesIn } : {}) };
    }
    return this.storedResults();
  }

  /**
   * The validated results stored with the cache, when they belong to the last accepted
   * feed and this client (appliance/cache.ts); null, and every file is validated, when not.
   */
  private async storedResults(): Promise<ReusableResults | null> {
    const key = await this.resultsKey();
    if (!this.accepted || !key) return null;
    const read = await this.cache.results(this.accepted.manifest_sha256.toLowerCase(), key);
    if (read.ok) return read.results;
    this.log.info({ problem: read.problem }, 'validating every file of the feed');
    return null;
  }

  /**
   * Logs the acceptance of the feed now in the cache and remembers it, unless both are
   * done. The log entry comes first and is not written twice: a crash or a full disk
   * between the two is caught up at the next start or pull.
   */
  private async settleAccepted(feed: VerifiedFeed, at: Date): Promise<void> {
    if (this.accepted?.manifest_sha256 === feed.manifestSha256) return;
    const logged = await this.options.decisions?.lastEntry('feed-accepted');
    if (logged?.data.manifest_sha256 !== feed.manifestSha256) {
      await this.logEntries(
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
      await this.logEntries(
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
  expire(): void {
    const expiry = this.expiry();
    if (!expiry) return;
    this.feed = null;
    this.problem = expiry;
    this.expired = expiry;
  }

  /** Why the feed in use no longer serves as of now (it expired), or null; changes nothing. */
  expiry(): PullOutcome | null {
    const feed = this.feed;
    if (!feed) return null;
    if (Date.parse(feed.feed.manifest.expires_at) > this.now().getTime()) return null;
    const message = `the feed in use expired at ${feed.feed.manifest.expires_at} and no fresher feed was accepted`;
    // As the verifier would refuse it now.
    return {
      at: this.now().toISOString(),
      outcome: 'rejected',
      message,
      rejection: { reason: 'expired', message },
    };
  }
}

/** Whether two signature files are byte for byte the same (both absent included). */
function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}
