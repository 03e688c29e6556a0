import { type Static, Type } from 'typebox';

/**
 * Feed schema, version 2.x. Unknown fields are allowed everywhere (forward compatibility:
 * a 2.1 feed adds fields a 2.0 client ignores); a breaking change bumps the major.
 *
 * 2.0 (from client 0.2): reminder periods are ISO 8601 periods (`P3M`); 1.0 wrote `3m`,
 * which read as minutes anywhere durations are written. A 1.x feed is refused by this
 * client with a message saying so; rebuild it with this release's `advisory-feed build`.
 */
export const SUPPORTED_SCHEMA_MAJOR = 2;
export const CURRENT_SCHEMA_VERSION = '2.0';

export const Verdicts = ['blocked', 'eol', 'wait-for-patch', 'hold', 'install'] as const;
export type Verdict = (typeof Verdicts)[number];

export const ManifestFile = Type.Object({
  path: Type.String({ minLength: 1, maxLength: 255 }),
  sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
  size: Type.Integer({ minimum: 0 }),
});
export type ManifestFile = Static<typeof ManifestFile>;

export const Manifest = Type.Object({
  schema_version: Type.String({ pattern: '^[0-9]+\\.[0-9]+$' }),
  /** YYYY.MM.DD or YYYY.MM.DD.N (feed-version.ts reads it; the pattern only bounds it). */
  feed_version: Type.String({ pattern: '^[0-9]{4}\\.[0-9]{2}\\.[0-9]{2}(\\.[1-9][0-9]?)?$' }),
  published_at: Type.String({ minLength: 1 }),
  expires_at: Type.String({ minLength: 1 }),
  modules: Type.Record(Type.String(), Type.Object({ files: Type.Array(ManifestFile) })),
  /** Verified files outside the modules (a README, a changelog): hashed, otherwise ignored. */
  files: Type.Optional(Type.Array(ManifestFile)),
});
export type Manifest = Static<typeof Manifest>;

export const ProductName = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' });
export const CveId = Type.String({ pattern: '^CVE-[0-9]{4}-[0-9]{4,}$' });

/** Unique across a feed; also the advisory's file name (in lowercase) for `advisory-feed new`. */
export const AdvisoryId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{2,63}$' });

export const Advisory = Type.Object({
  id: AdvisoryId,
  title: Type.String({ minLength: 1, maxLength: 200 }),
  product: ProductName,
  /** A version range (npm semver syntax: ">=8.0.0 <9.0.0", "<32", "16.x"). */
  affects: Type.String({ minLength: 1, maxLength: 200 }),
  /** Required unless the advisory is a service reminder (then it has `reminder` instead). */
  verdict: Type.Optional(
    Type.Union([
      Type.Literal('blocked'),
      Type.Literal('eol'),
      Type.Literal('wait-for-patch'),
      Type.Literal('hold'),
      Type.Literal('install'),
    ]),
  ),
  recommended_version: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** YYYY-MM-DD (UTC midnight) or an RFC 3339 date-time. */
  effective: Type.String({ minLength: 10 }),
  expires: Type.String({ minLength: 10 }),
  cves: Type.Optional(
    Type.Array(
      Type.Object({
        id: CveId,
        cvss: Type.Optional(Type.Number({ minimum: 0, maximum: 10 })),
        summary: Type.Optional(Type.String({ maxLength: 1000 })),
      }),
    ),
  ),
  /** Cross-product ordering: what must already be in place before this advisory's upgrade. */
  requires: Type.Optional(
    Type.Array(
      Type.Object({
        product: ProductName,
        version: Type.String({ minLength: 1, maxLength: 200 }),
        reason: Type.String({ minLength: 1, maxLength: 1000 }),
      }),
    ),
  ),
  /**
   * A service reminder: due `every` (an ISO 8601 calendar period: P90D, P12W, P3M, P1Y)
   * after the date in the asset fact `from`.
   */
  reminder: Type.Optional(
    Type.Object({
      from: Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }),
      every: Type.String({ pattern: '^P[0-9YMWD]{2,16}$' }),
      task: Type.String({ minLength: 1, maxLength: 500 }),
    }),
  ),
  summary: Type.String({ minLength: 1, maxLength: 4000 }),
  references: Type.Array(Type.String({ pattern: '^https?://\\S+$' }), { minItems: 1 }),
});
export type Advisory = Static<typeof Advisory>;
