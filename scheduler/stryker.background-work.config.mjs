import { readFileSync } from 'node:fs';

/**
 * The mutation run of the background work: the modules below against the tests named
 * after them (vitest.background-work.config.ts), not the whole suite. Otherwise as
 * stryker.config.json. npm run mutation:background-work -w scheduler; scores: docs/quality.md.
 */
const base = JSON.parse(readFileSync(new URL('./stryker.config.json', import.meta.url), 'utf8'));
delete base.$schema;
delete base._comment;

export default {
  ...base,
  mutate: [
    'src/jobs/queue.ts',
    'src/jobs/repository.ts',
    'src/jobs/transaction.ts',
    'src/jobs/worker.ts',
    'src/notifications/outbox.ts',
    'src/notifications/reminders.ts',
    'src/webhooks/delivery.ts',
    'src/push/delivery.ts',
    'src/forms/shared-submit-limit.ts',
  ],
  vitest: { configFile: 'vitest.background-work.config.ts', related: false },
  incrementalFile: 'reports/stryker-background-work-incremental.json',
  htmlReporter: { fileName: 'reports/mutation-background-work/index.html' },
  jsonReporter: { fileName: 'reports/mutation-background-work/mutation.json' },
};
