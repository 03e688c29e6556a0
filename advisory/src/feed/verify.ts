import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { Compile } from 'typebox/compile';
import { type AdvisoryProblem, checkAdvisory } from './advisory-check.ts';
import { isAdvisoryFile, isSafeRelativePath, MANIFEST_FILE, SIGNATURE_FILE, sha256 } from './files.ts';
import { defaultLimits, type FeedLimits } from './limits.ts';
import { FeedRejectedError, type Rejection, reject } from './rejection.ts';
import { type Advisory, Manifest, type ManifestFile, SUPPORTED_SCHEMA_MAJOR } from './schema.ts';
import { checkSignatures, keyId, type PublicKey, parseSignatures, SignifyFormatError } from './signify.ts';
import { parseInstant } from './versions.ts';
import { parseYaml, YamlError } from './yaml.ts';

/** What the client remembers of the last feed it accepted (rollback and freeze protection). */
export interface AcceptedState {
  feed_version: string;
  published_at: string;
  manifest_sha256: string;
}

export interface VerifiedAdvisory {
  module: string;
  file: string;
  advisory: Advisory;
}

export interface VerifiedFeed {
  manifest: Manifest;
  manifestSha256: string;
  /** Key numbers (hex) of the trusted keys whose signature verified. */
  signedBy: string[];
  advisories: VerifiedAdvisory[];
  /** The state to remember once this feed is accepted. */
  state: AcceptedState;
}

export type VerifyResult = { ok: true; feed: VerifiedFeed } | { ok: false; rejection: Rejection };

export interface VerifyOptions {
  feedDir: string;
  trustedKeys: PublicKey[];
  lastAccepted?: AcceptedState | null;
  now?: Date;
  limits?: Partial<FeedLimits>;
}

const manifestValidator = Compile(Manifest);
// No following a link at the last component; no blocking on a FIFO planted in the feed
// directory (its fstat then shows it is not a regular file).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Reads a file of at most `cap` bytes without following a link at its last component,
 * and refuses anything that is not a regular file. `null` when it does not exist.
 */
function readCapped(
  file: string,
  cap: number,
  onTooLarge: (size: number) => never,
  display: string,
): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP')
      reject('unsafe-path', `${display} is a symbolic link; feed files must be regular files`, display);
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) reject('unsafe-path', `${display} is not a regular file`, display);
    const size = stat.size;
    if (size > cap) onTooLarge(size);
    const buffer = Buffer.allocUnsafe(size);
    let offset = 0;
    while (offset < size) {
      const read = readSync(fd, buffer, offset, size - offset, offset);
      if (read === 0) break;
      offset += read;
    }
    return buffer.subarray(0, offset);
  } finally {
    closeSync(fd);
  }
}

/** Refuses a listed path that is unsafe as text or passes through a link or non-directory. */
function checkPath(feedDir: string, listed: string, checkedDirs: Set<string>): string {
  if (!isSafeRelativePath(listed)) {
    reject(
      'unsafe-path',
      `the manifest lists "${listed}": absolute paths, ".." and unusual characters are refused`,
      listed,
    );
  }
  const segments = listed.split('/');
  let relative = '';
  for (const segment of segments.slice(0, -1)) {
    relative = relative ? `${relative}/${segment}` : segment;
    if (checkedDirs.has(relative)) continue;
    let isDirectory = false;
    try {
      const stat = lstatSync(path.join(feedDir, relative));
      if (stat.isSymbolicLink())
        reject('unsafe-path', `${relative} is a symbolic link; links are refused`, listed);
      isDirectory = stat.isDirectory();
    } catch (error) {
      if (error instanceof FeedRejectedError) throw error;
      reject('file-missing', `${listed} is listed in the manifest but missing`, listed);
    }
    if (!isDirectory) reject('unsafe-path', `${relative} is not a directory`, listed);
    checkedDirs.add(relative);
  }
  return path.join(feedDir, listed);
}

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

function describeProblem(file: string, problem: AdvisoryProblem): string {
  return `${file}: ${problem.message}`;
}

