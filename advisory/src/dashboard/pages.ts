import type { ApplianceStatus } from '../appliance/appliance.ts';
import type { Health } from '../appliance/health.ts';
import { feedOrigin } from '../appliance/status.ts';
import type { DecisionEntry } from '../decisions/chain.ts';
import type { LogVerification } from '../decisions/verify.ts';
import { adviceOf, withCveRecords } from '../evaluation/advice.ts';
import { cveHighlights, orderingSteps } from '../evaluation/highlights.ts';
import { type AdvisoryMatch, type AssetEvaluation, severity } from '../evaluation/verdicts.ts';
import { timeline, verdictHistory } from './history.ts';
import { instant, localTime } from './views/time.ts';

/**
 * The dashboard's pages as data: pure functions from what the appliance knows (status,
 * log entries, the time) to the template, title and values a page is rendered from. No
 * request, reply or I/O here: each is tested on its own, and the server only wires them.
 */
export interface Page {
  status?: number;
  /** The navigation entry to mark as current ('' for none). */
  current: string;
  title: string;
  template: string;
  data: object;
}

export const navigation = [
  { href: '/', label: 'Assets' },
  { href: '/ordering', label: 'Upgrade order' },
  { href: '/cves', label: 'CVEs' },
  { href: '/reminders', label: 'Reminders' },
  { href: '/feed', label: 'Feed' },
  { href: '/log', label: 'Decision log' },
];

const colours: Record<string, string> = {
  blocked: '#82071e',
  eol: '#cf222e',
  'wait-for-patch': '#9a6700',
  hold: '#54aeff',
  install: '#1a7f37',
  none: '#d0d7de',
};

/**
 * A message as the end of a sentence: the appliance's messages (and the feed's reasons in
 * them) carry no final full stop, and a banner goes on after them.
 */
