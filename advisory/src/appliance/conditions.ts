import type { Health, HealthCode } from './health.ts';

/**
 * Conditions of the appliance that an operator is told about by alert (webhook and mail),
 * once when each starts and once when it clears, not at every refresh: a refused live
 * feed, a stale feed, no verified feed (none, expired, cache refused), a decision log that
 * cannot be vouched for, damaged alert files. A failed refresh is not among them: while
 * it fails nothing can be queued; it shows on /health, the dashboard and `check`.
 */
export const ALERTED: readonly HealthCode[] = [
  'feed-refused',
  'feed-stale',
  'no-feed',
  'feed-expired',
  'log-unaccounted',
  'alerts-damaged',
];

/** The conditions in effect, by code, with when each started and what it said then. */
export type ActiveConditions = Record<string, { since: string; message: string }>;

export interface ConditionChange {
  code: string;
  state: 'started' | 'cleared';
  since: string;
  message: string;
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
    active[problem.code] = known ?? { since: now.toISOString(), message: problem.message };
    if (!known)
      changes.push({ code: problem.code, state: 'started', ...active[problem.code] } as ConditionChange);
  }
  for (const [code, was] of Object.entries(before)) {
    if (!Object.hasOwn(active, code))
      changes.push({ code, state: 'cleared', since: was.since, message: was.message });
  }
  return { changes, active };
}
