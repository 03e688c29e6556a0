import { type Static, type TSchema, Type } from 'typebox';
import { withCveRecords } from '../evaluation/advice.ts';
import { orderingSteps } from '../evaluation/highlights.ts';
import { type AdvisoryMatch, type AssetEvaluation, needsAction } from '../evaluation/verdicts.ts';
import type { Health } from './health.ts';
import { type ApplianceStatus, feedOrigin } from './status.ts';

/**
 * The verdicts as a document for programs: `advisory check --json` prints it and the
 * dashboard serves it as `/verdicts.json`. This TypeBox schema is its one definition;
 * docs/advisory/verdicts.schema.json is generated from it (a test fails when that file is
 * stale) and both outputs are validated against the file.
 *
 * Versioned by `version`: fields may be added within a version (readers ignore what they
 * do not know, so the schema allows more); removing a field or changing what one means
 * makes a new version.
 */
export const VERDICTS_FORMAT = 'advisory-verdicts';
export const VERDICTS_VERSION = 1;

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Instant = (description: string) => Type.String({ format: 'date-time', description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });

const verdictName = (description: string) =>
  Type.Union(
    [
      Type.Literal('blocked'),
      Type.Literal('eol'),
      Type.Literal('wait-for-patch'),
      Type.Literal('hold'),
      Type.Literal('install'),
    ],
    { description },
  );

const Problem = Type.Object({
  code: Type.String({ description: 'as /health reports it: feed-refused, feed-stale, refresh-failed, …' }),
  message: Type.String(),
});

const Unmet = Type.Object({
  product: Type.String(),
  required: Type.String({ description: 'the version range the product must be in first' }),
  installed: Nullable(Type.String()),
  reason: Type.String(),
  step: Type.String({ description: '"upgrade php to >=8.2.0 before nextcloud 33.0.8"' }),
});

const Match = Type.Object({
  advisory: Type.String({ description: 'the id of an entry of `advisories`' }),
  product: Type.String(),
  installed: Type.String(),
  verdict: verdictName("the advisory's verdict for this asset: `blocked` when an install waits for `unmet`"),
  recommended_version: Nullable(Type.String()),
  unmet: Type.Array(Unmet),
});

const Reminder = Type.Object({
  advisory: Type.String(),
  product: Type.String(),
  task: Type.String(),
  due_at: Nullable(Instant('null when the asset does not report the fact it is counted from')),
  due: Type.Boolean(),
});

const AssetVerdict = Type.Object({
  name: Type.String(),
  source: Type.String({ description: '`inventory` or the name of an inventory source' }),
  status: Type.Union([Type.Literal('ok'), Type.Literal('unknown')], {
    description: '`unknown`: the asset’s source failed (see `error`); it has no verdict',
  }),
  error: Nullable(Type.String()),
  verdict: Nullable(verdictName('the most severe verdict of its matches; null when none matches')),
  needs_action: Type.Boolean({
    description:
      'what `advisory check` counts: a verdict other than hold, a due reminder, unknown, an unreadable version',
  }),
  products: Type.Record(Type.String(), Type.String()),
  unreadable: Type.Array(Type.Object({ product: Type.String(), version: Type.String() })),
  matches: Type.Array(Match, { description: 'most severe first' }),
  reminders: Type.Array(Reminder),
});

const Cve = Type.Object({
  id: Type.String({ pattern: '^CVE-[0-9]{4}-[0-9]{4,}$' }),
  cvss: Nullable(Type.Number({ minimum: 0, maximum: 10 })),
  summary: Nullable(Type.String()),
  url: Type.String({ description: 'the public record (cve.org)' }),
});

const AdvisoryAdvice = Type.Object({
  id: Type.String(),
  title: Type.String(),
  product: Type.String(),
  verdict: verdictName('the verdict the feed gives'),
  recommended_version: Nullable(Type.String()),
  summary: Type.String({ description: 'what to do, in the feed author’s words (plain text)' }),
  references: Type.Array(Type.String(), {
    description: 'as the feed gives them: untrusted text; use only http(s) URLs as links',
  }),
  cves: Type.Array(Cve),
});

