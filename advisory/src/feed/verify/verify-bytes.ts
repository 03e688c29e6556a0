import { Compile } from 'typebox/compile';
import { sha256 } from '../../crypto/digest.ts';
import {
  type BlockOutcome,
  checkSignatures,
  keyId,
  type PublicKey,
  parseSignatures,
  SignifyFormatError,
} from '../../crypto/signify.ts';
import { parseYaml, YamlError } from '../../storage/yaml.ts';
import { parseInstant } from '../../time/instants.ts';
import { type AcceptedState, StateError } from '../format/accepted-state.ts';
import { checkAdvisory } from '../format/advisory-rules.ts';
import { compareFeedVersions, type FeedVersion, parseFeedVersion } from '../format/feed-version.ts';
import type { FeedLimits } from '../format/limits.ts';
import { FeedRejectedError, reject } from '../format/rejection.ts';
import {
  isAdvisoryFile,
  listedPathProblem,
  listedSizeProblem,
  MANIFEST_FILE,
  manifestDateProblems,
  moduleNameProblem,
  SIGNATURE_FILE,
} from '../format/rules.ts';
import { type Advisory, Manifest, SUPPORTED_SCHEMA_MAJOR } from '../format/schema.ts';
import { parseCanonicalManifest } from './canonical-manifest.ts';

/**
 * Feed verification as pure steps over bytes, fail closed: first the manifest (its
 * signature over the exact bytes, then its content, dates, freshness and rollback), then
 * each file it lists (size, hash, and for advisories parsing and validation). Readers
 * (feed/sources/) fetch the bytes; feed/verify/verify-feed.ts puts the two together.
 */

/** A file the manifest lists; `module` is null for files outside the modules. */
export interface ListedFile {
  module: string | null;
  path: string;
  sha256: string;
  size: number;
}

export interface VerifiedAdvisory {
  module: string;
  file: string;
  advisory: Advisory;
}

/**
 * How the signature is treated: `required` (the appliance: no signature, no feed),
 * `optional` (the operator's dry run before signing: a missing signature is reported,
 * a present one must verify), `ignored` (`sign` checking what it is about to sign).
 */
export type SignaturePolicy = 'required' | 'optional' | 'ignored';

export interface ManifestCheckOptions {
  trustedKeys: readonly PublicKey[];
  lastAccepted?: AcceptedState | null;
  now: Date;
  limits: FeedLimits;
  signature?: SignaturePolicy;
}

export interface CheckedManifest {
  manifest: Manifest;
  manifestSha256: string;
  /** Key numbers (hex) of the trusted keys whose signature verified; empty when unsigned. */
  signedBy: string[];
  /** Key numbers (hex) of the signature blocks by keys not trusted here: not checked. */
  notChecked: string[];
  /** No signature file (allowed only by the `optional` and `ignored` policies). */
  unsigned: boolean;
  listed: ListedFile[];
  /** The state to remember once this feed is accepted. */
  state: AcceptedState;
}

const manifestValidator = Compile(Manifest);

/** Hardened YAML parse of a feed file; a parse failure rejects the feed, naming file and line. */
function parseOrReject(
  bytes: Buffer,
  cap: number,
  reason: 'manifest-malformed' | 'advisory-malformed',
  file: string,
): unknown {
  try {
    return parseYaml(bytes.toString('utf8'), cap);
  } catch (error) {
    if (error instanceof YamlError)
      reject(reason, `${file}${error.line ? ` line ${error.line}` : ''}: ${error.message}`, file);
    throw error;
  }
}

/**
 * The signature file's blocks under the rule of crypto/signify.ts (checkSignatures): the
 * keys that signed and the blocks that could not be checked (no trusted key), or a
 * rejection naming the blocks that fail.
 */
function checkSignature(
  manifest: Buffer,
  signature: Buffer,
  trustedKeys: readonly PublicKey[],
): { signedBy: string[]; notChecked: string[] } {
  let blocks: ReturnType<typeof parseSignatures>;
  try {
    blocks = parseSignatures(signature.toString('utf8'));
  } catch (error) {
    if (error instanceof SignifyFormatError)
      reject('signature-malformed', `manifest.yaml.sig: ${error.message}`, SIGNATURE_FILE);
    throw error;
  }
  const check = checkSignatures(manifest, blocks, [...trustedKeys]);
  const keysOf = (outcome: BlockOutcome['outcome']) =>
    check.blocks.filter((b) => b.outcome === outcome).map((b) => b.keyId);
  if (check.ok) return { signedBy: check.signedBy, notChecked: keysOf('not-trusted') };
  if (check.problem === 'unknown-key') {
    const signers = blocks.map((b) => keyId(b.keynum)).join(', ');
    reject(
      'signature-unknown-key',
      `the feed is signed by key ${signers}, which is not among the trusted keys`,
      SIGNATURE_FILE,
    );
  }
  const verified = keysOf('verified');
  reject(
    'signature-invalid',
    `the manifest signature does not verify under trusted key ${keysOf('failed').join(', ')}${
      verified.length > 0
        ? `, although it does under ${verified.join(', ')}: the signature file holds a damaged block, or one made for another manifest; every block of a trusted key must verify`
        : ': the manifest or its signature was altered'
    }`,
    SIGNATURE_FILE,
  );
}

