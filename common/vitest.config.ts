import { defineConfig } from 'vitest/config';
import { SkipSummaryReporter } from '../scripts/skip-summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CI shuffles files and tests (TEST_SHUFFLE=1): no test may depend on another's leftovers.
    sequence: { shuffle: process.env.TEST_SHUFFLE === '1' },
    // Every test file gets its own TMPDIR, removed after it.
    setupFiles: ['../scripts/test-temp-dir.ts'],
    // The default output, then what was skipped and why (scripts/test-skip.ts declares it).
    reporters: ['default', new SkipSummaryReporter()],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
  },
});
