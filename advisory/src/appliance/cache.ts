import { randomBytes } from 'node:crypto';
import {
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  rmdir,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../feed/format/rules.ts';
import { decodeResults, encodeResults, type ResultsRead } from '../feed/verify/stored-results.ts';
import type { VerifiedFeed } from '../feed/verify/verify-feed.ts';
import { createDurably, writeAtomic } from '../storage/durable-files.ts';

/**
 * The validated results of the cached feed (feed/verify/stored-results.ts), inside its
 * copy: written before the copy is named by the link, so the feed and its results switch
 * together in one rename. A feed can never list this name (listed path segments never
 * start with "."), and `advisory-feed verify` reads only the files a manifest lists.
 */
export const RESULTS_FILE = '.verified-results';
/** Far above any real feed's results (about 500 bytes an advisory): a larger file is not read. */
const RESULTS_MAX_BYTES = 256 * 1024 * 1024;
/** The key that seals the stored results, in the state directory (not beside the cache). */
export const RESULTS_KEY_FILE = 'results.key';

/**
 * The appliance's key for sealing stored results: made at the first use (32 random bytes,
 * readable by the appliance only) unless `create` is false; null when it cannot be had,
 * and then no results are stored or reused.
 */
export async function resultsKey(stateDir: string, create: boolean): Promise<Buffer | null> {
  const file = path.join(stateDir, RESULTS_KEY_FILE);
  const read = async () => {
    const text = (await readFile(file, 'utf8')).trim();
    return /^[0-9a-f]{64}$/.test(text) ? Buffer.from(text, 'hex') : null;
  };
  try {
    return await read();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create) return null;
  }
  try {
    await createDurably(file, `${randomBytes(32).toString('hex')}\n`, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return null;
  }
  return read().catch(() => null);
}

/**
 * ADVISORY_FEED_CACHE: the last accepted feed, exactly as it was pulled, as a feed
 * directory that `advisory-feed verify` accepts as it stands. The path is a symbolic
 * link to a complete copy beside it (`.<cache>.copy-<random>`); a new copy is written
 * whole, then the link is replaced in one rename. A process killed at any moment leaves
 * the link naming the old copy or the new one, never a mix; half-written copies are
 * cleared at the next start. Only names of exactly that making are ever removed: the
 * cache may share its folder with anything (a key `feed.pub` beside a cache `feed`).
 * A path the appliance did not make (a directory with anything in it, a file, a link to
 * elsewhere, the state directory or one of its parents) is refused before anything is
 * written (`check`): making the link there would first have to move it out of the way.
 */
export class FeedCache {
  constructor(readonly path: string) {}

  private get parent(): string {
    return path.dirname(this.path);
  }

  /** A name beside the cache for a copy, or a link being made. */
  private sibling(kind: 'copy' | 'link'): string {
    return path.join(this.parent, `.${path.basename(this.path)}.${kind}-${randomBytes(6).toString('hex')}`);
  }

  private isSibling(name: string): boolean {
    const base = path.basename(this.path);
    return name.startsWith(`.${base}.`) && /^(copy|link)-[0-9a-f]{12}$/.test(name.slice(base.length + 2));
  }

  /**
   * Why the cache path cannot be the cache, or null when it can: it does not exist, is an
   * empty directory (made by a service manager), or is a link this cache made.
   */
  async refusal(stateDir: string): Promise<string | null> {
    const inside = path.relative(this.path, path.resolve(stateDir));
    if (inside === '' || (!inside.startsWith('..') && !path.isAbsolute(inside))) {
      return `${this.path} is the state directory or holds it`;
    }
    const info = await lstat(this.path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (info === null) return null;
    if (info.isSymbolicLink()) {
      const target = await readlink(this.path);
      if (path.dirname(path.resolve(this.parent, target)) === this.parent && this.isSibling(target))
        return null;
      return `${this.path} is a symbolic link the appliance did not make (to ${target})`;
    }
    if (!info.isDirectory()) return `${this.path} exists and is not a directory`;
    const names = await readdir(this.path);
    if (names.length > 0) {
      return `${this.path} is a directory the appliance did not make (${names.length} entries in it): name a path that does not exist yet (to start from a feed on disk, set ADVISORY_FEED_URL to its directory)`;
    }
    return null;
  }

  /** The copy the link names, or null when there is none. */
  async current(): Promise<string | null> {
    try {
      const info = await lstat(this.path);
      if (info.isSymbolicLink()) return path.resolve(this.parent, await readlink(this.path));
      return null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /**
   * Clears what a kill may have left: copies and links no longer named by the cache path.
   * A cache path that is an empty directory (made by a service manager) is removed, so the
   * link can take its place.
   */
  async recover(): Promise<void> {
    await mkdir(this.parent, { recursive: true });
    const info = await lstat(this.path).catch(() => null);
    if (info?.isDirectory() && (await readdir(this.path)).length === 0) await rmdir(this.path);
    const keep = await this.current();
    for (const name of await readdir(this.parent)) {
      if (!this.isSibling(name)) continue;
      const full = path.join(this.parent, name);
      if (full !== keep) await rm(full, { recursive: true, force: true });
    }
  }

  /** A new, empty copy beside the cache, for a verification to write the feed's files into. */
  async prepare(): Promise<string> {
    await mkdir(this.parent, { recursive: true });
    const copy = this.sibling('copy');
    await mkdir(copy, { mode: 0o755 });
    return copy;
  }

  /** Removes a copy a refused verification left half-filled. */
  async discard(copy: string): Promise<void> {
    await rm(copy, { recursive: true, force: true });
  }

  /**
   * The stored results of the cached feed, when they are this client's and belong to the
   * feed whose manifest has `manifestSha256`; otherwise why not (the caller then
   * verifies every file). Never throws: damage here costs time, not the feed.
   */
  async results(manifestSha256: string, key: Buffer): Promise<ResultsRead> {
    const file = path.join(this.path, RESULTS_FILE);
    try {
      const info = await lstat(file);
      if (!info.isFile()) return { ok: false, problem: 'the results file is not a regular file' };
      if (info.size > RESULTS_MAX_BYTES)
        return { ok: false, problem: `the results file is larger than ${RESULTS_MAX_BYTES} bytes` };
      return decodeResults(await readFile(file), manifestSha256, key);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { ok: false, problem: 'no results are stored with the cache' };
      return { ok: false, problem: `the results file cannot be read: ${(error as Error).message}` };
    }
  }

  /**
   * Completes a copy the verification filled (its validated results, then manifest and
   * signature last: a copy without them is no feed at all), then points the cache at it
   * in one rename. Returns why the results could not be stored, or null: without them
   * the next verification checks every file, which is no reason to keep the old feed.
   */
  async commit(copy: string, feed: VerifiedFeed, key: Buffer | null): Promise<string | null> {
    let resultsProblem: string | null = key ? null : 'no key to seal them with';
    // Written whole and synced: a results file cut short by a power loss fails its seal.
    try {
      if (key) await writeAtomic(path.join(copy, RESULTS_FILE), encodeResults(feed, key));
    } catch (error) {
      resultsProblem = (error as Error).message;
    }
    if (feed.head.signature) await writeFile(path.join(copy, SIGNATURE_FILE), feed.head.signature);
    await writeFile(path.join(copy, MANIFEST_FILE), feed.head.manifest);
    const link = this.sibling('link');
    await symlink(path.basename(copy), link);
    await rename(link, this.path);
    await this.recover();
    return resultsProblem;
  }
}
