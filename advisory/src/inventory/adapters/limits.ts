import { readRegularFile } from '../../storage/regular-file.ts';
import { parseDuration } from '../../time/durations.ts';

/** A source's deadline: its `timeout` (`10s`, `2m`), or `fallbackMs`. */
export function timeoutOf(source: { timeout?: string | undefined }, fallbackMs: number): number {
  return source.timeout ? parseDuration(source.timeout, { min: 1000, max: 10 * 60_000 }) : fallbackMs;
}

/** Why a request or `occ` run ended when the source's deadline (collect.ts) passed. */
export const STOPPED = "stopped at the source's deadline";

/** The most an adapter reads of one answer. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** A file a source names (CA, token secret, assets): a regular file of at most `maxBytes`, named in errors. */
export async function readNamed(file: string, maxBytes = 1024 * 1024): Promise<string> {
  try {
    return await readRegularFile(file, maxBytes);
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
}
