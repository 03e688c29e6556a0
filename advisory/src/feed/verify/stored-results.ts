import { createHmac, timingSafeEqual } from 'node:crypto';
import { sha256 } from '../../crypto/digest.ts';
import { CLIENT_VERSION } from '../../version.ts';
import { isAdvisoryFile } from '../format/rules.ts';
import { type Advisory, Advisory as AdvisorySchema, SUPPORTED_SCHEMA_MAJOR } from '../format/schema.ts';
import type { VerifiedFeed } from './verify-feed.ts';

/**
 * The validated advisories of an accepted feed, kept beside its cached copy so that the
 * next verification need not parse and validate again a file it has seen: a listed file
 * whose path, size and SHA-256 equal an entry's reuses that entry's advisory. Read from
 * this file (at start), the bytes are still read and hashed against the signed manifest
 * (that is what makes an entry apply: the same digest, the same bytes), so only parsing
 * and validation are skipped. Held in memory for the feed in use (at a pull), the bytes
 * are those of its cache copy (`bytesIn`), linked into the new copy, not read again.
 *
 * The file is local state, so it is trusted for nothing it does not prove: it names the
 * format, the client version and a digest of the advisory rules that validated it (an
 * upgraded client validates everything again) and the manifest of the feed it belongs
 * to, and all of it is sealed with an HMAC-SHA256 under a key of the appliance's own
 * (kept in the state directory, not with the cache): damage, or advisories written
 * there by anyone who can write the cache but not read that key, fail the seal.
 * Anything that does not match, or cannot be read, is a reason to ignore the file whole
 * and verify every file: never a reason to refuse a feed.
 *
 * Layout: one line of header (JSON), then the body: a JSON array of
 * [path, size, sha256, advisory] for each advisory file.
 */
const RESULTS_FORMAT = 'advisory-verified-results';
const RESULTS_VERSION = 1;
/**
 * Raise when the advisory rules (feed/format/advisory-rules.ts) change in a way the
 * schema does not show, so that results validated by the old rules are not reused.
 */
const RULES_REVISION = 1;

/** What the advisory rules of this client are: results validated by other rules are not reused. */
export const RULES_DIGEST = sha256(
  JSON.stringify({ advisory: AdvisorySchema, schemaMajor: SUPPORTED_SCHEMA_MAJOR, revision: RULES_REVISION }),
);

export interface ResultsHeader {
  format: string;
  version: number;
  client: string;
  rules: string;
  manifest_sha256: string;
  entries: number;
  /** HMAC-SHA256 (hex) of everything above and the body, under the appliance's key. */
  seal: string;
}

export interface StoredResult {
  size: number;
  sha256: string;
  advisory: Advisory;
}

/** Results that passed every check, by listed path. */
export interface ReusableResults {
  manifestSha256: string;
  byPath: Map<string, StoredResult>;
  /**
   * A directory holding the bytes of that feed, each file checked against its manifest
   * when the feed was accepted (the cache copy of the feed in use). When given, a file
   * whose result is reused is not read from the source at all: its bytes are the ones
   * here (same path, size and sha256, which the new signed manifest pins), linked into
   * the new copy. Only a pull of the feed verified in this process passes it.
   */
  bytesIn?: string;
}

export type ResultsRead = { ok: true; results: ReusableResults } | { ok: false; problem: string };

/** Whether a value survives JSON unchanged (YAML's .nan and .inf do not): only those are stored. */
function jsonExact(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (Array.isArray(value)) return value.every(jsonExact);
  if (typeof value === 'object') return Object.values(value as object).every(jsonExact);
  return false;
}

/**
 * The results of a verified feed (kept advisories), ready to store. An advisory whose
 * value JSON cannot carry exactly is left out: it is validated again next time.
 */
function sealOf(key: Buffer, header: Omit<ResultsHeader, 'seal'>, body: Buffer | string): string {
  const fields = [
    header.format,
    header.version,
    header.client,
    header.rules,
    header.manifest_sha256,
    header.entries,
  ];
  return createHmac('sha256', key)
    .update(`${fields.join('\n')}\n`)
    .update(body)
    .digest('hex');
}

