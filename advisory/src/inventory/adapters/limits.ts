import { readRegularFile } from '../../storage/regular-file.ts';
import { parseDuration } from '../../time/durations.ts';

/** A source's `timeout` when it gives none. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** A source's deadline: its `timeout` (`10s`, `2m`), or `fallbackMs`. */
export function timeoutOf(source: { timeout?: string | undefined }, fallbackMs: number): number {
  return source.timeout ? parseDuration(source.timeout, { min: 1000, max: 10 * 60_000 }) : fallbackMs;
}

/**
 * How long one request of a Proxmox or Nextcloud API source may take (connection and the
 * whole answer): its `request_timeout`, or 10 s, but never more than the source's own
 * `timeout` (`timeoutMs`). Far less than a source's deadline, so one request that hangs
 * (a guest agent, an app) costs that request, not the collection.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export function requestTimeoutOf(
  source: { request_timeout?: string | undefined },
  timeoutMs: number,
): number {
  return source.request_timeout
    ? parseDuration(source.request_timeout, { min: 1000, max: 10 * 60_000 })
    : Math.min(DEFAULT_REQUEST_TIMEOUT_MS, timeoutMs);
}

/** How many requests a Proxmox or Nextcloud API source has open at once: its `concurrency`, or 4. */
export const DEFAULT_CONCURRENCY = 4;

export const concurrencyOf = (source: { concurrency?: number | undefined }): number =>
  source.concurrency ?? DEFAULT_CONCURRENCY;

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
