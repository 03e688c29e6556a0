import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readlink, rename, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../feed/format/rules.ts';
import type { VerifiedFeed } from '../feed/verify/verify-feed.ts';

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
   * Completes a copy the verification filled (manifest and signature last: a copy without
   * them is no feed at all), then points the cache at it in one rename.
   */
  async commit(copy: string, feed: VerifiedFeed): Promise<void> {
    if (feed.head.signature) await writeFile(path.join(copy, SIGNATURE_FILE), feed.head.signature);
    await writeFile(path.join(copy, MANIFEST_FILE), feed.head.manifest);
    const link = this.sibling('link');
    await symlink(path.basename(copy), link);
    await rename(link, this.path);
    await this.recover();
  }
}
