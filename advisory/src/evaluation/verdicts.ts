import type { Advisory, Verdict } from '../feed/format/schema.ts';
import { inRange, parseVersion } from '../feed/format/versions.ts';
import type { VerifiedAdvisory } from '../feed/verify/verify-bytes.ts';
import type { Asset } from '../inventory/asset.ts';
import { parseInstant } from '../time/instants.ts';
import { addPeriod, parsePeriod } from '../time/periods.ts';

/** Most severe first: per asset, the first of these that applies wins. */
export const severity: Verdict[] = ['blocked', 'eol', 'wait-for-patch', 'hold', 'install'];
const rank = Object.fromEntries(severity.map((v, i) => [v, i])) as Record<Verdict, number>;

export interface UnmetRequirement {
  product: string;
  required: string;
  installed: string | null;
  reason: string;
  /** "upgrade php to >=8.2.0 before nextcloud 33.0.8" */
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
  cves: { id: string; cvss: number | null; summary: string | null }[];
  /** What to do, in the feed author's words (feed text: escape it wherever it is shown). */
  summary: string;
  /** The advisory's links as the feed gives them: untrusted text, checked before use as links. */
  references: string[];
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
  source: string;
  /** `unknown`: the asset's source failed; it has no verdict this time. */
  status: 'ok' | 'unknown';
  error?: string;
  products: Record<string, string>;
  /** The most severe verdict of all matching advisories; null when none matches. */
  verdict: Verdict | null;
  matches: AdvisoryMatch[];
  reminders: ReminderState[];
  /** Versions that cannot be read as versions: shown as they are, never guessed at. */
  unreadable: { product: string; version: string }[];
}

export function windowHolds(advisory: Advisory, now: Date): boolean {
  const effective = parseInstant(advisory.effective);
  const expires = parseInstant(advisory.expires);
  return (
    effective !== null &&
    expires !== null &&
    effective.getTime() <= now.getTime() &&
    now.getTime() < expires.getTime()
  );
}

/**
 * The advisories in force, grouped by product, with a memo of which of them affect a
 * given version: thousands of assets mostly run the same few versions, so each
 * (product, version) is matched against the feed's ranges once.
 */
/** What a version of a product gets from the feed, worked out once for every asset running it. */
interface VersionEntry {
  /** Matches of advisories without requirements: the same for every asset. */
  plain: AdvisoryMatch[];
  /** Advisories whose requirements depend on the asset's other products. */
  conditional: Advisory[];
  reminders: Advisory[];
}

class AdvisoryIndex {
  private readonly byProduct = new Map<string, Advisory[]>();
  private readonly versions = new Map<string, VersionEntry>();

  constructor(advisories: readonly VerifiedAdvisory[], now: Date) {
    for (const { advisory } of advisories) {
      if (!windowHolds(advisory, now)) continue;
      const list = this.byProduct.get(advisory.product);
      if (list) list.push(advisory);
      else this.byProduct.set(advisory.product, [advisory]);
    }
  }

  forVersion(product: string, version: string): VersionEntry {
    const key = `${product}\u0000${version}`;
    let entry = this.versions.get(key);
    if (!entry) {
      entry = { plain: [], conditional: [], reminders: [] };
      for (const advisory of this.byProduct.get(product) ?? []) {
        if (!inRange(version, advisory.affects)) continue;
        if (advisory.reminder) entry.reminders.push(advisory);
        else if (advisory.verdict && advisory.requires?.length) entry.conditional.push(advisory);
        else if (advisory.verdict) entry.plain.push(matchOf({}, advisory, version) as AdvisoryMatch);
      }
      this.versions.set(key, entry);
    }
    return entry;
  }
}

function reminderState(asset: Asset, advisory: Advisory, now: Date): ReminderState | null {
  const reminder = advisory.reminder;
  if (!reminder) return null;
  const period = parsePeriod(reminder.every);
  // Own properties only: a feed naming `constructor` must not read Object's prototype.
  const fact = Object.hasOwn(asset.facts, reminder.from) ? asset.facts[reminder.from] : undefined;
  const start = fact === undefined ? null : parseInstant(fact);
  const dueAt = start && period ? addPeriod(start, period) : null;
  return {
    advisoryId: advisory.id,
    product: advisory.product,
    task: reminder.task,
    dueAt: dueAt ? dueAt.toISOString() : null,
    // Unknown when it was last done: treat as due, so it gets done and recorded.
    due: dueAt === null || dueAt.getTime() <= now.getTime(),
  };
}

