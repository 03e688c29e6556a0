import type { Rejection } from '../feed/format/rejection.ts';
import type { Health, HealthCode } from './health.ts';

/**
 * Conditions of the appliance that an operator is told about by alert (webhook and mail),
 * once when each starts and once when it clears, not at every refresh: a refused live
 * feed, a cache that did not verify at start, a stale feed, a feed that expires soon, no
 * verified feed (none, expired, cache refused), a decision log that cannot be vouched for
 * or that is gone, damaged alert files, an alert channel that keeps failing (announced on
 * the other channels only). Neither a failed refresh (while it fails nothing can be
 * queued) nor an unreachable feed host (a long outage is alerted as a stale feed) is
 * among them: they show on /health, the dashboard and `check`.
 */
export const ALERTED: readonly HealthCode[] = [
  'feed-refused',
  'cache-refused',
  'feed-stale',
  'feed-expiring',
  'no-feed',
  'feed-expired',
  'log-unaccounted',
  'log-missing',
  'alerts-damaged',
  'alerts-failing-webhook',
  'alerts-failing-email',
];

/**
 * A condition that ends because a worse one took its place ends without a "cleared"
 * alert, which would read as good news: an expiring feed that expires is announced once,
 * as feed-expired starting.
 */
const SUPERSEDED_BY: Partial<Record<string, string>> = { 'feed-expiring': 'feed-expired' };

interface ConditionState {
  since: string;
  message: string;
  rejection?: Rejection;
  channel?: string;
}

/** The conditions in effect, by code, with when each started and what it said then. */
export type ActiveConditions = Record<string, ConditionState>;

export interface ConditionChange extends ConditionState {
  code: string;
  state: 'started' | 'cleared';
}

/** Pure: the conditions in effect before, the health now -> what started, what cleared, what is in effect. */
export function conditionChanges(
  before: ActiveConditions,
  health: Health,
  now: Date,
): { changes: ConditionChange[]; active: ActiveConditions } {
  const active: ActiveConditions = {};
  const changes: ConditionChange[] = [];
  for (const problem of health.problems) {
    if (!ALERTED.includes(problem.code) || Object.hasOwn(active, problem.code)) continue;
    const known = Object.hasOwn(before, problem.code) ? before[problem.code] : undefined;
    const started: ConditionState = {
      since: now.toISOString(),
      message: problem.message,
      ...(problem.rejection ? { rejection: problem.rejection } : {}),
      ...(problem.channel ? { channel: problem.channel } : {}),
    };
    active[problem.code] = known ?? started;
    if (!known) changes.push({ code: problem.code, state: 'started', ...started });
  }
  for (const [code, was] of Object.entries(before)) {
    if (Object.hasOwn(active, code)) continue;
    const successor = SUPERSEDED_BY[code];
    if (successor !== undefined && Object.hasOwn(active, successor)) continue;
    changes.push({ code, state: 'cleared', ...was });
  }
  return { changes, active };
}
