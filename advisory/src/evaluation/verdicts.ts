import type { Verdict } from '../feed/schema.ts';
import type { VerifiedAdvisory } from '../feed/verify.ts';
import { inRange, parseInstant } from '../feed/versions.ts';
import type { Asset, Inventory } from './inventory.ts';

/** Most severe first: per asset, the first of these that applies wins. */
export const severity: Verdict[] = ['blocked', 'eol', 'wait-for-patch', 'hold', 'install'];

export interface UnmetRequirement {
  product: string;
  required: string;
  installed: string | null;
  reason: string;
  /** "upgrade php to >=8.2.0 before nextcloud" */
  ordering: string;
}

export interface AdvisoryMatch {
  advisoryId: string;
  title: string;
  product: string;
  installed: string;
  /** The advisory's own verdict, or `blocked` when an install's requirements are unmet. */
  verdict: Verdict;
  recommendedVersion: string | null;
  unmet: UnmetRequirement[];
  cves: { id: string; cvss: number | null }[];
}

export interface ReminderState {
  advisoryId: string;
  product: string;
  task: string;
  /** The due date, or null when the asset does not report the fact it is measured from. */
  dueAt: string | null;
  due: boolean;
}

export interface AssetEvaluation {
  asset: string;
  /** The most severe verdict of all matching advisories; null when none matches. */
  verdict: Verdict | null;
  matches: AdvisoryMatch[];
  reminders: ReminderState[];
}

export function windowHolds(advisory: VerifiedAdvisory['advisory'], now: Date): boolean {
  const effective = parseInstant(advisory.effective);
  const expires = parseInstant(advisory.expires);
  return (
    effective !== null &&
    expires !== null &&
    effective.getTime() <= now.getTime() &&
    now.getTime() < expires.getTime()
  );
}

function addInterval(start: Date, every: string): Date {
  const amount = Number(every.slice(0, -1));
  const date = new Date(start.getTime());
  switch (every.slice(-1)) {
    case 'd':
      date.setUTCDate(date.getUTCDate() + amount);
      break;
    case 'w':
      date.setUTCDate(date.getUTCDate() + 7 * amount);
      break;
    case 'm':
      date.setUTCMonth(date.getUTCMonth() + amount);
      break;
    default:
      date.setUTCFullYear(date.getUTCFullYear() + amount);
  }
  return date;
}

function evaluateAsset(asset: Asset, advisories: VerifiedAdvisory[], now: Date): AssetEvaluation {
  const matches: AdvisoryMatch[] = [];
  const reminders: ReminderState[] = [];
  for (const { advisory } of advisories) {
    const installed = asset.products[advisory.product];
    if (installed === undefined || !inRange(installed, advisory.affects)) continue;
    if (advisory.reminder) {
      const fact = asset.facts?.[advisory.reminder.from];
      const start = fact === undefined ? null : parseInstant(fact);
      const dueAt = start ? addInterval(start, advisory.reminder.every) : null;
      reminders.push({
        advisoryId: advisory.id,
        product: advisory.product,
        task: advisory.reminder.task,
        dueAt: dueAt ? dueAt.toISOString() : null,
        // Unknown when it was last done: treat as due, so it gets done and recorded.
        due: dueAt === null || dueAt.getTime() <= now.getTime(),
      });
      continue;
    }
    if (!advisory.verdict) continue;
    const unmet: UnmetRequirement[] = [];
    for (const requirement of advisory.requires ?? []) {
      const have = asset.products[requirement.product] ?? null;
      if (have !== null && inRange(have, requirement.version)) continue;
      unmet.push({
        product: requirement.product,
        required: requirement.version,
        installed: have,
        reason: requirement.reason,
        ordering: `upgrade ${requirement.product} to ${requirement.version} before ${advisory.product}${advisory.recommended_version ? ` ${advisory.recommended_version}` : ''}`,
      });
    }
    matches.push({
      advisoryId: advisory.id,
      title: advisory.title,
      product: advisory.product,
      installed,
      verdict: advisory.verdict === 'install' && unmet.length > 0 ? 'blocked' : advisory.verdict,
      recommendedVersion: advisory.recommended_version ?? null,
      unmet: advisory.verdict === 'install' ? unmet : [],
      cves: (advisory.cves ?? []).map((cve) => ({ id: cve.id, cvss: cve.cvss ?? null })),
    });
  }
  const verdict = severity.find((v) => matches.some((m) => m.verdict === v)) ?? null;
  matches.sort(
    (a, b) =>
      severity.indexOf(a.verdict) - severity.indexOf(b.verdict) || a.advisoryId.localeCompare(b.advisoryId),
  );
  return { asset: asset.name, verdict, matches, reminders };
}

/** Verdicts for every asset, from the advisories whose window holds at `now`. */
export function evaluate(advisories: VerifiedAdvisory[], inventory: Inventory, now: Date): AssetEvaluation[] {
  const current = advisories.filter(({ advisory }) => windowHolds(advisory, now));
  return inventory.assets.map((asset) => evaluateAsset(asset, current, now));
}
