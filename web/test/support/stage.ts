import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { chromiumAvailable, launchChromium } from './browser.ts';
import { type Scheduler, startScheduler } from './scheduler.ts';

/** What a browser test file runs against: one scheduler with the demo week, one Chromium. */
export interface Stage {
  browser: Browser;
  scheduler: Scheduler;
}

/**
 * Starts both before the file's tests (the scheduler with `env()`'s extra settings) and
 * closes the browser after them; the scheduler is killed by its own support. Without
 * Chromium nothing starts: the file's tests are skipped with their reason.
 */
export function useStage(env: () => Promise<Record<string, string>> = async () => ({})): Stage {
  const stage = {} as Stage;
  beforeAll(async () => {
    if (!chromiumAvailable) return;
    const settings = await env();
    [stage.browser, stage.scheduler] = await Promise.all([launchChromium(), startScheduler(settings)]);
  });
  afterAll(async () => {
    await stage.browser?.close();
  });
  return stage;
}