function compareVersions(incoming: Manifest, manifestSha256: string, last: AcceptedState): void {
  if (incoming.feed_version < last.feed_version) {
    reject(
      'rollback',
      `feed ${incoming.feed_version} is older than the accepted ${last.feed_version}; a rollback is refused`,
    );
  }
  if (incoming.feed_version === last.feed_version) {
    if (manifestSha256 === last.manifest_sha256) return;
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

/**
 * Verifies a feed directory, fail closed, in this order: size caps, the signature over
 * the exact manifest bytes, manifest parsing and schema major, each listed file (path
 * safety, size, SHA-256), each advisory (parse and validate), expiry, rollback. Returns
 * the whole verified feed or one rejection; never a partial feed.
 */
export function verifyFeed(options: VerifyOptions): VerifyResult {
  try {
    return { ok: true, feed: verifyOrThrow(options) };
  } catch (error) {
    if (error instanceof FeedRejectedError) return { ok: false, rejection: error.rejection };
    throw error;
  }
}

function verifyOrThrow(options: VerifyOptions): VerifiedFeed {
  const limits = { ...defaultLimits, ...options.limits };
  const now = options.now ?? new Date();
  const feedDir = path.resolve(options.feedDir);

  // 1. Size caps on what is read before the signature is known to be good.
  const manifestBytes = readCapped(
    path.join(feedDir, MANIFEST_FILE),
    limits.manifestBytes,
    (size) =>
      reject(
        'manifest-too-large',
        `manifest.yaml is ${size} bytes, above the ${limits.manifestBytes}-byte cap`,
        MANIFEST_FILE,
      ),
    MANIFEST_FILE,
  );
  if (!manifestBytes) reject('manifest-missing', 'manifest.yaml is missing', MANIFEST_FILE);
  const signatureBytes = readCapped(
    path.join(feedDir, SIGNATURE_FILE),
    limits.signatureBytes,
    (size) =>
      reject(
        'signature-too-large',
        `manifest.yaml.sig is ${size} bytes, above the ${limits.signatureBytes}-byte cap`,
        SIGNATURE_FILE,
      ),
    SIGNATURE_FILE,
  );
  if (!signatureBytes)
    reject('signature-missing', 'manifest.yaml.sig is missing: the feed is not signed', SIGNATURE_FILE);

  // 2. The signature, over the exact bytes, before any parsing.
  let blocks: ReturnType<typeof parseSignatures>;
  try {
    blocks = parseSignatures(signatureBytes.toString('utf8'));
  } catch (error) {
    if (error instanceof SignifyFormatError)
      reject('signature-malformed', `manifest.yaml.sig: ${error.message}`, SIGNATURE_FILE);
    throw error;
  }
  const check = checkSignatures(manifestBytes, blocks, options.trustedKeys);
  if (!check.ok) {
    if (check.problem === 'unknown-key') {
      const signers = blocks.map((b) => keyId(b.keynum)).join(', ');
      reject(
        'signature-unknown-key',
        `the feed is signed by key ${signers}, which is not among the trusted keys`,
        SIGNATURE_FILE,
      );
    }
    reject(
      'signature-invalid',
      'the manifest signature does not verify: the manifest or its signature was altered',
      SIGNATURE_FILE,
    );
  }
  const manifestSha256 = sha256(manifestBytes);

  // 3. Parse the manifest; its schema major decides whether we can read the rest.
  const raw = parseOrReject(manifestBytes, limits.manifestBytes, 'manifest-malformed', MANIFEST_FILE);
  const declared =
    raw && typeof raw === 'object' ? (raw as Record<string, unknown>).schema_version : undefined;
  const major = typeof declared === 'string' ? Number(declared.split('.')[0]) : Number.NaN;
  if (typeof declared === 'string' && /^\d+\.\d+$/.test(declared) && major !== SUPPORTED_SCHEMA_MAJOR) {
    reject(
      'schema-unsupported',
      `the feed uses schema ${declared}; this client reads schema ${SUPPORTED_SCHEMA_MAJOR}.x: update the appliance`,
      MANIFEST_FILE,
    );
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
  const publishedAt = parseInstant(manifest.published_at);
  const expiresAt = parseInstant(manifest.expires_at);
  if (!publishedAt || !expiresAt)
    reject(
      'manifest-malformed',
      'manifest.yaml: published_at and expires_at must be RFC 3339 times',
      MANIFEST_FILE,
    );

  // 4. Every listed file: path safety, size, hash; advisories parsed and validated.
  const listed: { module: string | null; entry: ManifestFile }[] = [];
  for (const [module, { files }] of Object.entries(manifest.modules)) {
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(module))
      reject('manifest-malformed', `manifest.yaml: bad module name "${module}"`, MANIFEST_FILE);
    for (const entry of files) listed.push({ module, entry });
  }
  for (const entry of manifest.files ?? []) listed.push({ module: null, entry });
  if (listed.length > limits.files)
    reject(
      'manifest-malformed',
      `manifest.yaml lists ${listed.length} files, above the cap of ${limits.files}`,
      MANIFEST_FILE,
    );
  const seen = new Set<string>();
  let total = 0;
  for (const { entry } of listed) {
    if (seen.has(entry.path))
      reject('manifest-malformed', `manifest.yaml lists ${entry.path} twice`, MANIFEST_FILE);
    seen.add(entry.path);
    if (entry.size > limits.fileBytes)
      reject(
        'file-too-large',
        `${entry.path} is listed at ${entry.size} bytes, above the ${limits.fileBytes}-byte cap`,
        entry.path,
      );
    total += entry.size;
  }
  if (total > limits.totalBytes)
    reject(
      'file-too-large',
      `the listed files add up to ${total} bytes, above the ${limits.totalBytes}-byte cap`,
    );

  const checkedDirs = new Set<string>();
  const advisories: VerifiedAdvisory[] = [];
  const ids = new Map<string, string>();
  for (const { module, entry } of listed) {
    const file = checkPath(feedDir, entry.path, checkedDirs);
    // Read at most one byte more than listed: a longer file is caught without reading it all.
    const data = readCapped(
      file,
      entry.size,
      (size) =>
        reject(
          'file-size-mismatch',
          `${entry.path} is ${size} bytes, the manifest says ${entry.size}`,
          entry.path,
        ),
      entry.path,
    );
    if (!data) reject('file-missing', `${entry.path} is listed in the manifest but missing`, entry.path);
    if (data.length !== entry.size)
      reject(
        'file-size-mismatch',
        `${entry.path} is ${data.length} bytes, the manifest says ${entry.size}`,
        entry.path,
      );
    if (sha256(data) !== entry.sha256)
      reject('file-hash-mismatch', `${entry.path} does not match its SHA-256 in the manifest`, entry.path);
    // Verified files that are not advisories of a module are known-good but unused.
    if (module === null || !isAdvisoryFile(entry.path)) continue;

    const document = parseOrReject(data, limits.fileBytes, 'advisory-malformed', entry.path);
    const problems = checkAdvisory(document);
    const first = problems[0];
    if (first) reject('advisory-malformed', describeProblem(entry.path, first), entry.path);
    const advisory = document as Advisory;
    const clash = ids.get(advisory.id);
    if (clash)
      reject(
        'advisory-malformed',
        `${entry.path}: advisory id ${advisory.id} is also used by ${clash}`,
        entry.path,
      );
    ids.set(advisory.id, entry.path);
    advisories.push({ module, file: entry.path, advisory });
  }

  // 5. Freshness: an expired manifest is refused (a frozen mirror must not look current).
  if (expiresAt.getTime() <= now.getTime()) {
    reject(
      'expired',
      `the feed expired at ${manifest.expires_at}; the mirror or feed host is not delivering fresh feeds`,
      MANIFEST_FILE,
    );
  }

  // 6. Rollback against what was accepted before.
  if (options.lastAccepted) compareVersions(manifest, manifestSha256, options.lastAccepted);

  return {
    manifest,
    manifestSha256,
    signedBy: check.signedBy,
    advisories,
    state: {
      feed_version: manifest.feed_version,
      published_at: manifest.published_at,
      manifest_sha256: manifestSha256,
    },
  };
}