const VerdictCounts = Type.Object(
  {
    blocked: Count('assets with this verdict'),
    eol: Count('assets with this verdict'),
    'wait-for-patch': Count('assets with this verdict'),
    hold: Count('assets with this verdict'),
    install: Count('assets with this verdict'),
    none: Count('assets evaluated with no matching advisory'),
    unknown: Count('assets whose source failed'),
  },
  { description: 'assets by verdict; every asset is counted once' },
);

export const VerdictsDocument = Type.Object(
  {
    format: Type.Literal(VERDICTS_FORMAT),
    version: Type.Literal(VERDICTS_VERSION),
    generated_at: Instant('when this document was made'),
    appliance: Type.Object({
      version: Type.String({ description: 'the client version' }),
      read_only: Type.Boolean({
        description: 'evaluated from the cache of another process (the daemon), nothing written',
      }),
    }),
    health: Type.Object({
      status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]),
      problems: Type.Array(Problem),
    }),
    feed: Type.Object({
      state: Type.Union([Type.Literal('live'), Type.Literal('cache'), Type.Literal('none')], {
        description:
          '`live`: read from ADVISORY_FEED_URL by this process (the feed host or the feed directory: `origin` says which); `cache`: re-verified from the cache; `none`: no verified feed is in use',
      }),
      origin: Type.Union(
        [Type.Literal('host'), Type.Literal('directory'), Type.Literal('cache'), Type.Literal('none')],
        {
          description:
            'where the feed in use came from: `host` pulled over HTTP(S) from the feed host, `directory` read from the feed directory (ADVISORY_FEED_URL a path or file:// URL), `cache` re-verified from the cache, `none` no verified feed is in use',
        },
      ),
      location: Type.String({ description: 'ADVISORY_FEED_URL' }),
      version: Nullable(Type.String()),
      schema_version: Nullable(Type.String()),
      published_at: Nullable(Type.String()),
      expires_at: Nullable(Type.String()),
      age_seconds: Nullable(Count('seconds since published_at')),
      advisories: Nullable(Count('advisories in the feed (in force or not)')),
      problem: Nullable(Type.String({ description: 'why the live feed is not in use, while that holds' })),
      last_pull: Nullable(
        Type.Object({
          at: Instant('when the live feed was last asked'),
          outcome: Type.Union([
            Type.Literal('accepted'),
            Type.Literal('unchanged'),
            Type.Literal('rejected'),
            Type.Literal('unreachable'),
          ]),
          message: Type.String(),
        }),
      ),
    }),
    evaluated_at: Nullable(Instant('when the verdicts were worked out')),
    summary: Type.Object({
      assets: Count('assets evaluated'),
      needs_action: Count('assets that need action'),
      verdicts: VerdictCounts,
    }),
    assets: Type.Array(AssetVerdict),
    advisories: Type.Array(AdvisoryAdvice, {
      description: 'every advisory that matches an asset, once, by id',
    }),
    ordering: Type.Array(
      Type.Object({
        step: Type.String(),
        product: Type.String(),
        required: Type.String(),
        reason: Type.String(),
        assets: Type.Array(Type.String()),
      }),
      { description: 'cross-product steps blocked installs wait for, once each' },
    ),
  },
  {
    title: 'Advisory appliance verdicts',
    description: 'What `advisory check --json` prints and GET /verdicts.json serves.',
  },
);
export type VerdictsDocument = Static<typeof VerdictsDocument>;

/** The schema as published in docs/advisory/verdicts.schema.json. */
export function verdictsJsonSchema(): object {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    ...JSON.parse(JSON.stringify(VerdictsDocument)),
  };
}

export type VerdictCounts = Static<typeof VerdictCounts>;

