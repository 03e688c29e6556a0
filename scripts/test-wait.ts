import type { Readable } from 'node:stream';

/**
 * Waiting in tests, for every workspace: a test waits for the event it needs, never for a
 * stretch of time, so that it passes on a loaded 2-core machine as it does on an idle one
 * (the rule: scheduler/test/README.md, "Waiting").
 *
 * - Wait for the thing itself: a promise it resolves, a process's `exit`, a socket's
 *   `close`, a line it prints (`watchOutput`).
 * - Where only a state can be seen (a row, a counter, a file, a process in /proc), poll it
 *   with `until` (or `expect.poll`, whose default timeout the vitest configs set to
 *   `POLL_TIMEOUT_MS`). `until` has no deadline of its own: the test's timeout is the one
 *   bound, so no second clock races the first.
 */

/** The default timeout of `expect.poll` in every workspace's vitest config. */
export const POLL_TIMEOUT_MS = 20_000;

/**
 * Resolves once `check` answers true, looking again every `intervalMs`. No deadline: the
 * test's own timeout ends a wait for something that never comes.
 */
export async function until(check: () => boolean | Promise<boolean>, intervalMs = 20): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, intervalMs));
}

export interface WatchedOutput {
  /** Everything the streams wrote so far, in arrival order. */
  text(): string;
  /**
   * Resolves with the first match of `pattern` in the text from offset `from` on, as soon as
   * it arrives; rejects, with the text, if every stream ends without it.
   */
  waitFor(pattern: RegExp | string, from?: number): Promise<RegExpExecArray>;
}

/** Collects what a child process writes (stdout, stderr or both) and tells when a line arrives. */
export function watchOutput(...streams: (Readable | null | undefined)[]): WatchedOutput {
  let text = '';
  let open = 0;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  for (const stream of streams) {
    if (!stream) continue;
    open++;
    stream.on('data', (chunk: Buffer | string) => {
      text += chunk.toString();
      wake();
    });
    stream.once('close', () => {
      open--;
      wake();
    });
  }
  const find = (pattern: RegExp | string, from: number): RegExpExecArray | null => {
    const rest = text.slice(from);
    if (typeof pattern !== 'string')
      return new RegExp(pattern.source, pattern.flags.replace('g', '')).exec(rest);
    const at = rest.indexOf(pattern);
    if (at < 0) return null;
    const match = [pattern] as unknown as RegExpExecArray;
    match.index = at;
    match.input = rest;
    return match;
  };
  return {
    text: () => text,
    waitFor(pattern, from = 0) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const match = find(pattern, from);
          if (match) {
            waiters.delete(look);
            resolve(match);
          } else if (open === 0) {
            waiters.delete(look);
            reject(new Error(`the output ended without ${String(pattern)}:\n${text}`));
          }
        };
        waiters.add(look);
        look();
      });
    },
  };
}
