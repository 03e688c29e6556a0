import { readFileSync } from 'node:fs';

/**
 * The mutation runs of the background work, one group at a time: each group's modules
 * against the tests named after them, not the whole suite. Every app a route test builds
 * starts the job worker, so Stryker's related mode would rerun nearly every test file for
 * each mutant of src/jobs/ (four hours, where a group takes minutes). Otherwise as
 * stryker.config.json. npm run mutation:background-work -w scheduler runs every group;
 * MUTATION_GROUP=jobs npx stryker run stryker.background-work.config.mjs runs one.
 * Scores: docs/quality.md.
 */
const groups = {
  jobs: {
    mutate: ['src/jobs/queue.ts', 'src/jobs/repository.ts', 'src/jobs/worker.ts'],
    tests: ['test/jobs/**/*.test.ts'],
  },
  notifications: {
    mutate: [
      'src/notifications/outbox.ts',
      'src/notifications/reminders.ts',
      'src/notifications/reactions.ts',
    ],
    tests: ['test/notifications/**/*.test.ts'],
  },
  // The unit of work, and the reactions to removals and deactivations, by the tests that drive them.
  changes: {
    mutate: [
      'src/changes/unit-of-work.ts',
      'src/offers/reactions.ts',
      'src/assignments/reactions.ts',
      'src/push/reactions.ts',
      'src/webhooks/reactions.ts',
    ],
    tests: [
      'test/changes/**/*.test.ts',
      'test/assignments/**/*.test.ts',
      'test/offers/**/*.test.ts',
      'test/users/routes.test.ts',
      'test/notifications/outbox.test.ts',
      'test/webhooks/delivery.test.ts',
      'test/push/routes.test.ts',
    ],
  },
  webhooks: { mutate: ['src/webhooks/delivery.ts'], tests: ['test/webhooks/**/*.test.ts'] },
  // The push job's outcomes are driven end to end by the outbox's tests, against a real push service.
  push: {
    mutate: ['src/push/delivery.ts'],
    tests: ['test/push/**/*.test.ts', 'test/notifications/outbox.test.ts'],
  },
  forms: { mutate: ['src/forms/shared-submit-limit.ts'], tests: ['test/forms/submit-limit.test.ts'] },
};

const name = process.env.MUTATION_GROUP ?? '';
const group = groups[name];
if (!group) throw new Error(`MUTATION_GROUP must be one of ${Object.keys(groups).join(', ')}`);
// Read by vitest.background-work.config.ts in the test runners Stryker starts.
process.env.MUTATION_TESTS = group.tests.join(',');

const base = JSON.parse(readFileSync(new URL('./stryker.config.json', import.meta.url), 'utf8'));
delete base.$schema;
delete base._comment;

export default {
  ...base,
  mutate: group.mutate,
  vitest: { configFile: 'vitest.background-work.config.ts', related: false },
  incrementalFile: `reports/stryker-background-work-${name}.json`,
  htmlReporter: { fileName: `reports/mutation-background-work/${name}/index.html` },
  jsonReporter: { fileName: `reports/mutation-background-work/${name}/mutation.json` },
};
