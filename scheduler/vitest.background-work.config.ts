import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The tests of the background work alone (the job queue and worker, the notification
 * outbox and reminders, webhook and push deliveries, the shared submit limit): the
 * mutation run of those modules (stryker.background-work.config.mjs). Every app a route
 * test builds starts the job worker, so with the whole suite each mutant of the worker
 * would rerun nearly every test file; the tests named after these modules are the ones
 * that must notice a wrong line.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/jobs/**/*.test.ts',
      'test/notifications/**/*.test.ts',
      'test/webhooks/**/*.test.ts',
      'test/push/**/*.test.ts',
      'test/forms/submit-limit.test.ts',
    ],
  },
});
