import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { describeFileError, readRegularFile } from '../storage/regular-file.ts';
import { forInput, UsageError } from './io.ts';

/**
 * Inputs named on the command line, read and checked before any work starts: a file must
 * be a regular file (a FIFO, socket or directory is refused at once, never waited on), of
 * a sane size; a directory must be one. Problems are UsageErrors (exit 2) naming the input.
 */
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The text of a regular file of at most `maxBytes`. */
export async function readInputFile(what: string, file: string, maxBytes = 4 * 1024 * 1024): Promise<string> {
  return forInput(`${what} ${file}`, () => readRegularFile(file, maxBytes));
}

/** As readInputFile, but a file that does not exist reads as empty. */
export async function readOptionalInputFile(what: string, file: string, maxBytes: number): Promise<string> {
  return forInput(`${what} ${file}`, () => readRegularFile(file, maxBytes, { missing: '' }));
}

/** Refuses anything but an existing directory. */
export async function requireDirectory(what: string, dir: string): Promise<void> {
  let info: Stats;
  try {
    info = await stat(dir);
  } catch (error) {
    throw codeOf(error) === 'ENOENT'
      ? new UsageError(`${what} ${dir}: no such directory`)
      : new UsageError(`${what} ${dir}: ${describeFileError(error)}`);
  }
  if (!info.isDirectory()) throw new UsageError(`${what} ${dir}: not a directory`);
}

/**
 * Refuses an option given with an empty value (`--last-accepted ""`, `--inventory=`):
 * an empty path must never read as "not given" and quietly switch a check off.
 */
export function refuseEmpty(values: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(values)) {
    const given = Array.isArray(value) ? value : [value];
    if (given.some((v) => typeof v === 'string' && v.trim() === ''))
      throw new UsageError(`--${name} needs a value`);
  }
}