/** Assets by verdict (`none`: no advisory matches; `unknown`: the source failed). */
export function verdictCounts(evaluations: readonly AssetEvaluation[]): VerdictCounts {
  const counts: VerdictCounts = {
    blocked: 0,
    eol: 0,
    'wait-for-patch': 0,
    hold: 0,
    install: 0,
    none: 0,
    unknown: 0,
  };
  for (const e of evaluations) counts[e.status === 'unknown' ? 'unknown' : (e.verdict ?? 'none')] += 1;
  return counts;
}

/** Whole seconds since the feed in use was published; null without one. */
export function feedAgeSeconds(status: ApplianceStatus, now: Date): number | null {
  const published = status.feed ? Date.parse(status.feed.feed.manifest.published_at) : Number.NaN;
  return Number.isNaN(published) ? null : Math.max(0, Math.floor((now.getTime() - published) / 1000));
}

/**
 * The feed's own verdict: a match is `blocked` only because an install's requirements
 * are unmet (evaluation/verdicts.ts), and only an install has unmet requirements.
 */
const feedVerdict = (match: AdvisoryMatch) => (match.unmet.length > 0 ? 'install' : match.verdict);

export function verdictsDocument(
  status: ApplianceStatus,
  health: Health,
  now: Date,
  clientVersion: string,
): VerdictsDocument {
  const feed = status.feed;
  const manifest = feed?.feed.manifest;
  const advisories = new Map<string, VerdictsDocument['advisories'][number]>();
  for (const match of status.evaluations.flatMap((e) => e.matches)) {
    if (advisories.has(match.advisoryId)) continue;
    advisories.set(match.advisoryId, {
      id: match.advisoryId,
      title: match.title,
      product: match.product,
      verdict: feedVerdict(match),
      recommended_version: match.recommendedVersion,
      summary: match.summary,
      references: [...match.references],
      cves: withCveRecords(match.cves),
    });
  }
  return {
    format: VERDICTS_FORMAT,
    version: VERDICTS_VERSION,
    generated_at: now.toISOString(),
    appliance: { version: clientVersion, read_only: status.readOnly },
    health: { status: health.status, problems: health.problems.map((p) => ({ ...p })) },
    feed: {
      state: feed ? feed.from : 'none',
      origin: feedOrigin(status),
      location: status.feedLocation,
      version: manifest?.feed_version ?? null,
      schema_version: manifest?.schema_version ?? null,
      published_at: manifest?.published_at ?? null,
      expires_at: manifest?.expires_at ?? null,
      age_seconds: feedAgeSeconds(status, now),
      advisories: feed?.feed.advisoryCount ?? null,
      problem: status.problem?.message ?? null,
      last_pull: status.lastPull
        ? { at: status.lastPull.at, outcome: status.lastPull.outcome, message: status.lastPull.message }
        : null,
    },
    evaluated_at: status.evaluatedAt,
    summary: {
      assets: status.evaluations.length,
      needs_action: status.evaluations.filter(needsAction).length,
      verdicts: verdictCounts(status.evaluations),
    },
    assets: status.evaluations.map((e) => ({
      name: e.asset,
      source: e.source,
      status: e.status,
      error: e.error ?? null,
      verdict: e.verdict,
      needs_action: needsAction(e),
      products: { ...e.products },
      unreadable: e.unreadable.map((u) => ({ ...u })),
      matches: e.matches.map((m) => ({
        advisory: m.advisoryId,
        product: m.product,
        installed: m.installed,
        verdict: m.verdict,
        recommended_version: m.recommendedVersion,
        unmet: m.unmet.map((u) => ({
          product: u.product,
          required: u.required,
          installed: u.installed,
          reason: u.reason,
          step: u.ordering,
        })),
      })),
      reminders: e.reminders.map((r) => ({
        advisory: r.advisoryId,
        product: r.product,
        task: r.task,
        due_at: r.dueAt,
        due: r.due,
      })),
    })),
    advisories: [...advisories.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    ordering: orderingSteps(status.evaluations).map((s) => ({
      step: s.step,
      product: s.product,
      required: s.required,
      reason: s.reason,
      assets: [...s.assets],
    })),
  };
}
