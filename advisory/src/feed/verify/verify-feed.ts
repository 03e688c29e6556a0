import { constants } from 'node:fs';
import { copyFile, link, lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { AcceptedState } from '../format/accepted-state.ts';
import { defaultLimits, type FeedLimits } from '../format/limits.ts';
import type { Rejection } from '../format/rejection.ts';
import { FeedRejectedError } from '../format/rejection.ts';
import { isAdvisoryFile } from '../format/rules.ts';
import type { Manifest } from '../format/schema.ts';
import { type FeedHead, type FeedSource, SourceError } from '../sources/source.ts';
import { type CheckOutcome, type CheckTask, checkFiles } from './check-files.ts';
import { CheckPool } from './check-pool.ts';
import type { ReusableResults } from './stored-results.ts';
import {
  checkManifest,
  checkUniqueIds,
  type ListedFile,
  type ManifestCheckOptions,
  type VerifiedAdvisory,
} from './verify-bytes.ts';

export interface VerifyOptions extends Omit<ManifestCheckOptions, 'limits' | 'now'> {
  now?: Date;
  limits?: Partial<FeedLimits>;
  /** Return the advisories (default) or only count them (a dry run needs no more). */
  keepAdvisories?: boolean;
  /**
   * Write every listed file, once verified, under this existing directory: the bytes
   * verified are the bytes kept (the appliance's cache copy). The checkers write their
   * own shares, so no file passes through this thread twice.
   */
  copyTo?: string;
  /** `auto`: check large feeds on parallel threads; `never`: on this thread. */
  parallel?: 'auto' | 'never';
  /**
   * Let this thread take a share of a large feed too, reading with blocking calls (a
   * command line tool, where nothing else waits; never the appliance, whose dashboard
   * must keep answering). Its YAML parser is warm from the manifest, the checkers' not.
   */
  blockingShare?: boolean;
  /**
   * Validated results of an earlier feed (feed/verify/stored-results.ts): a listed
   * advisory with the same path, size and SHA-256 as one of them is not parsed and
   * validated again: hashed as always, or with `bytesIn` not read at all but linked from
   * there. The caller vouches that they are this client's, and `bytesIn` that feed's copy.
   */
  reuse?: ReusableResults | null;
}

export interface VerifiedFeed {
  manifest: Manifest;
  manifestSha256: string;
  signedBy: string[];
  /** Signature blocks by keys not trusted here, by key number (hex): not checked. */
  notChecked: string[];
  unsigned: boolean;
  /** Empty when `keepAdvisories` was false. */
  advisories: VerifiedAdvisory[];
  advisoryCount: number;
  /** How many of the advisories reuse an earlier validated result (`reuse`). */
  reusedCount: number;
  /** Advisories per module. */
  counts: Record<string, number>;
  state: AcceptedState;
  /** The manifest and signature exactly as read (for a copy of the feed). */
  head: FeedHead;
}

export type VerifyResult =
  | { ok: true; feed: VerifiedFeed }
  | { ok: false; rejection: Rejection }
  | { ok: false; unreachable: string };

/** Files at which the parallel checkers pay for their start. */
const PARALLEL_FROM = 1000;
/** About what one listed file takes in a manifest: how its size tells the file count before parsing. */
const MANIFEST_BYTES_PER_FILE = 120;

function split<T>(items: readonly T[], parts: number): T[][] {
  const size = Math.ceil(items.length / parts);
  return Array.from({ length: parts }, (_, i) => items.slice(i * size, (i + 1) * size)).filter(
    (p) => p.length > 0,
  );
}

/**
 * Verifies a feed from a source, fail closed: the manifest and signature first (pure,
 * feed/verify/verify-bytes.ts), then every listed file. Returns the whole verified feed, one rejection
 * (the feed is bad), or why it could not be read (the source is unreachable); never a
 * partial feed.
 */
export async function verifyFeed(source: FeedSource, options: VerifyOptions): Promise<VerifyResult> {
  const limits = { ...defaultLimits, ...options.limits };
  try {
    const head = await source.readHead(limits);
    if (head === 'unchanged')
      throw new SourceError('the source answered "unchanged" to an unconditional read');
    return await verifyHead(source, head, { ...options, limits });
  } catch (error) {
    if (error instanceof FeedRejectedError) return { ok: false, rejection: error.rejection };
    if (error instanceof SourceError) return { ok: false, unreachable: error.message };
    throw error;
  }
}

/** The rest of a verification, once the manifest and signature bytes are in hand. */
export async function verifyHead(
  source: FeedSource,
  head: FeedHead,
  options: VerifyOptions & { limits: FeedLimits },
): Promise<VerifyResult> {
  const now = options.now ?? new Date();
  const keepAdvisories = options.keepAdvisories ?? true;
  const { limits } = options;
  let pool: CheckPool | null = null;
  try {
    // Started before the manifest is checked: the threads' start overlaps that work.
    // With unchanged files taken from the feed in use, how many files are read is known
    // only once the manifest is matched: then the threads are started (or not) after it.
    const skipReused = !!options.reuse?.bytesIn;
    const large =
      options.parallel !== 'never' &&
      !skipReused &&
      head.manifest.length > PARALLEL_FROM * MANIFEST_BYTES_PER_FILE;
    // With a share of its own, this thread is one of the checkers.
    if (large)
      pool = CheckPool.start(options.blockingShare ? Math.max(1, CheckPool.defaultSize() - 1) : undefined);
    const checked = checkManifest(head.manifest, head.signature, { ...options, limits, now });
    const reuse = options.reuse ? matchResults(checked.listed, options.reuse) : null;
    const context = {
      limits,
      keep: keepAdvisories,
      ...(options.copyTo ? { copyTo: options.copyTo } : {}),
      blockingShare: !!options.blockingShare,
    };
    let outcomes: CheckOutcome[];
    if (reuse && options.reuse?.bytesIn) {
      const toRead = checked.listed.filter((_, index) => reuse.flags[index] !== 1);
      if (options.parallel !== 'never' && toRead.length > PARALLEL_FROM)
        pool = CheckPool.start(options.blockingShare ? Math.max(1, CheckPool.defaultSize() - 1) : undefined);
      outcomes = await checkAll(source, toRead, { ...context, pool });
      if (options.copyTo && !outcomes.some((o) => !o.ok)) {
        // A reused file missing from the feed in use's copy (removed by hand) is read from
        // the source and validated after all.
        const missing = await linkReused(checked.listed, reuse, options.reuse.bytesIn, options.copyTo);
        if (missing.length > 0) outcomes.push(...(await checkAll(source, missing, { ...context, pool })));
      }
    } else {
      outcomes = await checkAll(source, checked.listed, {
        ...context,
        pool,
        ...(reuse ? { reused: reuse.flags } : {}),
      });
    }
    let advisories: VerifiedAdvisory[] = [];
    let ids: { id: string; file: string }[] = [];
    for (const outcome of outcomes) {
      if (!outcome.ok) {
        if ('rejection' in outcome) return { ok: false, rejection: outcome.rejection };
        return { ok: false, unreachable: outcome.sourceError };
      }
      for (const advisory of outcome.advisories) advisories.push(advisory);
      for (const id of outcome.ids) ids.push(id);
    }
    if (reuse) ({ advisories, ids } = mergeReused(checked.listed, reuse, advisories, ids, keepAdvisories));
    // Reused or not, ids are unique across the whole feed: a changed file may clash with a kept one.
    checkUniqueIds(ids);
    // Counted in a Map: a module name is input, never looked up among an object's own names.
    const perModule = new Map(Object.keys(checked.manifest.modules).map((m) => [m, 0]));
    for (const { file } of ids) {
      const module = file.split('/')[0] as string;
      // Every listed advisory lies in a module of the manifest (listedPathProblem).
      perModule.set(module, (perModule.get(module) as number) + 1);
    }
    const counts: Record<string, number> = Object.fromEntries(perModule);
    return {
      ok: true,
      feed: {
        manifest: checked.manifest,
        manifestSha256: checked.manifestSha256,
        signedBy: checked.signedBy,
        notChecked: checked.notChecked,
        unsigned: checked.unsigned,
        advisories,
        advisoryCount: ids.length,
        reusedCount: reuse?.count ?? 0,
        counts,
        state: checked.state,
        head,
      },
    };
  } catch (error) {
    if (error instanceof FeedRejectedError) return { ok: false, rejection: error.rejection };
    if (error instanceof SourceError) return { ok: false, unreachable: error.message };
    throw error;
  } finally {
    await pool?.close();
  }
}

interface Reuse {
  /** 1 for each listed file (manifest order) whose result is reused. */
  flags: Uint8Array;
  /** The reused advisory of each such file. */
  advisories: (VerifiedAdvisory | undefined)[];
  count: number;
}

/** Which listed advisories have a result with the same path, size and hash. */
function matchResults(listed: readonly ListedFile[], results: ReusableResults): Reuse {
  const flags = new Uint8Array(listed.length);
  const advisories: (VerifiedAdvisory | undefined)[] = new Array(listed.length);
  let count = 0;
  listed.forEach((file, index) => {
    if (file.module === null || !isAdvisoryFile(file.path)) return;
    const stored = results.byPath.get(file.path);
    if (!stored || stored.size !== file.size || stored.sha256 !== file.sha256.toLowerCase()) return;
    flags[index] = 1;
    advisories[index] = { module: file.module, file: file.path, advisory: stored.advisory };
    count++;
  });
  return { flags, advisories, count };
}

/** Links made at once: enough to keep libuv's threads busy, few enough to stay small. */
const LINK_BATCH = 64;

/**
 * Links each reused file from the feed in use's copy into the new copy (a hard link: both
 * copies are the appliance's own and never written in place; a copy where links cannot
 * be made). Asynchronous, on libuv's threads: tens of thousands of links would otherwise
 * hold the event loop (the dashboard) for a noticeable time. The old copy is local state:
 * a file there that is not a regular file of the listed size, or under a folder that is
 * not a plain folder (a link put there), is not carried over. Returns the files that are
 * not, in manifest order: those are read from the source and validated after all. (A file
 * changed in place at the same size is carried over: the next start, which hashes every
 * file of the cache, finds it.)
 */
async function linkReused(
  listed: readonly ListedFile[],
  reuse: Reuse,
  from: string,
  to: string,
): Promise<ListedFile[]> {
  const jobs = listed.flatMap((file, index) => (reuse.flags[index] === 1 ? [{ file, index }] : []));
  for (const folder of new Set(jobs.map(({ file }) => path.dirname(`${to}/${file.path}`))))
    await mkdir(folder, { recursive: true });
  const fromReal = await realpath(from);
  const plainFolders = new Map<string, Promise<boolean>>();
  const plainFolder = (folder: string) => {
    let known = plainFolders.get(folder);
    if (!known) {
      known = realpath(`${from}/${folder}`).then(
        (real) => real === `${fromReal}/${folder}`,
        () => false,
      );
      plainFolders.set(folder, known);
    }
    return known;
  };
  const gone: number[] = [];
  const carry = async ({ file, index }: { file: ListedFile; index: number }) => {
    const source = `${from}/${file.path}`;
    const target = `${to}/${file.path}`;
    const info = (await plainFolder(path.dirname(file.path)))
      ? await lstat(source).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return null;
          throw error;
        })
      : null;
    if (!info?.isFile() || info.size !== file.size) {
      gone.push(index);
      return;
    }
    await link(source, target).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EXDEV' && error.code !== 'EPERM' && error.code !== 'ENOTSUP') throw error;
      await copyFile(source, target, constants.COPYFILE_EXCL);
    });
  };
  for (let start = 0; start < jobs.length; start += LINK_BATCH) {
    // Every link of a batch settles before a failure is thrown: the caller then removes
    // the new copy, which must not have links still being made in it.
    const settled = await Promise.allSettled(jobs.slice(start, start + LINK_BATCH).map(carry));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
  gone.sort((a, b) => a - b);
  for (const index of gone) {
    reuse.flags[index] = 0;
    reuse.advisories[index] = undefined;
    reuse.count--;
  }
  return gone.map((index) => listed[index] as ListedFile);
}

