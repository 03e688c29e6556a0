import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core: never a browser download. Without it the
 * browser tests are skipped with their reason; CI sets REQUIRE_CHROMIUM so they fail.
 */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/lib/chromium/chromium';
export const chromiumAvailable = existsSync(chromiumPath);
if (process.env.REQUIRE_CHROMIUM && !chromiumAvailable)
  throw new Error(`Chromium is required (REQUIRE_CHROMIUM) but ${chromiumPath} is missing`);
export const NEEDS_CHROMIUM = `needs Chromium at ${chromiumPath} (Debian package chromium; scripts/install-system-packages.sh)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

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
