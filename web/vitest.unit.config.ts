import { defineConfig } from 'vitest/config';

// The app's own logic without a browser or a server (dates, languages): what mutation
// testing runs (stryker.config.json), in seconds.
export default defineConfig({
  test: { include: ['test/i18n/**/*.test.ts'], pool: 'forks', maxWorkers: 2 },
});
