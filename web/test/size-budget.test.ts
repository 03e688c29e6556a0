import { expect, it } from 'vitest';
import { firstLoad, firstLoadBudgetBytes } from '../scripts/bundle-size.ts';
import { webDist } from './support/scheduler.ts';

// The build the other tests serve (test/support/global-setup.ts builds it first).
it('loads at most 150 kB of gzipped JavaScript on a first visit', () => {
  const load = firstLoad(webDist);
  expect(load.files.map((f) => f.file)).toContain('sw.js');
  expect(load.files.length).toBeGreaterThanOrEqual(2);
  expect(load.gzipBytes, JSON.stringify(load.files)).toBeLessThanOrEqual(firstLoadBudgetBytes);
});
