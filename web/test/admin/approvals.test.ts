import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { demo, expectAccessible, openManagerScreen, signIn } from '../support/app.ts';
import { chromiumAvailable, desktop, NEEDS_CHROMIUM } from '../support/browser.ts';
import { useStage } from '../support/stage.ts';
import { apiAs } from '../support/tokens.ts';

/**
 * The admin's inbox: handovers a colleague took while the tenant wants them approved, and
 * time off requested. The demo week is the data; what the employees do comes through the API.
 */
const stage = useStage();

interface Offer {
  id: string;
  from_user_id: string;
  status: string;
  decision_reason: string | null;
}
interface TimeOff {
  id: string;
  user_id: string;
  status: string;
  decision_reason: string | null;
}
type Api = Awaited<ReturnType<typeof apiAs>>;

const ids = { maria: '', sam: '', lena: '' };
let admin: Api;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
  const maria = await apiAs(stage.scheduler, 'demo-employee-1', 'employee');
  const sam = await apiAs(stage.scheduler, 'demo-employee-2', 'employee');
  const lena = await apiAs(stage.scheduler, 'demo-employee-3', 'employee');
  for (const [key, who] of [
    ['maria', maria],
    ['sam', sam],
    ['lena', lena],
  ] as const) {
    ids[key] = (await who<{ id: string }>('GET', '/me')).body.id;
  }
  // The tenant wants handovers approved: Maria takes the two seats offered to her meanwhile.
  const settings = (await admin<Record<string, unknown>>('GET', '/tenant/settings')).body;
  const { id: _id, tenant_id: _t, created_at: _c, updated_at: _u, ...rest } = settings;
  expect((await admin('PATCH', '/tenant/settings', { ...rest, offers_need_approval: true })).status).toBe(
    200,
  );
  const open = (await maria<Offer[]>('GET', '/offers?status=open')).body;
  expect(open.length).toBe(2);
  for (const offer of open) {
    const taken = await maria<Offer>('POST', `/offers/${offer.id}/accept`);
    expect(taken.body.status).toBe('accepted');
  }
  // Lena asks for the evening of her Door security shift off; Sam for two days after the week.
  const seats = (
    await lena<{ shift: { name: string; starts_at: string; ends_at: string } }[]>('GET', '/me/assignments')
  ).body;
  const door = seats.find((seat) => seat.shift.name === 'Door security')!.shift;
  expect(
    (await lena('POST', '/me/time-off', { starts_at: door.starts_at, ends_at: door.ends_at })).status,
  ).toBe(201);
  const day = 24 * 60 * 60 * 1000;
  const later = (days: number) => new Date(Date.now() + days * day).toISOString().replace(/\.\d+Z$/, 'Z');
  expect((await sam('POST', '/me/time-off', { starts_at: later(9), ends_at: later(11) })).status).toBe(201);
});

async function openApprovals(page: Page, link = 'Approvals'): Promise<void> {
  await signIn(page, stage.scheduler.base, demo.alex);
  await openManagerScreen(page, link);
  await page.getByRole('main').getByRole('article').first().waitFor();
  await page
    .getByText(/^(Loading…|Lädt…)$/)
    .first()
    .waitFor({ state: 'detached' });
}