export function encodeResults(
  feed: VerifiedFeed,
  key: Buffer,
  client = CLIENT_VERSION,
  rules = RULES_DIGEST,
): Buffer {
  const byPath = new Map(feed.advisories.map((a) => [a.file, a.advisory]));
  const entries: [string, number, string, Advisory][] = [];
  for (const { files } of Object.values(feed.manifest.modules)) {
    for (const file of files) {
      const advisory = byPath.get(file.path);
      if (!advisory || !isAdvisoryFile(file.path) || !jsonExact(advisory)) continue;
      entries.push([file.path, file.size, file.sha256.toLowerCase(), advisory]);
    }
  }
  const body = JSON.stringify(entries);
  const fields = {
    format: RESULTS_FORMAT,
    version: RESULTS_VERSION,
    client,
    rules,
    manifest_sha256: feed.manifestSha256,
    entries: entries.length,
  };
  const header: ResultsHeader = { ...fields, seal: sealOf(key, fields, body) };
  return Buffer.from(`${JSON.stringify(header)}\n${body}`);
}

/**
 * The results of a feed verified in this process (the feed in use): what a pull of the
 * next feed reuses without reading the stored file.
 */
export function resultsOf(feed: VerifiedFeed): ReusableResults {
  const advisories = new Map(feed.advisories.map((a) => [a.file, a.advisory]));
  const byPath = new Map<string, StoredResult>();
  for (const { files } of Object.values(feed.manifest.modules)) {
    for (const file of files) {
      const advisory = advisories.get(file.path);
      if (advisory) byPath.set(file.path, { size: file.size, sha256: file.sha256.toLowerCase(), advisory });
    }
  }
  return { manifestSha256: feed.manifestSha256, byPath };
}

function isEntry(value: unknown): value is [string, number, string, Advisory] {
  return (
    Array.isArray(value) &&
    value.length === 4 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'number' &&
    typeof value[2] === 'string' &&
    /^[0-9a-f]{64}$/.test(value[2]) &&
    value[3] !== null &&
    typeof value[3] === 'object' &&
    typeof (value[3] as { id?: unknown }).id === 'string'
  );
}

/**
 * Reads stored results for the feed whose manifest has `manifestSha256`; any mismatch
 * or damage is a problem (the caller then verifies every file), never an exception.
 */
export function decodeResults(
  bytes: Buffer,
  manifestSha256: string,
  key: Buffer,
  client = CLIENT_VERSION,
  rules = RULES_DIGEST,
): ResultsRead {
  const newline = bytes.indexOf(10);
  if (newline < 0) return { ok: false, problem: 'the results file has no header line' };
  let header: Partial<ResultsHeader>;
  try {
    header = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as Partial<ResultsHeader>;
  } catch {
    return { ok: false, problem: 'the results file header is not JSON' };
  }
  if (header === null || typeof header !== 'object' || header.format !== RESULTS_FORMAT)
    return { ok: false, problem: 'the results file is not a results file' };
  if (header.version !== RESULTS_VERSION)
    return {
      ok: false,
      problem: `the results file has format version ${header.version}, not ${RESULTS_VERSION}`,
    };
  if (header.client !== client)
    return { ok: false, problem: `the results were validated by client ${header.client}, not ${client}` };
  if (header.rules !== rules)
    return { ok: false, problem: 'the results were validated by other advisory rules' };
  if (header.manifest_sha256 !== manifestSha256)
    return { ok: false, problem: 'the results belong to another feed than the one in use' };
  const body = bytes.subarray(newline + 1);
  const seal = Buffer.from(sealOf(key, header as ResultsHeader, body), 'hex');
  const claimed = Buffer.from(typeof header.seal === 'string' ? header.seal : '', 'hex');
  if (claimed.length !== seal.length || !timingSafeEqual(claimed, seal))
    return { ok: false, problem: 'the results file is damaged or not sealed by this appliance' };
  let entries: unknown;
  try {
    entries = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, problem: 'the results file is damaged (its body is not JSON)' };
  }
  if (!Array.isArray(entries) || entries.length !== header.entries)
    return { ok: false, problem: 'the results file is damaged (wrong number of entries)' };
  const byPath = new Map<string, StoredResult>();
  for (const entry of entries) {
    if (!isEntry(entry)) return { ok: false, problem: 'the results file is damaged (a malformed entry)' };
    byPath.set(entry[0], { size: entry[1], sha256: entry[2], advisory: entry[3] });
  }
  return { ok: true, results: { manifestSha256, byPath } };
}
