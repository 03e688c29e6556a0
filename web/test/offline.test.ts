import { describe, expect, it } from 'vitest';
import { runsIf } from '../../scripts/test-skip.ts';
import { demo, signIn } from './support/app.ts';
import { chromiumAvailable, NEEDS_CHROMIUM, phone } from './support/browser.ts';
import { useStage } from './support/stage.ts';

/**
 * After one visit, My shifts and the last Open shifts read with the network off, marked
 * with when they were synced; a change made offline is refused in words and never sent.
 */
const stage = useStage();

describe('the staff app offline', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('opens with the network off and shows what was last synced', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.maria);
    const next = page.getByRole('region', { name: 'Next shift' });
    const nextShift = await next.innerText();
    await page.getByRole('link', { name: 'Open shifts' }).click();
    await page.getByRole('button', { name: 'Claim' }).first().waitFor();
    const openCount = await page.getByRole('button', { name: 'Claim' }).count();
    // The service worker holds the app's files once it is active.
    await expect
      .poll(() => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state ?? 'none'))
      .toBe('activated');

    await context.setOffline(true);
    await page.goto(`${stage.scheduler.base}/app/`);
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: /^Offline\. Last synced/ })
          .count(),
      )
      .toBe(1);
    expect(await page.getByRole('region', { name: 'Next shift' }).innerText()).toBe(nextShift);

    await page.getByRole('link', { name: 'Open shifts' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Claim' }).count()).toBe(openCount);
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: /^Offline\. Last synced/ })
        .count(),
    ).toBe(1);

    // A claim offline: refused here, in words, and nothing reaches the server.
    let sent = 0;
    page.on('request', (request) => {
      if (request.method() === 'POST') sent += 1;
    });
    await page.getByRole('button', { name: 'Claim' }).first().click();
    await expect
      .poll(() =>
        page
          .getByRole('alert')
          .filter({ hasText: 'You are offline. Changes need a connection; nothing was sent.' })
          .count(),
      )
      .toBe(1);
    expect(sent).toBe(0);

    // Back online, the screen reads the server again.
    await context.setOffline(false);
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: /^Offline\./ })
          .count(),
      )
      .toBe(0);
    await context.close();
  });
});
