import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core, for every browser test of the repository
 * (the appliance's dashboard, the staff app): never a browser download. Without it those
 * tests are skipped with this reason; CI sets REQUIRE_CHROMIUM so that they fail instead.
 */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/lib/chromium/chromium';
export const chromiumAvailable = existsSync(chromiumPath);
if (process.env.REQUIRE_CHROMIUM && !chromiumAvailable)
  throw new Error(`Chromium is required (REQUIRE_CHROMIUM) but ${chromiumPath} is missing`);
export const NEEDS_CHROMIUM = `needs Chromium at ${chromiumPath} (Debian package chromium; scripts/install-system-packages.sh)`;

/**
 * Headless, and quiet on the network: without the background-networking flags Chromium
 * reaches for Google's hosts, which a closed network refuses, many at a time.
 */
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
