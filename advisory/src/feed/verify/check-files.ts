import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FeedLimits } from '../format/limits.ts';
import { FeedRejectedError, type Rejection } from '../format/rejection.ts';
import { checkFoldersSync, readCappedSync } from '../sources/directory.ts';
import { SourceError } from '../sources/source.ts';
import { checkListedFile, type ListedFile, type VerifiedAdvisory } from './verify-bytes.ts';

/**
 * One share of a feed's files checked in one go (on a worker thread, or inline): read
 * from the directory when no bytes are given, then size, hash, parse and validate.
 */
export interface CheckTask {
  directory: string | null;
  files: ListedFile[];
  /** The bytes of `files`, in order, when they were fetched already (HTTP). */
  contents?: (Buffer | null)[];
  limits: FeedLimits;
  /** Return the advisories themselves, or only their ids (enough for a dry run). */
  keep: boolean;
  /** Write each file, once verified, under this directory (the appliance's new cache copy). */
  copyTo?: string;
  /**
   * 1 for each file of `files` whose validated result is reused (feed/verify/stored-results.ts):
   * its size and hash are checked, its parsing and validation skipped.
   */
  reused?: Uint8Array;
}

export type CheckOutcome =
  | { ok: true; advisories: VerifiedAdvisory[]; ids: { id: string; file: string }[] }
  | { ok: false; rejection: Rejection; index: number }
  | { ok: false; sourceError: string; index: number };

export function checkFiles(task: CheckTask): CheckOutcome {
  const advisories: VerifiedAdvisory[] = [];
  const ids: { id: string; file: string }[] = [];
  const folders = new Set<string>();
  for (let index = 0; index < task.files.length; index++) {
    const file = task.files[index] as ListedFile;
    try {
      let data: Buffer | null;
      if (task.contents) {
        // Bytes posted to a worker thread arrive as plain Uint8Arrays: view them as Buffers again.
        const bytes = task.contents[index] ?? null;
        data = bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      } else if (task.directory === null)
        throw new SourceError('no bytes and no directory to read them from');
      else
        data = checkFoldersSync(task.directory, file.path, folders)
          ? readCappedSync(`${task.directory}/${file.path}`, file.size, file.path)
          : null;
      const advisory = checkListedFile(file, data, task.limits, task.reused?.[index] !== 1);
      if (task.copyTo && data) {
        const target = `${task.copyTo}/${file.path}`;
        const folder = path.dirname(target);
        if (!folders.has(`copy:${folder}`)) {
          mkdirSync(folder, { recursive: true });
          folders.add(`copy:${folder}`);
        }
        // The copy directory is new and this process's own: no O_EXCL needed, and on some
        // file systems it makes creating thousands of files several times slower.
        writeFileSync(target, data);
      }
      if (!advisory) continue;
      ids.push({ id: advisory.advisory.id, file: advisory.file });
      if (task.keep) advisories.push(advisory);
    } catch (error) {
      if (error instanceof FeedRejectedError) return { ok: false, rejection: error.rejection, index };
      if (error instanceof SourceError) return { ok: false, sourceError: error.message, index };
      throw error;
    }
  }
  return { ok: true, advisories, ids };
}
