import type { TestOptions } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** Why the test (or every test of the suite) was skipped: printed by the skip summary. */
    skipReason?: string;
  }
}

/**
 * The one way a test or suite declares that it runs only where something is available,
 * with the reason it is skipped elsewhere:
 *
 *   describe('PostgreSQL operations', runsIf(onPostgres, NEEDS_POSTGRES), () => { … });
 *   it('…', runsIf(root, 'needs root', { timeout: 60_000 }), async () => { … });
 *
 * The reason travels in the task's metadata (inherited by every test of a suite) to the
 * skip summary reporter (scripts/skip-summary-reporter.ts), which prints at the end of a
 * run what was skipped and why, so nothing is skipped silently.
 */
export function runsIf(condition: unknown, reason: string, options: TestOptions = {}): TestOptions {
  if (condition) return options;
  return { ...options, skip: true, meta: { ...options.meta, skipReason: reason } };
}
