import { defineConfig } from 'vitest/config';
import { SkipSummaryReporter } from '../scripts/skip-summary-reporter.ts';
import { POLL_TIMEOUT_MS } from '../scripts/test-wait.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    sequence: { shuffle: process.env.TEST_SHUFFLE === '1' },
    setupFiles: ['../scripts/test-temp-dir.ts'],
    // Builds the app once (web/dist) before the browser tests serve it.
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', new SkipSummaryReporter()],
    expect: { poll: { timeout: POLL_TIMEOUT_MS } },
    pool: 'forks',
    // Each browser test file runs a scheduler and a Chromium: two at a time on 2 cores.
    maxWorkers: 2,
    // A page waits for the scheduler and the browser on a loaded machine (test/README of the
    // scheduler, Waiting): room for that, while a test that waits for nothing still fails.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
