import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import type { FeedLimits } from '../format/limits.ts';
import { FeedRejectedError, reject } from '../format/rejection.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../format/rules.ts';
import type { ListedFile } from '../verify/verify-bytes.ts';
import { type FeedHead, type FeedSource, SourceError } from './source.ts';

// No following a link at the last component; no blocking on a FIFO planted in the feed
// directory (its fstat then shows it is not a regular file).
export const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Reads at most `cap + 1` bytes of a regular file without following a link at its last
 * component; null when it does not exist. A link or anything but a regular file rejects
 * the feed; a file that cannot be read (permissions) is a SourceError.
 */
export async function readCapped(file: string, cap: number, display: string): Promise<Buffer | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    if (codeOf(error) === 'ELOOP')
      reject('unsafe-path', `${display} is a symbolic link; feed files must be regular files`, display);
    if (codeOf(error) === 'ENXIO' || codeOf(error) === 'EISDIR')
      reject('unsafe-path', `${display} is not a regular file`, display);
    throw new SourceError(`${display}: ${(error as Error).message}`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) reject('unsafe-path', `${display} is not a regular file`, display);
    const want = Math.min(stat.size, cap + 1);
    const buffer = Buffer.allocUnsafe(want);
    let offset = 0;
    while (offset < want) {
      const { bytesRead } = await handle.read(buffer, offset, want - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return buffer.subarray(0, offset);
  } catch (error) {
    if (error instanceof FeedRejectedError) throw error;
    throw new SourceError(`${display}: ${(error as Error).message}`);
  } finally {
    await handle.close();
  }
}

/** A feed in a local directory (a mirror, the cache, the publisher's working copy). */
export class DirectorySource implements FeedSource {
  readonly directory: string;
  readonly location: string;
  /** Folders of listed paths already checked not to be links. */
  private readonly folders = new Map<string, Promise<void>>();
  /** Files open at once: a large feed must not run out of file descriptors. */
  private readonly queue = new PQueue({ concurrency: 64 });

  constructor(directory: string) {
    this.directory = path.resolve(directory);
    this.location = this.directory;
  }

  async readHead(limits: FeedLimits): Promise<FeedHead> {
    const manifest = await readCapped(
      path.join(this.directory, MANIFEST_FILE),
      limits.manifestBytes,
      MANIFEST_FILE,
    );
    if (!manifest) {
      let stat: Stats | null = null;
      try {
        stat = await lstat(this.directory);
      } catch {
        stat = null;
      }
      if (!stat?.isDirectory() && !stat?.isSymbolicLink())
        throw new SourceError(`${this.directory}: no such feed directory`);
      reject('manifest-missing', 'manifest.yaml is missing', MANIFEST_FILE);
    }
    const signature = await readCapped(
      path.join(this.directory, SIGNATURE_FILE),
      limits.signatureBytes,
      SIGNATURE_FILE,
    );
    return { manifest, signature, validators: {} };
  }

  readFile(file: ListedFile): Promise<Buffer | null> {
    return this.queue.add(() => this.read(file), { throwOnTimeout: true });
  }

  private async read(file: ListedFile): Promise<Buffer | null> {
    const segments = file.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      let check = this.folders.get(folder);
      if (!check) {
        check = this.checkFolder(folder, file.path);
        this.folders.set(folder, check);
      }
      const missing = await check.then(
        () => false,
        (error: unknown) => {
          if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return true;
          if (error instanceof FeedRejectedError) throw error;
          throw new SourceError(`${folder}: ${(error as Error).message}`);
        },
      );
      if (missing) return null;
    }
    return readCapped(path.join(this.directory, file.path), file.size, file.path);
  }

  private async checkFolder(folder: string, listed: string): Promise<void> {
    const stat = await lstat(path.join(this.directory, folder));
    if (stat.isSymbolicLink())
      reject('unsafe-path', `${folder} is a symbolic link; links are refused`, listed);
    if (!stat.isDirectory()) reject('unsafe-path', `${folder} is not a directory`, listed);
  }
}

/**
 * The same read, synchronous: for the parallel checkers (feed/verify/check-worker.ts), which run
 * on threads of their own, where a blocking read blocks nobody and costs less.
 */
export function readCappedSync(file: string, cap: number, display: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return null;
    if (codeOf(error) === 'ELOOP')
      reject('unsafe-path', `${display} is a symbolic link; feed files must be regular files`, display);
    if (codeOf(error) === 'ENXIO' || codeOf(error) === 'EISDIR')
      reject('unsafe-path', `${display} is not a regular file`, display);
    throw new SourceError(`${display}: ${(error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) reject('unsafe-path', `${display} is not a regular file`, display);
    const want = Math.min(stat.size, cap + 1);
    const buffer = Buffer.allocUnsafe(want);
    let offset = 0;
    while (offset < want) {
      const read = readSync(fd, buffer, offset, want - offset, offset);
      if (read === 0) break;
      offset += read;
    }
    return buffer.subarray(0, offset);
  } catch (error) {
    if (error instanceof FeedRejectedError) throw error;
    throw new SourceError(`${display}: ${(error as Error).message}`);
  } finally {
    closeSync(fd);
  }
}

/** The folders of a listed path, checked not to be links (sync; `checked` remembers them). */
export function checkFoldersSync(directory: string, listed: string, checked: Set<string>): boolean {
  const segments = listed.split('/');
  for (let i = 1; i < segments.length; i++) {
    const folder = segments.slice(0, i).join('/');
    if (checked.has(folder)) continue;
    let stat: Stats;
    try {
      stat = lstatSync(path.join(directory, folder));
    } catch (error) {
      if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return false;
      throw new SourceError(`${folder}: ${(error as Error).message}`);
    }
    if (stat.isSymbolicLink())
      reject('unsafe-path', `${folder} is a symbolic link; links are refused`, listed);
    if (!stat.isDirectory()) reject('unsafe-path', `${folder} is not a directory`, listed);
    checked.add(folder);
  }
  return true;
}
