import type { ApplianceStatus } from './status.ts';

/**
 * How the appliance is, as monitoring reads it (`/health`, `advisory check`, a banner on
 * every dashboard page). Pure: the status and the time in, the verdict out, so expiry and
 * staleness are judged the moment they pass, not at the next refresh.
 *   ok        a verified feed is in use, current, and the last refresh went through
 *   degraded  a verified feed serves, but something needs an operator: the live feed was
 *             refused, the feed is stale, the last refresh failed, the log cannot be vouched
 *             for, or alert files were damaged
 *   down      no verified feed is in use (none yet, expired, or the cache refused)
 */
export type HealthCode =
  | 'no-feed'
  | 'feed-expired'
  | 'feed-refused'
  | 'feed-stale'
  | 'refresh-failed'
  | 'log-unaccounted'
  | 'alerts-damaged';

export interface HealthProblem {
  code: HealthCode;
  message: string;
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
    problems.push({ code: 'no-feed', message: status.problem?.message ?? 'no feed has been accepted yet' });
  } else {
    const manifest = feed.feed.manifest;
    if (Date.parse(manifest.expires_at) <= now.getTime()) {
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
    if (status.lastPull?.outcome === 'rejected') {
      problems.push({
        code: 'feed-refused',
        message: `the live feed was refused: ${status.lastPull.message}`,
      });
    }
  }
  if (status.lastRefreshError) {
    problems.push({
      code: 'refresh-failed',
      message: `the refresh at ${status.lastRefreshError.at} failed: ${status.lastRefreshError.message}`,
    });
  }
  if (status.logProblem) problems.push({ code: 'log-unaccounted', message: status.logProblem });
  if (status.outbox.damaged > 0) {
    problems.push({
      code: 'alerts-damaged',
      message: `${status.outbox.damaged} alert file${status.outbox.damaged === 1 ? ' was' : 's were'} damaged and set apart in the outbox's damaged/ folder: those alerts were not sent`,
    });
  }
  return { status: down ? 'down' : problems.length > 0 ? 'degraded' : 'ok', problems };
}
