import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';

/** The demo people the development provider lists (scheduler/src/dev-sign-in/people.ts). */
export const demo = {
  maria: 'Maria Weber, employee',
  sam: 'Sam Okafor, employee',
  lena: 'Lena Fischer, employee',
  alex: 'Alex Admin, admin',
} as const;

/**
 * Signs in as a person uses the app: open it, press Sign in, pick yourself on the
 * provider's page, land on My shifts.
 */
export async function signIn(page: Page, base: string, who: string = demo.maria): Promise<void> {
  await page.goto(`${base}/app/`);
  await page.getByRole('button', { name: /^(Sign in|Anmelden)$/ }).click();
  await page.getByRole('button', { name: who }).click();
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  await page.waitForURL(`${base}/app/`);
}

/**
 * Counts what a person does: every tap (click) goes through it. The three-tap promises are
 * asserted on its count.
 */
export class Taps {
  count = 0;
  async tap(locator: Locator): Promise<void> {
    this.count += 1;
    await locator.click();
  }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** axe-core on the page as it is now: the serious and critical violations, described. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global the injected script defines
    async () => (await (window as any).axe.run(document, { resultTypes: ['violations'] })).violations,
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

export async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page)).toEqual([]);
}

/** Opens one of the manager's screens from the admin's navigation, and waits for it. */
export async function openManagerScreen(page: Page, link: string, heading: string = link): Promise<void> {
  await page
    .getByRole('navigation', { name: /^(Manage|Verwalten)$/ })
    .getByRole('link', { name: link })
    .click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}