function matchOf(products: Asset['products'], advisory: Advisory, installed: string): AdvisoryMatch | null {
  if (!advisory.verdict) return null;
  const unmet: UnmetRequirement[] = [];
  for (const requirement of advisory.requires ?? []) {
    // Own properties only: a feed naming `constructor` must not read Object's prototype.
    const have = Object.hasOwn(products, requirement.product)
      ? (products[requirement.product] ?? null)
      : null;
    if (have !== null && inRange(have, requirement.version)) continue;
    unmet.push({
      product: requirement.product,
      required: requirement.version,
      installed: have,
      reason: requirement.reason,
      ordering: `upgrade ${requirement.product} to ${requirement.version} before ${advisory.product}${advisory.recommended_version ? ` ${advisory.recommended_version}` : ''}`,
    });
  }
  return {
    advisoryId: advisory.id,
    title: advisory.title,
    product: advisory.product,
    installed,
    verdict: advisory.verdict === 'install' && unmet.length > 0 ? 'blocked' : advisory.verdict,
    recommendedVersion: advisory.recommended_version ?? null,
    unmet: advisory.verdict === 'install' ? unmet : [],
    cves: (advisory.cves ?? []).map((cve) => ({
      id: cve.id,
      cvss: cve.cvss ?? null,
      summary: cve.summary ?? null,
    })),
    summary: advisory.summary,
    references: [...advisory.references],
  };
}

function evaluateAsset(asset: Asset, index: AdvisoryIndex, now: Date): AssetEvaluation {
  const base = {
    asset: asset.name,
    source: asset.source,
    status: asset.status,
    ...(asset.error ? { error: asset.error } : {}),
    products: asset.products,
  };
  const matches: AdvisoryMatch[] = [];
  const reminders: ReminderState[] = [];
  const unreadable: { product: string; version: string }[] = [];
  for (const [product, installed] of Object.entries(asset.products)) {
    if (!parseVersion(installed)) {
      unreadable.push({ product, version: installed });
      continue;
    }
    const entry = index.forVersion(product, installed);
    for (const match of entry.plain) matches.push(match);
    for (const advisory of entry.conditional) {
      const match = matchOf(asset.products, advisory, installed);
      if (match) matches.push(match);
    }
    for (const advisory of entry.reminders) {
      const reminder = reminderState(asset, advisory, now);
      if (reminder) reminders.push(reminder);
    }
  }
  let best = severity.length;
  for (const match of matches) best = Math.min(best, rank[match.verdict]);
  const verdict = severity[best] ?? null;
  matches.sort(
    (a, b) =>
      rank[a.verdict] - rank[b.verdict] ||
      (a.advisoryId < b.advisoryId ? -1 : a.advisoryId > b.advisoryId ? 1 : 0),
  );
  reminders.sort((a, b) => a.advisoryId.localeCompare(b.advisoryId));
  return { ...base, verdict, matches, reminders, unreadable };
}

/** Verdicts for every asset, from the advisories whose window holds at `now`. */
export function evaluate(
  advisories: readonly VerifiedAdvisory[],
  assets: readonly Asset[],
  now: Date,
): AssetEvaluation[] {
  const index = new AdvisoryIndex(advisories, now);
  return assets.map((asset) =>
    asset.status === 'unknown'
      ? {
          asset: asset.name,
          source: asset.source,
          status: 'unknown',
          ...(asset.error ? { error: asset.error } : {}),
          products: asset.products,
          verdict: null,
          matches: [],
          reminders: [],
          unreadable: [],
        }
      : evaluateAsset(asset, index, now),
  );
}

/**
 * Whether an asset asks for someone's attention: a verdict other than `hold` (install,
 * wait-for-patch, eol, blocked), a due reminder, or an unknown state (its source failed).
 */
/**
 * Whether an operator must act on the asset: a verdict other than hold, a due reminder,
 * a failed source (`unknown`), or a version that could not be read (it matched nothing,
 * so "no verdict" would hide that nobody knows).
 */
export function needsAction(evaluation: AssetEvaluation): boolean {
  if (evaluation.status === 'unknown') return true;
  return (
    (evaluation.verdict !== null && evaluation.verdict !== 'hold') ||
    evaluation.reminders.some((r) => r.due) ||
    evaluation.unreadable.length > 0
  );
}
