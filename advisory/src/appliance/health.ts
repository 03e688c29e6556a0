import type { Rejection } from '../feed/format/rejection.ts';
import { describeDuration } from '../time/durations.ts';
import type { ApplianceStatus } from './status.ts';

/**
 * How the appliance is, as monitoring reads it (`/health`, `advisory check`, a banner on
 * every dashboard page). Pure: the status and the time in, the verdict out, so expiry and
 * staleness are judged the moment they pass, not at the next refresh.
 *   ok        a verified feed is in use, current, and the last refresh went through
 *   degraded  a verified feed serves, but something needs an operator: the live feed was
 *             refused (until a feed is accepted or unchanged) or cannot be reached, the
 *             cache did not verify at start, the feed is stale or expires soon, the last refresh failed, the log
 *             cannot be vouched for or is not the one recorded (deleted, cut short), alert files were damaged, or an alert channel keeps
 *             failing (webhook or e-mail)
 *   down      no verified feed is in use (none yet, expired, or the cache refused)
 */
export type HealthCode =
  | 'no-feed'
  | 'feed-expired'
  | 'feed-refused'
  | 'feed-unreachable'
  | 'cache-refused'
  | 'feed-stale'
  | 'feed-expiring'
  | 'refresh-failed'
  | 'log-unaccounted'
  | 'log-missing'
  | 'alerts-damaged'
  | 'alerts-failing-webhook'
  | 'alerts-failing-email';

export interface HealthProblem {
  code: HealthCode;
  message: string;
  /** feed-refused, cache-refused: the rejection (its reason code and message). */
  rejection?: Rejection;
  /** alerts-failing-*: the channel concerned. */
  channel?: 'webhook' | 'email';
}

export interface Health {
  status: 'ok' | 'degraded' | 'down';
  problems: HealthProblem[];
}

export function assessHealth(status: ApplianceStatus, now: Date, maxFeedAgeMs: number): Health {
  const problems: HealthProblem[] = [];
  const feed = status.feed;
  let down = false;
  if (feed === null) {
    down = true;
    // A feed that served and expired (or an expired cache at start) is its own condition,
    // the one that follows "feed-expiring", whatever later pulls say (a host unreachable).
    const expired = status.expired ?? null;
    problems.push(
      expired
        ? { code: 'feed-expired', message: expired.message }
        : { code: 'no-feed', message: status.problem?.message ?? 'no feed has been accepted yet' },
    );
  } else {
    const manifest = feed.feed.manifest;
    const left = Date.parse(manifest.expires_at) - now.getTime();
    const warning = status.feedExpiryWarningMs;
    if (left > 0 && left <= warning) {
      problems.push({
        code: 'feed-expiring',
        message: `the feed in use (${manifest.feed_version}) expires at ${manifest.expires_at}, within ${describeDuration(warning)} (ADVISORY_FEED_EXPIRY_WARNING), and no newer feed was accepted: without one the appliance stops evaluating then`,
      });
    }
    if (left <= 0) {
      down = true;
      problems.push({
        code: 'feed-expired',
        message: `the feed in use expired at ${manifest.expires_at} and no fresher feed was accepted`,
      });
    } else if (now.getTime() - Date.parse(manifest.published_at) > maxFeedAgeMs) {
      problems.push({
        code: 'feed-stale',
        message: `the newest accepted feed was published at ${manifest.published_at}, longer ago than ADVISORY_FEED_MAX_AGE allows: the feed host may be answering with an old feed or "not modified" for ever`,
      });
    }
  }
  // A refused live feed says what to fix (a rotated key, a clock): with a feed in use, and
  // as much after the feed in use expired, when it is why no fresher one was accepted.
  // Without any feed, no-feed already carries the refusal.
  // The refusal holds until a feed is accepted or unchanged: a host that cannot be reached
  // since does not clear it (the refused feed may be served again the moment it answers).
  const refused = status.refused ?? (status.lastPull?.outcome === 'rejected' ? status.lastPull : null);
  // Named as check and the pages name it: a directory is no "live" feed.
  const source = status.feedSource === 'directory' ? 'the feed directory' : 'the feed host';
  const besides = feed !== null || status.expired;
  if (refused && besides && (feed !== null || refused.rejection?.reason !== 'expired')) {
    problems.push({
      code: 'feed-refused',
      message: `the feed from ${source} was refused: ${refused.message}`,
      ...(refused.rejection ? { rejection: refused.rejection } : {}),
    });
  }
  // A host that cannot be reached shows from the first failed pull (without any feed,
  // no-feed carries it already).
  const unreachable = status.lastPull?.outcome === 'unreachable' ? status.lastPull : null;
  if (unreachable && besides) {
    problems.push({
      code: 'feed-unreachable',
      message: `${source} cannot be ${status.feedSource === 'directory' ? 'read' : 'reached'}: ${unreachable.message}`,
    });
  }
  // The cache did not verify at start (tampering, damage): a live feed may have replaced it
  // since, but someone or something changed the appliance's files.
  const cache = status.cacheRefused ?? null;
  if (cache) {
    problems.push({
      code: 'cache-refused',
      message: `${cache.message} (found at ${cache.at}; it shows until the appliance starts with a cache that verifies)`,
      ...(cache.rejection ? { rejection: cache.rejection } : {}),
    });
  }
  if (status.lastRefreshError) {
    problems.push({
      code: 'refresh-failed',
      message: `the refresh at ${status.lastRefreshError.at} failed: ${status.lastRefreshError.message}`,
    });
  }
  if (status.logProblem) problems.push({ code: 'log-unaccounted', message: status.logProblem });
  if (status.logLost) problems.push({ code: 'log-missing', message: status.logLost });
  if (status.outbox.damaged > 0) {
    problems.push({
      code: 'alerts-damaged',
      message: `${status.outbox.damaged} alert file${status.outbox.damaged === 1 ? ' was' : 's were'} damaged and set apart in the outbox's damaged/ folder: those alerts were not sent`,
    });
  }
  for (const trouble of status.outbox.failing ?? []) {
    problems.push({
      code: trouble.channel === 'webhook' ? 'alerts-failing-webhook' : 'alerts-failing-email',
      channel: trouble.channel,
      message: `alert delivery by ${trouble.channel === 'webhook' ? 'webhook' : 'e-mail'} keeps failing since ${trouble.since}: an alert failed ${trouble.failures} attempt${trouble.failures === 1 ? '' : 's'}, the last: ${trouble.lastError}`,
    });
  }
  // Beside the daemon, what only it can know (its pulls, refreshes, deliveries, log) is
  // read from what it kept: the same problems as its /health, never "ok" from memory.
  for (const problem of status.kept?.problems ?? []) {
    if (problems.some((p) => p.code === problem.code)) continue;
    problems.push(problem);
    if (problem.code === 'no-feed' || problem.code === 'feed-expired') down = true;
  }
  return { status: down ? 'down' : problems.length > 0 ? 'degraded' : 'ok', problems };
}