function checkRollback(incoming: Manifest, manifestSha256: string, last: AcceptedState): void {
  // The manifest's version was checked with its dates; a state is read strictly, but one
  // handed over in code may not have been.
  const remembered = parseFeedVersion(last.feed_version);
  if (!remembered)
    throw new StateError(`feed_version ${JSON.stringify(last.feed_version)} is not a feed version`);
  const order = compareFeedVersions(parseFeedVersion(incoming.feed_version) as FeedVersion, remembered);
  if (order < 0) {
    reject(
      'rollback',
      `feed ${incoming.feed_version} is older than the accepted ${last.feed_version}; a rollback is refused`,
    );
  }
  if (order === 0) {
    if (manifestSha256 === last.manifest_sha256.toLowerCase()) return;
    reject(
      'version-conflict',
      `feed ${incoming.feed_version} differs from the feed of the same version accepted before; this should never happen and is refused`,
    );
  }
  const incomingPublished = parseInstant(incoming.published_at);
  const lastPublished = parseInstant(last.published_at);
  if (incomingPublished && lastPublished && incomingPublished.getTime() < lastPublished.getTime()) {
    reject(
      'rollback',
      `feed ${incoming.feed_version} claims a newer version but was published before the accepted feed`,
    );
  }
}

/** The files a manifest lists, checked against the layout rules and the caps. */
function listedFiles(manifest: Manifest, limits: FeedLimits): ListedFile[] {
  const listed: ListedFile[] = [];
  for (const [module, { files }] of Object.entries(manifest.modules)) {
    const problem = moduleNameProblem(module);
    if (problem) reject('manifest-malformed', `manifest.yaml: ${problem}`, MANIFEST_FILE);
    for (const entry of files) listed.push({ module, ...entry, sha256: entry.sha256 });
  }
  for (const entry of manifest.files ?? []) listed.push({ module: null, ...entry });
  if (listed.length > limits.files)
    reject(
      'manifest-malformed',
      `manifest.yaml lists ${listed.length} files, above the cap of ${limits.files}`,
      MANIFEST_FILE,
    );
  const seen = new Set<string>();
  let total = 0;
  for (const file of listed) {
    const pathProblem = listedPathProblem(file.path, file.module);
    if (pathProblem) reject('unsafe-path', `the manifest lists ${pathProblem}`, file.path);
    if (file.path === MANIFEST_FILE || file.path === SIGNATURE_FILE)
      reject('unsafe-path', `the manifest lists ${file.path} as a file of the feed`, file.path);
    if (seen.has(file.path))
      reject('manifest-malformed', `manifest.yaml lists ${file.path} twice`, MANIFEST_FILE);
    seen.add(file.path);
    const sizeProblem = listedSizeProblem(file.path, file.size, limits);
    if (sizeProblem) reject('file-too-large', sizeProblem, file.path);
    total += file.size;
  }
  if (total > limits.totalBytes)
    reject(
      'file-too-large',
      `the listed files add up to ${total} bytes, above the ${limits.totalBytes}-byte cap`,
    );
  return listed;
}

/**
 * Checks the manifest and its signature, in this order: size caps, the signature over the
 * exact bytes (before anything is parsed), the schema major, the schema, the listed files
 * (names, sizes, caps), the dates (a real feed version equal to the UTC date of
 * publication, not published in the future), expiry, rollback. Throws FeedRejectedError.
 */
