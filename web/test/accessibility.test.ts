import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runsIf } from '../../scripts/test-skip.ts';
import { demo, expectAccessible } from './support/app.ts';
import { chromiumAvailable, NEEDS_CHROMIUM, phone } from './support/browser.ts';
import { useStage } from './support/stage.ts';

/**
 * Every screen, light and dark, on a phone: axe-core finds nothing serious or critical, the
 * page never scrolls sideways, and everything works with the keyboard alone.
 */
const stage = useStage();

const screens = [
  { link: 'My shifts', heading: 'My shifts', file: 'my-shifts' },
  { link: 'Open shifts', heading: 'Open shifts', file: 'open-shifts' },
  { link: 'Requests', heading: 'Requests', file: 'requests' },
  { link: 'My time', heading: 'My time', file: 'my-time' },
  { link: 'Me', heading: 'Me', file: 'me' },
];

// Each screen as axe saw it: in docs/screenshots/ with UPDATE_SCREENSHOTS=1
// (npm run screenshots -w web), else in a scratch folder.
const screenshots = process.env.UPDATE_SCREENSHOTS
  ? path.resolve(import.meta.dirname, '../../docs/screenshots')
  : mkdtempSync(path.join(tmpdir(), 'screenshots-'));

async function noSidewaysScroll(page: Page): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
}

describe('the staff app for everyone', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  for (const colorScheme of ['light', 'dark'] as const) {
    it(`has no serious accessibility problem on any screen (${colorScheme})`, async () => {
      const { context, page } = await phone(stage.browser, { base: stage.scheduler.base, colorScheme });
      await page.goto(`${stage.scheduler.base}/app/`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: demo.maria }).waitFor();
      await expectAccessible(page);
      await page.getByRole('button', { name: demo.maria }).click();
      for (const screen of screens) {
        await page
          .getByRole('navigation', { name: 'Main' })
          .getByRole('link', { name: screen.link, exact: true })
          .click();
        await page.getByRole('heading', { level: 1, name: screen.heading }).waitFor();
        await page.getByText('Loading…').first().waitFor({ state: 'detached' });
        await expectAccessible(page);
        await noSidewaysScroll(page);
        await page.screenshot({ path: path.join(screenshots, `staff-${screen.file}-${colorScheme}.png`) });
      }
      // A shift's detail, with its offer form open.
      await page.getByRole('link', { name: 'My shifts' }).click();
      await page.getByRole('region', { name: 'Next shift' }).getByRole('link').click();
      await page.getByRole('button', { name: 'Offer' }).click();
      await page.getByRole('group', { name: 'Offer this shift' }).waitFor();
      await expectAccessible(page);
      await noSidewaysScroll(page);
      await context.close();
    });
  }

  it('claims a shift and requests time off with the keyboard alone', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await page.goto(`${stage.scheduler.base}/app/`);
    const focusedName = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        return element?.getAttribute('aria-label') ?? element?.innerText?.trim() ?? '';
      });
    /** Tabs until the element named `name` has focus, then presses Enter. */
    async function reach(name: RegExp): Promise<void> {
      for (let i = 0; i < 60; i++) {
        await page.keyboard.press('Tab');
        if (name.test(await focusedName())) {
          await page.keyboard.press('Enter');
          return;
        }
      }
      throw new Error(`nothing named ${name} took focus`);
    }
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await reach(/^Sign in$/);
    await page.getByRole('button', { name: demo.sam }).waitFor();
    await reach(new RegExp(`^${demo.sam}$`));
    await page.getByRole('heading', { level: 1, name: 'My shifts' }).waitFor();
    await reach(/Open shifts$/);
    await page.getByRole('heading', { level: 1, name: 'Open shifts' }).waitFor();
    await page.getByRole('button', { name: 'Claim' }).first().waitFor();
    await reach(/^Claim$/);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Done: you are on' }).count()).toBe(1);
    await reach(/Requests$/);
    await page.getByRole('heading', { level: 1, name: 'Requests' }).waitFor();
    await reach(/^Request time off$/);
    await reach(/^Send request$/);
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Time off requested.' }).count())
      .toBe(1);
    await context.close();
  });

  it('speaks German to a German browser, and English again when chosen on Me', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base, locale: 'de-DE' });
    await page.goto(`${stage.scheduler.base}/app/`);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await page.getByRole('button', { name: demo.lena }).click();
    await page.getByRole('heading', { level: 1, name: 'Meine Schichten' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('de');
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Ich', exact: true }).click();
    await page.getByRole('combobox', { name: 'Sprache' }).selectOption('en');
    await page.getByRole('heading', { level: 1, name: 'Me' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
    await context.close();
  });
});