/** The reused and the freshly validated advisories together, in manifest order. */
function mergeReused(
  listed: readonly ListedFile[],
  reuse: Reuse,
  fresh: readonly VerifiedAdvisory[],
  freshIds: readonly { id: string; file: string }[],
  keep: boolean,
): { advisories: VerifiedAdvisory[]; ids: { id: string; file: string }[] } {
  const freshByFile = new Map(fresh.map((a) => [a.file, a]));
  const idByFile = new Map(freshIds.map((i) => [i.file, i]));
  const advisories: VerifiedAdvisory[] = [];
  const ids: { id: string; file: string }[] = [];
  listed.forEach((file, index) => {
    const reused = reuse.advisories[index];
    if (reused) {
      ids.push({ id: reused.advisory.id, file: reused.file });
      if (keep) advisories.push(reused);
      return;
    }
    const id = idByFile.get(file.path);
    if (!id) return;
    ids.push(id);
    const advisory = freshByFile.get(file.path);
    if (advisory) advisories.push(advisory);
  });
  return { advisories, ids };
}

interface CheckContext {
  limits: FeedLimits;
  keep: boolean;
  copyTo?: string;
  reused?: Uint8Array;
  pool: CheckPool | null;
  blockingShare: boolean;
}

/**
 * Checks every listed file and returns the outcomes in manifest order, so the first
 * problem reported is the first in the manifest whichever thread found it.
 */
