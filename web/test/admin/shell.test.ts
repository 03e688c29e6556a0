import { describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { demo, expectAccessible, openManagerScreen, signIn } from '../support/app.ts';
import { chromiumAvailable, desktop, NEEDS_CHROMIUM, phone } from '../support/browser.ts';
import { useStage } from '../support/stage.ts';

/** The manager's screens are offered to admins only, and load only when an admin opens one. */
const stage = useStage();

describe("the manager's desk", runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('offers an admin the five screens, loading them on first use', async () => {
    const { context, page } = await desktop(stage.browser);
    const loaded: string[] = [];
    page.on('request', (request) => loaded.push(new URL(request.url()).pathname));
    await signIn(page, stage.scheduler.base, demo.alex);
    expect(loaded.filter((p) => p.includes('/assets/admin-'))).toEqual([]);
    const manage = page.getByRole('navigation', { name: 'Manage' });
    expect(await manage.getByRole('link').allTextContents()).toEqual([
      'Schedule',
      'Approvals',
      'People',
      'Timesheets',
      'Settings',
    ]);
    await openManagerScreen(page, 'People');
    expect(loaded.some((p) => p.includes('/assets/admin-'))).toBe(true);
    await expectAccessible(page);
    await context.close();
  });

  it("shows an employee no manager's screen, not even by address", async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.maria);
    await expect.poll(() => page.getByRole('navigation', { name: 'Manage' }).count()).toBe(0);
    await page.goto(`${stage.scheduler.base}/app/people`);
    await page.getByRole('heading', { level: 1, name: 'My shifts' }).waitFor();
    await context.close();
  });
});
