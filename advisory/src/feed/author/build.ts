import { randomBytes } from 'node:crypto';
import { lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { sha256 } from '../../crypto/digest.ts';
import { formatInstant } from '../../time/instants.ts';
import {
  compareFeedVersions,
  type FeedVersion,
  nextFeedVersion,
  parseFeedVersion,
} from '../format/feed-version.ts';
import { defaultLimits, type FeedLimits } from '../format/limits.ts';
import {
  listedSizeProblem,
  MANIFEST_FILE,
  MAX_VALIDITY_MS,
  manifestDateProblems,
  SIGNATURE_FILE,
} from '../format/rules.ts';
import { CURRENT_SCHEMA_VERSION, type Manifest } from '../format/schema.ts';
import { type Finding, lintFeed } from './lint.ts';

export interface BuildOptions {
  feedDir: string;
  /**
   * YYYY.MM.DD or YYYY.MM.DD.N of today's UTC date, after the version of the manifest
   * already in the directory (an older or equal one is refused); by default the next
   * free one after it (feed-version.ts).
   */
  feedVersion?: string;
  expiresInMs: number;
  now?: Date;
  /** The caps verify applies; build refuses a feed beyond them. */
  limits?: Partial<FeedLimits>;
}

export type BuildResult =
  | { ok: true; manifest: Manifest; findings: Finding[]; removedSignature: boolean }
  | { ok: false; findings: Finding[] };

const HEADER =
  '# Advisory feed manifest: written by `advisory-feed build`, signed by `advisory-feed sign`.\n';

/**
 * Lints the feed; only a clean feed gets a manifest (and any old signature goes). The
 * manifest obeys the rules `verify` applies (feed/format/rules.ts): its version is the UTC date
 * it is published on, it is valid for at most 366 days, and it lists only what `verify`
 * can read back, written by the YAML library's own serializer.
 */
export function buildFeed(options: BuildOptions): BuildResult {
  const now = options.now ?? new Date();
  const { findings, modules: layout } = lintFeed(options.feedDir, now);
  const manifestError = (message: string) =>
    findings.push({ severity: 'error', rule: 'manifest', file: MANIFEST_FILE, line: 1, message });
  if (!(options.expiresInMs > 0 && options.expiresInMs <= MAX_VALIDITY_MS)) {
    manifestError('the feed must expire more than 0 and at most 366 days after it is published');
    return { ok: false, findings };
  }
  const previous = previousVersion(options.feedDir);
  let feedVersion = options.feedVersion;
  if (feedVersion !== undefined) {
    // Only a version after the last one built here can be published: clients that
    // accepted that one refuse an older one (rollback) and another of the same version
    // (version-conflict). A manifest whose version cannot be read gives nothing to compare.
    const refusal = previous === null || previous === 'unreadable' ? null : notAfter(feedVersion, previous);
    if (refusal) {
      manifestError(refusal);
      return { ok: false, findings };
    }
  } else {
    const next =
      previous === 'unreadable'
        ? {
            ok: false as const,
            message: `the ${MANIFEST_FILE} already here has no readable feed_version, so the next free version is unknown: give one with --feed-version`,
          }
        : nextFeedVersion(previous, now);
    if (!next.ok) {
      manifestError(next.message);
      return { ok: false, findings };
    }
    feedVersion = next.version;
  }
  const publishedAt = formatInstant(now);
  const dates = {
    feed_version: feedVersion,
    published_at: publishedAt,
    expires_at: formatInstant(new Date(now.getTime() + options.expiresInMs)),
  };
  for (const problem of manifestDateProblems(dates)) manifestError(problem);
  if (findings.some((f) => f.severity === 'error')) return { ok: false, findings };

  const limits = { ...defaultLimits, ...options.limits };
  const modules: Manifest['modules'] = {};
  let count = 0;
  let total = 0;
  for (const [module, files] of layout) {
    modules[module] = {
      files: files.map((file) => {
        const data = readFileSync(path.join(options.feedDir, file));
        count += 1;
        total += data.length;
        const problem = listedSizeProblem(file, data.length, limits);
        if (problem) findings.push({ severity: 'error', rule: 'layout', file, line: 1, message: problem });
        return { path: file, sha256: sha256(data), size: data.length };
      }),
    };
  }
  // The caps verify applies (feed/format/limits.ts): a feed build writes is one clients accept.
  if (count > limits.files) manifestError(`the feed has ${count} files, above the cap of ${limits.files}`);
  if (total > limits.totalBytes)
    manifestError(`the files add up to ${total} bytes, above the ${limits.totalBytes}-byte cap`);
  const manifest: Manifest = { schema_version: CURRENT_SCHEMA_VERSION, ...dates, modules };
  const text = HEADER + dumpManifest(manifest);
  if (Buffer.byteLength(text) > limits.manifestBytes)
    manifestError(
      `the manifest would be ${Buffer.byteLength(text)} bytes, above the ${limits.manifestBytes}-byte cap`,
    );
  if (findings.some((f) => f.severity === 'error')) return { ok: false, findings };
  // A signature over the previous manifest would only mislead: it goes first, and if it
  // cannot, no manifest is written.
  let removedSignature = false;
  try {
    rmSync(path.join(options.feedDir, SIGNATURE_FILE));
    removedSignature = true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') {
      manifestError(
        `the old ${SIGNATURE_FILE} cannot be removed (${code ?? (error as Error).message}); no manifest written`,
      );
      return { ok: false, findings };
    }
  }
  // Written beside it and renamed into place: whatever stood at the name (a FIFO, a link)
  // is replaced, never opened, and a reader sees the old manifest or the new one.
  const temporary = path.join(options.feedDir, `.${MANIFEST_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, text, { flag: 'wx' });
    renameSync(temporary, path.join(options.feedDir, MANIFEST_FILE));
  } catch (error) {
    rmSync(temporary, { force: true });
    manifestError(`${MANIFEST_FILE} cannot be written: ${(error as Error).message}`);
    return { ok: false, findings };
  }
  return { ok: true, manifest, findings, removedSignature };
}

/** Why `given` cannot follow `previous`, or null when it is later. */
function notAfter(given: string, previous: FeedVersion & { text: string }): string | null {
  const parsed = parseFeedVersion(given);
  // A version that is not one is the dates' problem (manifestDateProblems), reported below.
  if (!parsed) return null;
  const order = compareFeedVersions(parsed, previous);
  if (order > 0) return null;
  const advice = `build without --feed-version to take the next free version (or remove ${MANIFEST_FILE} first if that feed was never published)`;
  return order < 0
    ? `--feed-version ${given} is older than ${previous.text}, the version of the manifest already here: clients that accepted that feed refuse this one (rollback); ${advice}`
    : `--feed-version ${given} is the version of the manifest already here: clients that accepted that feed refuse another one of the same version (version-conflict); ${advice}`;
}

/**
 * The feed_version of the manifest already in the directory: null when there is none,
 * 'unreadable' when one is there without a readable version.
 */
function previousVersion(feedDir: string): (FeedVersion & { text: string }) | 'unreadable' | null {
  let text: string;
  try {
    const file = path.join(feedDir, MANIFEST_FILE);
    // A link or FIFO at the name is no manifest of ours; build replaces it.
    if (!lstatSync(file).isFile()) return null;
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'unreadable';
  }
  // build writes the manifest (quoted, at the top level): its own line is enough to read.
  const version = /^feed_version: "?([0-9.]+)"?$/m.exec(text)?.[1] ?? '';
  const parsed = parseFeedVersion(version);
  return parsed ? { ...parsed, text: version } : 'unreadable';
}

/** The manifest as YAML: every string quoted, so no other YAML reader takes one for a number or date. */
export function dumpManifest(manifest: Manifest): string {
  return yaml.dump(manifest, { lineWidth: -1, noRefs: true, quotingType: '"', forceQuotes: true });
}