async function checkAll(
  source: FeedSource,
  listed: readonly ListedFile[],
  context: CheckContext,
): Promise<CheckOutcome[]> {
  // Parallel checkers read a local directory themselves (blocking reads, on their own
  // threads); otherwise this thread reads, asynchronously, so it never stalls.
  const readHere = source.directory === null || !context.pool;
  const contents = readHere ? await readAll(source, listed) : undefined;
  const task = (files: ListedFile[], offset: number): CheckTask => ({
    directory: source.directory,
    files,
    ...(contents ? { contents: contents.slice(offset, offset + files.length) } : {}),
    limits: context.limits,
    keep: context.keep,
    ...(context.copyTo ? { copyTo: context.copyTo } : {}),
    ...(context.reused ? { reused: context.reused.slice(offset, offset + files.length) } : {}),
  });
  if (!context.pool) return [checkFiles(task([...listed], 0))];
  const here = context.blockingShare && !readHere;
  const shares = split(listed, context.pool.size + (here ? 1 : 0));
  let offset = 0;
  const tasks = shares.map((share) => {
    const t = task(share, offset);
    offset += share.length;
    return t;
  });
  const mine = here ? tasks.pop() : undefined;
  const theirs = context.pool.run(tasks);
  // This thread's share runs while the checkers work on theirs.
  const own = mine ? [checkFiles(mine)] : [];
  return [...(await theirs), ...own];
}

/** Every listed file's bytes from the source (its own concurrency limits apply). */
async function readAll(source: FeedSource, listed: readonly ListedFile[]): Promise<(Buffer | null)[]> {
  return Promise.all(listed.map((file) => source.readFile(file)));
}
