import type { AcceptedState } from '../format/accepted-state.ts';
import { defaultLimits, type FeedLimits } from '../format/limits.ts';
import type { Rejection } from '../format/rejection.ts';
import { FeedRejectedError } from '../format/rejection.ts';
import type { Manifest } from '../format/schema.ts';
import { type FeedHead, type FeedSource, SourceError } from '../sources/source.ts';
import { type CheckOutcome, type CheckTask, checkFiles } from './check-files.ts';
import { CheckPool } from './check-pool.ts';
import {
  type CheckedManifest,
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
}

export interface VerifiedFeed {
  manifest: Manifest;
  manifestSha256: string;
  signedBy: string[];
  unsigned: boolean;
  /** Empty when `keepAdvisories` was false. */
  advisories: VerifiedAdvisory[];
  advisoryCount: number;
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
    const large =
      options.parallel !== 'never' && head.manifest.length > PARALLEL_FROM * MANIFEST_BYTES_PER_FILE;
    // With a share of its own, this thread is one of the checkers.
    if (large)
      pool = CheckPool.start(options.blockingShare ? Math.max(1, CheckPool.defaultSize() - 1) : undefined);
    const checked = checkManifest(head.manifest, head.signature, { ...options, limits, now });
    const outcomes = await checkAll(source, checked, {
      limits,
      keep: keepAdvisories,
      pool,
      ...(options.copyTo ? { copyTo: options.copyTo } : {}),
      blockingShare: !!options.blockingShare,
    });
    const advisories: VerifiedAdvisory[] = [];
    const ids: { id: string; file: string }[] = [];
    for (const outcome of outcomes) {
      if (!outcome.ok) {
        if ('rejection' in outcome) return { ok: false, rejection: outcome.rejection };
        return { ok: false, unreachable: outcome.sourceError };
      }
      for (const advisory of outcome.advisories) advisories.push(advisory);
      for (const id of outcome.ids) ids.push(id);
    }
    checkUniqueIds(ids);
    const counts: Record<string, number> = Object.fromEntries(
      Object.keys(checked.manifest.modules).map((m) => [m, 0]),
    );
    for (const { file } of ids) {
      const module = file.split('/')[0] as string;
      counts[module] = (counts[module] ?? 0) + 1;
    }
    return {
      ok: true,
      feed: {
        manifest: checked.manifest,
        manifestSha256: checked.manifestSha256,
        signedBy: checked.signedBy,
        unsigned: checked.unsigned,
        advisories,
        advisoryCount: ids.length,
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

interface CheckContext {
  limits: FeedLimits;
  keep: boolean;
  copyTo?: string;
  pool: CheckPool | null;
  blockingShare: boolean;
}

/**
 * Checks every listed file and returns the outcomes in manifest order, so the first
 * problem reported is the first in the manifest whichever thread found it.
 */
async function checkAll(
  source: FeedSource,
  checked: CheckedManifest,
  context: CheckContext,
): Promise<CheckOutcome[]> {
  const { listed } = checked;
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
  });
  if (!context.pool) return [checkFiles(task(listed, 0))];
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
