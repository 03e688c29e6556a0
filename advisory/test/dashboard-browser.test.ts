/// <reference lib="dom" />
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, NEEDS_CHROMIUM } from '../../scripts/test-chromium.ts';
import { runsIf } from '../../scripts/test-skip.ts';
import {
  type Demo,
  demoAppliance,
  demoSource,
  hostileSource,
  launchChromium,
  type Served,
  serve,
} from './support/dashboard.ts';

/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core (never a
 * browser download). Every page renders, with nothing fetched from anywhere else; the
 * filters work; a log edited on disk turns the badge; Basic authentication holds; hostile
 * text stays text; a phone never scrolls sideways; axe-core finds nothing serious.
 * Screenshots go to docs/screenshots/ with UPDATE_SCREENSHOTS=1 (else to a scratch folder).
 */
const available = chromiumAvailable;

const pages = [
  { path: '/', name: 'assets', heading: 'Assets' },
  { path: '/ordering', name: 'upgrade-order', heading: 'Upgrade order' },
  { path: '/cves', name: 'cves', heading: 'CVE highlights' },
  { path: '/reminders', name: 'reminders', heading: 'Service reminders' },
  { path: '/feed', name: 'feed', heading: 'Feed' },
  { path: '/log', name: 'decision-log', heading: 'Decision log' },
  { path: '/assets/cloud', name: 'asset-history', heading: 'cloud' },
];
const credentials = { user: 'operator', password: 'correct horse battery' };
const httpCredentials = { username: credentials.user, password: credentials.password };
const screenshots = process.env.UPDATE_SCREENSHOTS
  ? path.resolve(import.meta.dirname, '../../docs/screenshots')
  : mkdtempSync(path.join(tmpdir(), 'screenshots-'));
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: Browser;
let demo: Demo;
let served: Served;

beforeAll(async () => {
  if (!available) return;
  browser = await launchChromium();
  demo = await demoAppliance();
  // Half a day after the last change, so the history timeline shows both verdicts.
  served = await serve(demoSource(demo), {
    credentials,
    now: () => new Date(demo.clock.now().getTime() + 43_200_000),
  });
});
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await demo?.appliance.stop();
});

/** A page that fails the test on a console error or on any request to another origin. */
async function watched(context: BrowserContext, origin: string): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    if (!request.url().startsWith(origin)) problems.push(`request to ${request.url()}`);
  });
  return { page, problems };
}

