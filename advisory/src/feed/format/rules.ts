import { parseInstant } from '../../time/instants.ts';
import { FEED_VERSION_FORMS, feedDateOf, parseFeedVersion } from './feed-version.ts';
import type { FeedLimits } from './limits.ts';

/**
 * The rules of a feed's layout and manifest, in one place: `lint` reports them as
 * findings, `build` refuses to write a manifest that breaks them, and `verify` rejects a
 * feed that does. Whatever `build` writes, `verify` therefore reads the same way.
 */

/** The names the feed builder and the client agree on. */
export const MANIFEST_FILE = 'manifest.yaml';
export const SIGNATURE_FILE = 'manifest.yaml.sig';

/** A module folder: lowercase ASCII letters, digits and `-`, as product names are. */
export const MODULE_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

/**
 * One segment of a listed path: ASCII letters, digits, `.`, `_` and `-`, not starting
 * with a dot. Nothing that YAML, a shell, a URL or another file system could read
 * differently (spaces, `#`, `:`, quotes, non-ASCII letters that normalise differently).
 */
export const PATH_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Advisory files end in .yaml or .yml; other verified files are carried but not read. */
export const isAdvisoryFile = (name: string) => /\.ya?ml$/.test(name);

/** The clock difference tolerated between publisher and client. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;
/** The longest a feed may be valid: a client must hear from its feed host within a year. */
export const MAX_VALIDITY_MS = 366 * 86_400_000;

export function moduleNameProblem(name: string): string | null {
  return MODULE_NAME.test(name)
    ? null
    : `module folder "${name}": lowercase ASCII letters, digits and "-" only, starting with a letter or digit (at most 64)`;
}

/**
 * Why a path cannot be listed in a manifest, or null: relative, forward slashes, every
 * segment plain (PATH_SEGMENT), at most 255 characters; a module file lies inside a
 * module folder of that name.
 */
export function listedPathProblem(listed: string, module: string | null = null): string | null {
  if (listed.length === 0 || listed.length > 255) return `"${listed}": a path of 1 to 255 characters`;
  if (listed.startsWith('/')) return `"${listed}": an absolute path`;
  const segments = listed.split('/');
  for (const segment of segments) {
    if (segment === '..' || segment === '.') return `"${listed}": "." and ".." are not allowed`;
    if (!PATH_SEGMENT.test(segment)) {
      return `"${listed}": "${segment}" may use only ASCII letters, digits, ".", "_" and "-", and not start with "."`;
    }
  }
  if (module !== null && (segments.length < 2 || segments[0] !== module)) {
    return `"${listed}" is listed in module ${module} but lies outside its folder`;
  }
  return null;
}

export interface ManifestDates {
  feed_version: string;
  published_at: string;
  expires_at: string;
}

/**
 * The manifest's dates: `feed_version` (feed-version.ts) on a real date equal to the UTC
 * date of `published_at`; both instants real; the feed valid for a positive time of at most
 * MAX_VALIDITY_MS; and, given `now`, not published in the future. One typo accepted once
 * (`2062.11.22`) would otherwise make every later feed a "rollback" for its clients.
 */
export function manifestDateProblems(dates: ManifestDates, now?: Date): string[] {
  const problems: string[] = [];
  const version = parseFeedVersion(dates.feed_version);
  if (!version)
    problems.push(`feed_version "${dates.feed_version}" is not a real date written ${FEED_VERSION_FORMS}`);
  const published = parseInstant(dates.published_at);
  const expires = parseInstant(dates.expires_at);
  if (!published) problems.push(`published_at "${dates.published_at}" is not an RFC 3339 time`);
  if (!expires) problems.push(`expires_at "${dates.expires_at}" is not an RFC 3339 time`);
  if (version && published && feedDateOf(published) !== version.date) {
    problems.push(
      `feed_version ${dates.feed_version} is not of the UTC date of published_at ${dates.published_at} (${feedDateOf(published)})`,
    );
  }
  if (published && expires) {
    const validity = expires.getTime() - published.getTime();
    if (validity <= 0)
      problems.push(`expires_at ${dates.expires_at} is not after published_at ${dates.published_at}`);
    else if (validity > MAX_VALIDITY_MS)
      problems.push(`the feed is valid for more than 366 days (expires_at ${dates.expires_at})`);
  }
  if (published && now && published.getTime() > now.getTime() + MAX_CLOCK_SKEW_MS) {
    problems.push(
      `published_at ${dates.published_at} is in the future (now ${now.toISOString()}); check the publisher's clock`,
    );
  }
  return problems;
}

/** Why a listed size cannot be accepted, or null. */
export function listedSizeProblem(listed: string, size: number, limits: FeedLimits): string | null {
  return size > limits.fileBytes
    ? `${listed} is listed at ${size} bytes, above the ${limits.fileBytes}-byte cap`
    : null;
}
