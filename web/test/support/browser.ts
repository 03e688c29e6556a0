import type { Browser, BrowserContext, Page } from 'playwright-core';

export { chromiumAvailable, launchChromium, NEEDS_CHROMIUM } from '../../../scripts/test-chromium.ts';

/** A phone: 360×640, touch, in a language and a colour scheme. */
export async function phone(
  browser: Browser,
  options: { locale?: string; colorScheme?: 'light' | 'dark'; base: string } = { base: '' },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: 360, height: 640 },
    isMobile: true,
    hasTouch: true,
    deviceScaleFactor: 2,
    locale: options.locale ?? 'en-GB',
    colorScheme: options.colorScheme ?? 'light',
    serviceWorkers: 'allow',
  });
  if (options.base) await context.grantPermissions(['notifications'], { origin: options.base });
  const page = await context.newPage();
  return { context, page };
}

/** A manager's desk: 1280×800, mouse and keyboard, in a language and a colour scheme. */
export async function desktop(
  browser: Browser,
  options: { locale?: string; colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    locale: options.locale ?? 'en-GB',
    colorScheme: options.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  return { context, page };
}