describe('the dashboard in Chromium', runsIf(available, NEEDS_CHROMIUM), () => {
  it('renders every page, fetches nothing from elsewhere, and is saved as a screenshot', async () => {
    const context = await browser.newContext({ httpCredentials, viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watched(context, served.url);
    mkdirSync(screenshots, { recursive: true });
    for (const entry of pages) {
      const response = await page.goto(`${served.url}${entry.path}`);
      expect(response?.status(), entry.path).toBe(200);
      expect(await page.locator('h1').textContent(), entry.path).toBe(entry.heading);
      // The stylesheet is the appliance's own, and it applied.
      expect(await page.locator('header.top').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(
        'rgb(36, 41, 47)',
      );
      await page.screenshot({ path: path.join(screenshots, `${entry.name}.png`), fullPage: true });
    }
    expect(problems).toEqual([]);
    await context.close();
  });

  it('filters by verdict, product and adapter with the form (no JavaScript on the page)', async () => {
    const context = await browser.newContext({ httpCredentials, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${served.url}/`);
    await page.selectOption('select[name=verdict]', 'eol');
    await page.click('button[type=submit]');
    expect(page.url()).toMatch(/\?verdict=eol&product=&source=$/);
    const assets = () => page.locator('td[data-label=Asset] a').allTextContents();
    expect(await assets()).toEqual(['pve-node-1', 'pve-legacy', 'files-legacy', 'reporting-db']);
    const badges = await page.locator('td[data-label=Verdict] .badge').allTextContents();
    expect(new Set(badges)).toEqual(new Set(['eol']));
    await page.selectOption('select[name=verdict]', '');
    await page.selectOption('select[name=product]', 'nextcloud');
    await page.click('button[type=submit]');
    expect(await assets()).toEqual(['cloud', 'files', 'files-legacy']);
    await page.selectOption('select[name=source]', 'inventory');
    await page.click('button[type=submit]');
    expect(await assets()).toEqual(['cloud', 'files', 'files-legacy']);
    await page.click('text=Show all');
    expect(await assets()).toHaveLength(11);
    await context.close();
  });

  it("unfolds an advisory's advice in the Assets table with a click, without JavaScript", async () => {
    const context = await browser.newContext({ httpCredentials, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${served.url}/?product=redis`);
    const details = page.locator('details.advice', { hasText: 'REDIS-CVE-2025-49844' });
    const summary = details.locator('.advice-summary');
    expect(await summary.isVisible()).toBe(false);
    await details.locator('summary').click();
    expect(await summary.isVisible()).toBe(true);
    expect(await summary.textContent()).toMatch(/^Fixed in 8\.2\.2, 8\.0\.4, 7\.4\.6/);
    const record = details.locator('p.cves a');
    expect(await record.getAttribute('href')).toBe('https://www.cve.org/CVERecord?id=CVE-2025-49844');
    expect(await record.getAttribute('rel')).toBe('noopener noreferrer');
    await context.close();
  });

  it('turns the HASH CHAIN INTACT badge to a broken state, saying where, once a log entry is edited on disk', async () => {
    const other = await demoAppliance();
    const own = await serve(demoSource(other), {});
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${own.url}/log`);
      await expect(page.locator('.badge-intact').textContent()).resolves.toBe('HASH CHAIN INTACT');
      const file = path.join(other.stateDir, 'decisions.jsonl');
      const lines = readFileSync(file, 'utf8').split('\n');
      lines[2] = (lines[2] as string).replace('"to":"install"', '"to":"hold"');
      writeFileSync(file, lines.join('\n'));
      await page.reload();
      expect(await page.locator('.badge-intact').count()).toBe(0);
      await expect(page.locator('.badge-broken').textContent()).resolves.toBe('HASH CHAIN BROKEN');
      await expect(page.locator('[role=alert]').textContent()).resolves.toContain(
        'Log line 3: entry 3 does not match its hash: it was edited',
      );
      await page.screenshot({ path: path.join(screenshots, 'decision-log-broken.png'), fullPage: true });
    } finally {
      await context.close();
      await own.close();
      await other.appliance.stop();
    }
  });

  it('asks for Basic credentials, refuses wrong ones, and lets the right ones in', async () => {
    const status = async (given?: { username: string; password: string }) => {
      const context = await browser.newContext(given ? { httpCredentials: given } : {});
      try {
        return (await (await context.newPage()).goto(`${served.url}/feed`))?.status();
      } catch (error) {
        // Chromium gives up on credentials the server keeps refusing.
        if (/ERR_INVALID_AUTH_CREDENTIALS/.test((error as Error).message)) return 401;
        throw error;
      } finally {
        await context.close();
      }
    };
    expect(await status()).toBe(401);
    expect(await status({ username: 'operator', password: 'wrong password' })).toBe(401);
    expect(await status(httpCredentials)).toBe(200);
  });

  it('shows a hostile advisory title and asset name as text, running nothing', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const { source, evaluation } = hostileSource(demo, hostile);
    const own = await serve(source, {});
    const context = await browser.newContext();
    try {
      const { page, problems } = await watched(context, own.url);
      let dialogs = 0;
      page.on('dialog', async (dialog) => {
        dialogs += 1;
        await dialog.dismiss();
      });
      for (const target of ['/', `/assets/${encodeURIComponent(evaluation.asset)}`]) {
        await page.goto(`${own.url}${target}`);
        expect(
          await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
        ).toBeUndefined();
        expect(await page.locator('main img, main script').count()).toBe(0);
        expect(await page.locator('main').textContent()).toContain(hostile);
      }
      expect(dialogs).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await own.close();
    }
  });

  it('never breaks a CVE id over lines, on a desktop or a phone', async () => {
    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 375, height: 812 },
    ]) {
      const context = await browser.newContext({ httpCredentials, viewport });
      const page = await context.newPage();
      for (const target of ['/cves', '/assets/cache']) {
        await page.goto(`${served.url}${target}`);
        const ids = page.locator('main a[href^="https://www.cve.org/"]');
        expect(await ids.count(), target).toBeGreaterThan(0);
        // An inline element broken over lines has one box per line.
        const lines = await ids.evaluateAll((links) =>
          links.map((a) => `${a.textContent}: ${a.getClientRects().length}`),
        );
        expect(lines, `${target} at ${viewport.width}px`).toEqual(
          lines.map((line) => line.replace(/\d+$/, '1')),
        );
      }
      await context.close();
    }
  });

  it('never scrolls sideways on a phone', async () => {
    const context = await browser.newContext({
      httpCredentials,
      viewport: { width: 375, height: 812 },
      isMobile: true,
    });
    const page = await context.newPage();
    for (const entry of pages) {
      await page.goto(`${served.url}${entry.path}`);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow, entry.path).toBeLessThanOrEqual(0);
    }
    await page.goto(`${served.url}/`);
    await page.screenshot({ path: path.join(screenshots, 'assets-phone.png'), fullPage: false });
    await context.close();
  });

  it('has no serious or critical accessibility violations (axe-core), on a desktop and a phone', async () => {
    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 375, height: 812 },
    ]) {
      // axe is added as a script: the page's CSP allows no scripts, so it is set aside here only.
      const context = await browser.newContext({ httpCredentials, viewport, bypassCSP: true });
      const page = await context.newPage();
      for (const entry of pages) {
        await page.goto(`${served.url}${entry.path}`);
        await page.addScriptTag({ content: axeSource });
        const violations = await page.evaluate(async () => {
          const axe = (
            window as unknown as {
              axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> };
            }
          ).axe;
          const result = await axe.run();
          return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
        });
        expect(
          violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
          `${entry.path} at ${viewport.width}px`,
        ).toEqual([]);
      }
      await context.close();
    }
  });
});
