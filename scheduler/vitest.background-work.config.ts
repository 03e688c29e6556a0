import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The suite narrowed to the test files of one group of background modules (the job queue
 * and worker, the notification outbox and reminders, webhook and push deliveries, the
 * shared submit limit), for their mutation runs: stryker.background-work.config.mjs names
 * the files in MUTATION_TESTS.
 */
const files = process.env.MUTATION_TESTS?.split(',').filter(Boolean);
if (!files?.length) throw new Error('MUTATION_TESTS names no test files');

export default defineConfig({ ...base, test: { ...base.test, include: files } });