export function fullStop(message: string): string {
  const text = message.trimEnd();
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * Where ADVISORY_FEED_URL points, in the words `advisory check` uses: the feed host by its
 * address, or the feed directory (a mirror or a copy on disk, nothing pulled over a network)
 * by its path. Never "the live feed": a directory is no live feed.
 */
export function sourceText(status: Pick<ApplianceStatus, 'feedSource' | 'feedLocation'>): string {
  return `${sourceKind(status)} ${status.feedLocation}`;
}

function sourceKind(status: Pick<ApplianceStatus, 'feedSource'>): string {
  return status.feedSource === 'directory' ? 'the feed directory' : 'the feed host';
}

/** The panel every page shows about the feed in use and what else needs attention. */
export function notice(status: ApplianceStatus, health: Health) {
  const feed = status.feed;
  return {
    // The banner names the source a refused or unreachable feed came from, as check does.
    source: sourceText(status),
    feed: feed
      ? { version: feed.feed.manifest.feed_version, from: feed.from, since: instant(feed.since) }
      : null,
    problem: status.problem ? fullStop(status.problem.message) : null,
    // A refused or unreachable live feed has its own panel, from `problem`; a refusal still
    // in effect while the host cannot be reached has one of its own.
    problems: health.problems
      .filter(
        (p) =>
          p.code !== 'no-feed' &&
          p.code !== 'feed-expired' &&
          !(p.code === 'feed-refused' && status.problem?.outcome === 'rejected') &&
          !(p.code === 'feed-unreachable' && status.problem?.outcome === 'unreachable'),
      )
      .map((p) => ({ ...p, message: fullStop(p.message) })),
    inventoryError: status.inventoryError === null ? null : fullStop(status.inventoryError),
    // Without a feed nothing is evaluated again: the verdicts still shown are the last ones.
    lastEvaluatedAt: feed ? null : instant(status.evaluatedAt),
  };
}

export function assetsPage(status: ApplianceStatus, query: Record<string, string | undefined>): Page {
  const evaluations = status.evaluations;
  const filter = {
    verdict: query.verdict || undefined,
    product: query.product || undefined,
    source: query.source || undefined,
  };
  const rows = evaluations
    .filter(
      (e) =>
        !filter.verdict ||
        (filter.verdict === 'unknown'
          ? e.status === 'unknown'
          : filter.verdict === 'none'
            ? e.status === 'ok' && e.verdict === null
            : e.verdict === filter.verdict),
    )
    .filter((e) => !filter.product || Object.hasOwn(e.products, filter.product))
    .filter((e) => !filter.source || e.source === filter.source)
    .map((e) => ({
      asset: e.asset,
      source: e.source,
      status: e.status,
      error: e.error,
      verdict: e.verdict,
      matches: e.matches.map(withAdvice),
      products: productRows(e),
    }));
  return {
    current: '/',
    title: 'Assets',
    template: '@assets',
    data: {
      filter,
      filtered: Object.values(filter).some(Boolean),
      rows,
      total: evaluations.length,
      evaluatedAt: instant(status.evaluatedAt),
      verdictOptions: [...severity, 'none', 'unknown'],
      productOptions: [...new Set(evaluations.flatMap((e) => Object.keys(e.products)))].sort(),
      sourceOptions: [...new Set(evaluations.map((e) => e.source))].sort(),
    },
  };
}

/**
 * An asset's products as the pages list them: the version installed (marked when it is
 * not a version) and the one the first advisory naming a version for it recommends.
 */
function productRows(e: AssetEvaluation) {
  return Object.entries(e.products).map(([product, version]) => ({
    product,
    version,
    unreadable: e.unreadable.some((u) => u.product === product),
    recommended:
      e.matches.find((m) => m.product === product && m.recommendedVersion)?.recommendedVersion ?? null,
  }));
}

/** A match with its advice ready to show: links checked, CVEs pointing at their records. */
function withAdvice(match: AdvisoryMatch) {
  return { ...match, advice: adviceOf(match) };
}

export function orderingPage(status: ApplianceStatus): Page {
  return {
    current: '/ordering',
    title: 'Upgrade order',
    template: '@ordering',
    data: { steps: orderingSteps(status.evaluations) },
  };
}

export function cvesPage(status: ApplianceStatus): Page {
  return {
    current: '/cves',
    title: 'CVE highlights',
    template: '@cves',
    data: { cves: withCveRecords(cveHighlights(status.evaluations)) },
  };
}

/**
 * The fact each service reminder of the feed in use is measured from, by advisory id:
 * what an operator sets to record the task as done. Unknown without a feed.
 */
function reminderFacts(status: ApplianceStatus): Map<string, string> {
  const facts = new Map<string, string>();
  for (const { advisory } of status.feed?.feed.advisories ?? [])
    if (advisory.reminder) facts.set(advisory.id, advisory.reminder.from);
  return facts;
}

/** Reminders with the fact that records each as done (null when the feed does not say). */
function withFacts<T extends { advisoryId: string }>(status: ApplianceStatus, reminders: readonly T[]) {
  const facts = reminderFacts(status);
  return reminders.map((r) => ({ ...r, fact: facts.get(r.advisoryId) ?? null }));
}

export function remindersPage(status: ApplianceStatus): Page {
  const all = withFacts(
    status,
    status.evaluations.flatMap((e) => e.reminders.map((r) => ({ ...r, asset: e.asset }))),
  );
  const byDue = (a: { dueAt: string | null }, b: { dueAt: string | null }) =>
    (a.dueAt ?? '').localeCompare(b.dueAt ?? '');
  return {
    current: '/reminders',
    title: 'Reminders',
    template: '@reminders',
    data: { overdue: all.filter((r) => r.due).sort(byDue), upcoming: all.filter((r) => !r.due).sort(byDue) },
  };
}

export function feedPage(
  status: ApplianceStatus,
  settings: { cachePath: string; refreshInterval: string; trustedKeys: string[] },
): Page {
  const feed = status.feed;
  return {
    current: '/feed',
    title: 'Feed',
    template: '@feed',
    data: {
      location: status.feedLocation,
      feed: feed
        ? {
            version: feed.feed.manifest.feed_version,
            schema: feed.feed.manifest.schema_version,
            publishedAt: instant(feed.feed.manifest.published_at),
            expiresAt: instant(feed.feed.manifest.expires_at),
            signedBy: feed.feed.signedBy,
            manifestSha256: feed.feed.manifestSha256,
            advisories: feed.feed.advisoryCount,
            // What serves, by its origin (feedOrigin, as check and the JSON outputs say it):
            // a feed refused or unreachable since leaves the copy accepted before in use.
            inUse:
              feedOrigin(status) === 'cache'
                ? `the cache (${settings.cachePath})`
                : status.problem
                  ? `the last accepted copy from ${sourceText(status)}`
                  : sourceText(status),
            since: instant(feed.since),
          }
        : null,
      liveProblem: status.problem !== null,
      sourceKind: sourceKind(status),
      servingCache: feed?.from === 'cache',
      cachePath: settings.cachePath,
      lastPull: status.lastPull ? { ...status.lastPull, at: instant(status.lastPull.at) } : null,
      // What went wrong last: the pull, the refresh, or both, each with its time.
      errors: [
        ...(status.problem ? [{ at: instant(status.problem.at), text: status.problem.message }] : []),
        ...(status.lastRefreshError
          ? [
              {
                at: instant(status.lastRefreshError.at),
                text: `the refresh failed: ${status.lastRefreshError.message}`,
              },
            ]
          : []),
      ],
      interval: settings.refreshInterval,
      trustedKeys: settings.trustedKeys,
      sources: status.inventory,
      outbox: status.outbox,
    },
  };
}

export const LOG_PAGE_SIZE = 100;

function describeEntry(entry: DecisionEntry): string {
  const d = entry.data as Record<string, unknown>;
  switch (entry.kind) {
    case 'feed-accepted':
      return `feed ${d.feed_version} accepted (${d.advisories} advisories, signed by ${(d.signed_by as string[] | undefined)?.join(', ')})`;
    case 'feed-rejected':
      return `feed refused: ${d.reason}: ${d.message}`;
    case 'initial-evaluation':
      return `first evaluation with feed ${d.feed_version}: ${Object.keys((d.verdicts as object) ?? {}).length} assets`;
    case 'verdict-changed':
      return `${d.asset}: ${d.from ?? 'no verdict'} → ${d.to ?? 'no verdict'} (${((d.advisories as string[]) ?? []).join(', ')})`;
    case 'reminder-due':
      return `${d.asset}: ${d.task} is due (${d.advisory})`;
    case 'log-repaired':
      return `a partial last line of ${d.file} (${d.removed_bytes} bytes) was set apart in ${d.kept_in}`;
    default:
      return JSON.stringify(d);
  }
}

/** `?page=` as a page number from 1; anything else is page 1. */
export function pageNumber(raw: string | undefined): number {
  return raw && /^[1-9][0-9]{0,6}$/.test(raw) ? Number(raw) : 1;
}

export function logPage(
  verification: LogVerification,
  page: { entries: DecisionEntry[]; total: number },
  number: number,
): Page {
  return {
    current: '/log',
    title: 'Decision log',
    template: '@log',
    data: {
      verification,
      lastCheckpointAt: instant(verification.lastCheckpoint?.at),
      entries: page.entries.map((e) => ({
        seq: e.seq,
        at: instant(e.at),
        kind: e.kind,
        text: describeEntry(e),
      })),
      page: number,
      pages: Math.max(1, Math.ceil(page.total / LOG_PAGE_SIZE)),
      total: page.total,
    },
  };
}

/** The timeline with its segments' ends as local times (their titles show on hover). */
function timed(drawn: ReturnType<typeof timeline>) {
  return drawn
    ? {
        ...drawn,
        segments: drawn.segments.map((s) => ({
          ...s,
          from: localTime(s.from),
          to: localTime(s.to),
        })),
      }
    : null;
}

export function assetPage(status: ApplianceStatus, entries: DecisionEntry[], name: string, now: Date): Page {
  const evaluation = status.evaluations.find((e) => e.asset === name) ?? null;
  const history = verdictHistory(entries, name);
  if (!evaluation && history.length === 0) {
    return {
      status: 404,
      current: '',
      title: 'Not found',
      template: '@message',
      data: { heading: 'No such asset', text: `No asset is called ${name}.` },
    };
  }
  return {
    current: '',
    title: name,
    template: '@asset',
    data: {
      name,
      evaluation: evaluation
        ? {
            ...evaluation,
            matches: evaluation.matches.map(withAdvice),
            reminders: withFacts(status, evaluation.reminders),
            products: productRows(evaluation),
          }
        : null,
      history: history.map((p) => ({ ...p, when: instant(p.at) })),
      timeline: timed(timeline(history, now)),
      colours,
    },
  };
}