export function checkManifest(
  manifestBytes: Buffer,
  signatureBytes: Buffer | null,
  options: ManifestCheckOptions,
): CheckedManifest {
  const { limits, now } = options;
  const policy = options.signature ?? 'required';
  if (manifestBytes.length > limits.manifestBytes)
    reject(
      'manifest-too-large',
      `manifest.yaml is ${manifestBytes.length} bytes, above the ${limits.manifestBytes}-byte cap`,
      MANIFEST_FILE,
    );
  let signedBy: string[] = [];
  let notChecked: string[] = [];
  if (policy !== 'ignored') {
    if (signatureBytes === null) {
      if (policy === 'required')
        reject('signature-missing', 'manifest.yaml.sig is missing: the feed is not signed', SIGNATURE_FILE);
    } else {
      if (signatureBytes.length > limits.signatureBytes)
        reject(
          'signature-too-large',
          `manifest.yaml.sig is ${signatureBytes.length} bytes, above the ${limits.signatureBytes}-byte cap`,
          SIGNATURE_FILE,
        );
      ({ signedBy, notChecked } = checkSignature(manifestBytes, signatureBytes, options.trustedKeys));
    }
  }
  const manifestSha256 = sha256(manifestBytes);

  // The schema major decides whether the rest can be read at all.
  // The form `build` writes is read without the general YAML parser; anything else with it.
  const raw =
    parseCanonicalManifest(manifestBytes.toString('utf8')) ??
    parseOrReject(manifestBytes, limits.manifestBytes, 'manifest-malformed', MANIFEST_FILE);
  const declared =
    raw && typeof raw === 'object' ? (raw as Record<string, unknown>).schema_version : undefined;
  if (typeof declared === 'string' && /^\d+\.\d+$/.test(declared)) {
    const major = Number(declared.split('.')[0]);
    if (major !== SUPPORTED_SCHEMA_MAJOR) {
      reject(
        'schema-unsupported',
        major > SUPPORTED_SCHEMA_MAJOR
          ? `the feed uses schema ${declared}; this client reads schema ${SUPPORTED_SCHEMA_MAJOR}.x: update the appliance`
          : `the feed uses schema ${declared}, older than the ${SUPPORTED_SCHEMA_MAJOR}.x this client reads: rebuild it with a current advisory-feed`,
        MANIFEST_FILE,
      );
    }
  }
  if (!manifestValidator.Check(raw)) {
    const first = manifestValidator.Errors(raw)[0];
    reject(
      'manifest-malformed',
      `manifest.yaml: ${first?.instancePath || 'document'} ${first?.message ?? 'is invalid'}`,
      MANIFEST_FILE,
    );
  }
  const manifest = raw;
  const listed = listedFiles(manifest, limits);

  // What is wrong with the dates themselves comes first; only dates that hold can be
  // "in the future" (then the one problem left is that one).
  const [malformed] = manifestDateProblems(manifest);
  if (malformed) reject('manifest-malformed', `manifest.yaml: ${malformed}`, MANIFEST_FILE);
  const [future] = manifestDateProblems(manifest, now);
  if (future) reject('published-in-future', `manifest.yaml: ${future}`, MANIFEST_FILE);
  const expires = parseInstant(manifest.expires_at) as Date;
  if (expires.getTime() <= now.getTime()) {
    reject(
      'expired',
      `the feed expired at ${manifest.expires_at}; the mirror or feed host is not delivering fresh feeds`,
      MANIFEST_FILE,
    );
  }
  if (options.lastAccepted) checkRollback(manifest, manifestSha256, options.lastAccepted);

  return {
    manifest,
    manifestSha256,
    signedBy,
    notChecked,
    unsigned: signatureBytes === null,
    listed,
    state: {
      feed_version: manifest.feed_version,
      published_at: manifest.published_at,
      manifest_sha256: manifestSha256,
    },
  };
}

/**
 * Checks one listed file's bytes (null: missing) against its size and hash; an advisory
 * of a module is parsed and validated too, unless `validate` is false (its result is
 * reused from an earlier feed: the same path, size and hash, so the same bytes). Throws
 * FeedRejectedError.
 */
export function checkListedFile(
  file: ListedFile,
  data: Buffer | null,
  limits: FeedLimits,
  validate = true,
): VerifiedAdvisory | null {
  if (!data) reject('file-missing', `${file.path} is listed in the manifest but missing`, file.path);
  // Readers stop one byte past the listed size: a longer file's true size is not known.
  if (data.length > file.size)
    reject(
      'file-size-mismatch',
      `${file.path} is larger than the ${file.size} bytes the manifest says`,
      file.path,
    );
  if (data.length < file.size)
    reject(
      'file-size-mismatch',
      `${file.path} is ${data.length} bytes, the manifest says ${file.size}`,
      file.path,
    );
  if (sha256(data) !== file.sha256.toLowerCase())
    reject('file-hash-mismatch', `${file.path} does not match its SHA-256 in the manifest`, file.path);
  // Verified files that are not advisories of a module are known-good but unused.
  if (!validate || file.module === null || !isAdvisoryFile(file.path)) return null;
  const document = parseOrReject(data, limits.fileBytes, 'advisory-malformed', file.path);
  const [problem] = checkAdvisory(document);
  if (problem) reject('advisory-malformed', `${file.path}: ${problem.message}`, file.path);
  return { module: file.module, file: file.path, advisory: document as Advisory };
}

/** Advisory ids are unique across the feed; the first clash rejects it. */
export function checkUniqueIds(advisories: readonly { id: string; file: string }[]): void {
  const ids = new Map<string, string>();
  for (const { id, file } of advisories) {
    const clash = ids.get(id);
    if (clash) reject('advisory-malformed', `${file}: advisory id ${id} is also used by ${clash}`, file);
    ids.set(id, file);
  }
}

export { FeedRejectedError };
