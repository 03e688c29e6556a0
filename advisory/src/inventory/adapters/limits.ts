import { parseDuration } from '../../time/durations.ts';

/** A source's deadline: its `timeout` (`10s`, `2m`), or `fallbackMs`. */
export function timeoutOf(source: { timeout?: string | undefined }, fallbackMs: number): number {
  return source.timeout ? parseDuration(source.timeout, { min: 1000, max: 10 * 60_000 }) : fallbackMs;
}

/** The most an adapter reads of one answer. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