describe('approvals', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('approves a handover, says why time off cannot be approved, and rejects it with a reason', async () => {
    const { context, page } = await desktop(stage.browser);
    await openApprovals(page);
    const main = page.getByRole('main');
    expect(await main.getByRole('article').count()).toBe(4);

    const handover = main.getByRole('article', { name: 'Shift handover: Sam Okafor to Maria Weber' });
    await expect.poll(() => handover.getByText(/seats filled/).count()).toBe(1);
    expect(await handover.innerText()).toContain('Bar');
    await handover.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toMatch(/^Approved: Bar .* moves from Sam Okafor to Maria Weber\.$/);
    await handover.waitFor({ state: 'detached' });
    const approved = (await admin<Offer[]>('GET', '/offers?status=approved')).body;
    expect(approved.map((o) => o.from_user_id)).toContain(ids.sam);

    // Lena holds the Door security seat in the time she asks for: the API refuses, in words.
    const timeOff = main.getByRole('article', { name: 'Time off: Lena Fischer' });
    await expect.poll(() => timeOff.getByText('Door security', { exact: false }).count()).toBe(1);
    expect(await timeOff.innerText()).toMatch(/Overtime balance\s+0 min/);
    await timeOff.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => page.getByRole('alert').innerText())
      .toBe(
        'Lena Fischer still holds seats in that time. Remove them from those shifts first, then approve.',
      );

    await timeOff.getByRole('button', { name: 'Reject' }).click();
    await timeOff
      .getByRole('textbox', { name: 'Reason for rejecting' })
      .fill('The door needs you that night.');
    await timeOff.getByRole('button', { name: 'Reject now' }).click();
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toMatch(/^Rejected: time off of Lena Fischer, /);
    await timeOff.waitFor({ state: 'detached' });
    const lenas = (await admin<TimeOff[]>('GET', `/time-off?user_id=${ids.lena}`)).body;
    expect(lenas.map((t) => [t.status, t.decision_reason])).toEqual([
      ['rejected', 'The door needs you that night.'],
    ]);
    await context.close();
  });

  it('has no serious accessibility problem, light and dark, with a rejection open', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { context, page } = await desktop(stage.browser, { colorScheme });
      await openApprovals(page);
      await expectAccessible(page);
      await page.getByRole('main').getByRole('button', { name: 'Reject' }).first().click();
      await page.getByRole('textbox', { name: 'Reason for rejecting' }).waitFor();
      await expectAccessible(page);
      await context.close();
    }
  });

  it('approves time off with the keyboard alone', async () => {
    const { context, page } = await desktop(stage.browser);
    await openApprovals(page);
    await page
      .getByRole('main')
      .getByRole('article', { name: 'Time off: Sam Okafor' })
      .getByText('None', { exact: true })
      .waitFor();
    // Tab to the Approve button of Sam's request (the button names the request it acts on).
    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        const about = element?.getAttribute('aria-describedby');
        return `${element?.innerText ?? ''} | ${about ? document.getElementById(about)?.innerText : ''}`;
      });
    let reached = false;
    for (let i = 0; i < 80 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await focused()) === 'Approve | Time off: Sam Okafor';
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toMatch(/^Approved: time off of Sam Okafor, /);
    const sams = (await admin<TimeOff[]>('GET', `/time-off?user_id=${ids.sam}`)).body;
    expect(sams.map((t) => t.status)).toEqual(['approved']);
    // The keyboard stays on the screen: focus is on its heading.
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    await context.close();
  });

  it('speaks German, down to the empty inbox', async () => {
    const { context, page } = await desktop(stage.browser, { locale: 'de-DE' });
    await openApprovals(page, 'Freigaben');
    const handover = page
      .getByRole('main')
      .getByRole('article', { name: 'Schichtübergabe: Lena Fischer an Maria Weber' });
    await handover.getByRole('button', { name: 'Ablehnen' }).click();
    await handover.getByRole('textbox', { name: 'Grund der Ablehnung' }).fill('Maria arbeitet schon genug.');
    await handover.getByRole('button', { name: 'Jetzt ablehnen' }).click();
    await expect.poll(() => page.getByRole('status').innerText()).toMatch(/^Abgelehnt: Lena Fischer behält /);
    await page.getByText('Nichts wartet auf deine Freigabe.').waitFor();
    const rejected = (await admin<Offer[]>('GET', '/offers?status=rejected')).body;
    expect(rejected.map((o) => [o.from_user_id, o.decision_reason])).toEqual([
      [ids.lena, 'Maria arbeitet schon genug.'],
    ]);
    await context.close();
  });
});
