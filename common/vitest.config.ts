import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CI shuffles files and tests (TEST_SHUFFLE=1): no test may depend on another's leftovers.
    sequence: { shuffle: process.env.TEST_SHUFFLE === '1' },
    // Every test file gets its own TMPDIR, removed after it.
    setupFiles: ['../scripts/test-temp-dir.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
  },
});
