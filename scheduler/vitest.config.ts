import { defineConfig } from 'vitest/config';
import { SkipSummaryReporter } from '../scripts/skip-summary-reporter.ts';
import { POLL_TIMEOUT_MS } from '../scripts/test-wait.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CI shuffles files and tests (TEST_SHUFFLE=1): no test may depend on another's leftovers.
    // The seed is printed; rerun one order with --sequence.seed=N.
    sequence: { shuffle: process.env.TEST_SHUFFLE === '1' },
    // test-temp-dir first: every test file gets its own TMPDIR, removed after it.
    setupFiles: ['../scripts/test-temp-dir.ts', '../scripts/fast-check-seed.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // The default output, then what was skipped and why (scripts/test-skip.ts declares it).
    reporters: ['default', new SkipSummaryReporter()],
    // expect.poll waits for a state, not a moment: 1 s (vitest's default) is a race on a
    // loaded machine. A test that waits for something that never comes still fails.
    expect: { poll: { timeout: POLL_TIMEOUT_MS } },
    pool: 'forks',
    // PGlite instances are memory-hungry; two workers suit the 2-core CI machine.
    maxWorkers: 2,
    // For an ordinary test (under a second on an idle machine): room for a loaded one (such a
    // test was seen at 15 s with the load average at 20). A test that does more sets its own
    // timeout from the size of its work (test/README.md, Waiting).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
