import { defineConfig } from 'vitest/config';

/**
 * The in-process tests of the daemon's shell, for mutation testing (stryker.shell.json):
 * Stryker's mutants live in the sources, which whole-process tests (they run the bundle)
 * and the browser tests do not reach, so those are left out of its runs.
 */
export default defineConfig({
  test: {
    include: [
      'test/appliance/**/*.test.ts',
      'test/alerts/**/*.test.ts',
      'test/decisions/**/*.test.ts',
      'test/dashboard/**/*.test.ts',
      'test/storage/**/*.test.ts',
      'test/cli/advisory/**/*.test.ts',
      'test/cli/exit-codes.test.ts',
    ],
    setupFiles: ['../scripts/test-temp-dir.ts', '../scripts/fast-check-seed.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
  },
});
