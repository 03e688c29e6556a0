import { expect, it } from 'vitest';
import { adminBudgetBytes, adminLoad, firstLoad, firstLoadBudgetBytes } from '../scripts/bundle-size.ts';
import { webDist } from './support/scheduler.ts';

// The build the other tests serve (test/support/global-setup.ts builds it first).
it('loads at most 150 kB of gzipped JavaScript on a first visit', () => {
  const load = firstLoad(webDist);
  expect(load.files.map((f) => f.file)).toContain('sw.js');
  expect(load.files.length).toBeGreaterThanOrEqual(2);
  expect(load.gzipBytes, JSON.stringify(load.files)).toBeLessThanOrEqual(firstLoadBudgetBytes);
});

it("keeps the manager's screens out of the first load, within their own budget", () => {
  const first = firstLoad(webDist).files.map((f) => f.file);
  const admin = adminLoad(webDist);
  expect(
    admin.files.some((f) => /^assets\/admin-.*\.js$/.test(f.file)),
    JSON.stringify(admin.files),
  ).toBe(true);
  for (const file of admin.files) expect(first).not.toContain(file.file);
  expect(admin.gzipBytes, JSON.stringify(admin.files)).toBeLessThanOrEqual(adminBudgetBytes);
});
