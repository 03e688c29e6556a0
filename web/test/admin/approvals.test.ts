import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { demo, expectAccessible, openManagerScreen, signIn } from '../support/app.ts';
import { chromiumAvailable, desktop, NEEDS_CHROMIUM } from '../support/browser.ts';
import { useStage } from '../support/stage.ts';
import { apiAs } from '../support/tokens.ts';

/**
 * The admin's inbox: handovers a colleague took while the tenant wants them approved, and
 * time off requested. What the employees do comes through the API. The tests share one
 * scheduler and may run in any order (CI shuffles them): each makes the items it decides
 * itself, on shifts and days of its own, and finds them by name and content, never by
 * counting what the others left.
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
const roleIds = { Bar: '', Security: '' };
let admin: Api;
let maria: Api;
let sam: Api;
let lena: Api;
let eventId = '';

const DAY = 24 * 60 * 60 * 1000;
/** `days` after today's midnight (UTC) plus `hours`, to the second as the API writes it. */
function at(days: number, hours: number): string {
  const midnight = new Date();
  midnight.setUTCHours(0, 0, 0, 0);
  return new Date(midnight.getTime() + days * DAY + hours * 60 * 60 * 1000)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z');
}

beforeAll(async () => {
  if (!chromiumAvailable) return;
  admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
  maria = await apiAs(stage.scheduler, 'demo-employee-1', 'employee');
  sam = await apiAs(stage.scheduler, 'demo-employee-2', 'employee');
  lena = await apiAs(stage.scheduler, 'demo-employee-3', 'employee');
  for (const [key, who] of [
    ['maria', maria],
    ['sam', sam],
    ['lena', lena],
  ] as const) {
    ids[key] = (await who<{ id: string }>('GET', '/me')).body.id;
  }
  for (const role of (await admin<{ id: string; name: string }[]>('GET', '/roles')).body) {
    if (role.name === 'Bar' || role.name === 'Security') roleIds[role.name] = role.id;
  }
  // The tenant wants handovers approved.
  const settings = (await admin<Record<string, unknown>>('GET', '/tenant/settings')).body;
  const { id: _id, tenant_id: _t, created_at: _c, updated_at: _u, ...rest } = settings;
  expect((await admin('PATCH', '/tenant/settings', { ...rest, offers_need_approval: true })).status).toBe(
    200,
  );
  // A published event after the demo week for the tests' own shifts (each on a day of its own).
  const event = await admin<{ id: string }>('POST', '/events', {
    name: 'Approvals tests',
    starts_at: at(10, 0),
    ends_at: at(20, 0),
  });
  expect(event.status).toBe(201);
  eventId = event.body.id;
  expect((await admin('POST', `/events/${eventId}/publish`)).status).toBe(200);
});

/** A published shift named `name` on day `days`, 16:00 to 21:00 UTC, with a seat for `userId`. */
async function seat(userId: string, name: string, days: number, role: keyof typeof roleIds) {
  const shift = await admin<{ id: string; starts_at: string; ends_at: string }>('POST', '/shifts', {
    event_id: eventId,
    name,
    starts_at: at(days, 16),
    ends_at: at(days, 21),
    slots: [{ role_id: roleIds[role], capacity: 2 }],
  });
  expect(shift.status).toBe(201);
  const [slot] = (await admin<{ id: string }[]>('GET', `/shifts/${shift.body.id}/slots`)).body;
  const assigned = await admin<{ id: string }>('POST', `/shifts/${shift.body.id}/slots/${slot!.id}/assign`, {
    user_id: userId,
  });
  expect(assigned.status).toBe(201);
  expect((await admin('POST', `/shifts/${shift.body.id}/publish`)).status).toBe(200);
  return { ...shift.body, assignmentId: assigned.body.id };
}

/** `giver` offers their Bar seat of a shift of its own to Maria, who takes it: it waits for an admin. */
async function handover(giver: Api, giverId: string, name: string, days: number): Promise<Offer> {
  const { assignmentId } = await seat(giverId, name, days, 'Bar');
  const offer = await giver<Offer>('POST', `/assignments/${assignmentId}/offer`, { to_user_id: ids.maria });
  expect(offer.status).toBe(201);
  const taken = await maria<Offer>('POST', `/offers/${offer.body.id}/accept`);
  expect(taken.body.status).toBe('accepted');
  return taken.body;
}

/** A time off request of `who`, with a reason that tells it apart on the screen. */
async function requestTimeOff(
  who: Api,
  starts_at: string,
  ends_at: string,
  reason: string,
): Promise<TimeOff> {
  const asked = await who<TimeOff>('POST', '/me/time-off', { starts_at, ends_at, reason });
  expect(asked.status).toBe(201);
  return asked.body;
}

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
    const offer = await handover(sam, ids.sam, 'Garden bar', 14);
    // Lena asks for the evening of her Late door shift off.
    const door = await seat(ids.lena, 'Late door', 15, 'Security');
    const request = await requestTimeOff(lena, door.starts_at, door.ends_at, 'My sister’s wedding');

    const { context, page } = await desktop(stage.browser);
    await openApprovals(page);
    const main = page.getByRole('main');

    const card = main
      .getByRole('article', { name: 'Shift handover: Sam Okafor to Maria Weber' })
      .filter({ hasText: 'Garden bar' });
    await expect.poll(() => card.getByText(/seats filled/).count()).toBe(1);
    expect(await card.innerText()).toContain('Bar');
    await card.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toMatch(/^Approved: Garden bar .* moves from Sam Okafor to Maria Weber\.$/);
    await card.waitFor({ state: 'detached' });
    const approved = (await admin<Offer[]>('GET', '/offers?status=approved')).body;
    expect(approved.find((o) => o.id === offer.id)?.from_user_id).toBe(ids.sam);

    // Lena holds the Late door seat in the time she asks for: the API refuses, in words.
    const timeOff = main
      .getByRole('article', { name: 'Time off: Lena Fischer' })
      .filter({ hasText: 'My sister’s wedding' });
    await expect.poll(() => timeOff.getByText('Late door', { exact: false }).count()).toBe(1);
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
    const decided = lenas.find((t) => t.id === request.id);
    expect([decided?.status, decided?.decision_reason]).toEqual([
      'rejected',
      'The door needs you that night.',
    ]);
    await context.close();
  });

  it('has no serious accessibility problem, light and dark, with a rejection open', async () => {
    await requestTimeOff(maria, at(40, 0), at(42, 0), 'A course in Leipzig');
    for (const colorScheme of ['light', 'dark'] as const) {
      const { context, page } = await desktop(stage.browser, { colorScheme });
      await openApprovals(page);
      await expectAccessible(page);
      const card = page
        .getByRole('main')
        .getByRole('article', { name: 'Time off: Maria Weber' })
        .filter({ hasText: 'A course in Leipzig' });
      await card.getByRole('button', { name: 'Reject' }).click();
      await card.getByRole('textbox', { name: 'Reason for rejecting' }).waitFor();
      await expectAccessible(page);
      await context.close();
    }
  });

  it('approves time off with the keyboard alone', async () => {
    const request = await requestTimeOff(sam, at(30, 8), at(32, 8), 'Moving house');
    const { context, page } = await desktop(stage.browser);
    await openApprovals(page);
    await page
      .getByRole('main')
      .getByRole('article', { name: 'Time off: Sam Okafor' })
      .filter({ hasText: 'Moving house' })
      .getByText('None', { exact: true })
      .waitFor();
    // Tab to the Approve button of Sam's request (the button names the request it acts on).
    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        return `${element?.innerText ?? ''} | ${element?.getAttribute('aria-describedby') ?? ''}`;
      });
    const target = `Approve | time-off-${request.id}`;
    let reached = false;
    for (let i = 0; i < 120 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await focused()) === target;
    }
    expect(reached).toBe(true);
    expect(
      await page.evaluate(() => {
        const about = document.activeElement?.getAttribute('aria-describedby');
        return about ? document.getElementById(about)?.innerText : '';
      }),
    ).toBe('Time off: Sam Okafor');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toMatch(/^Approved: time off of Sam Okafor, /);
    const sams = (await admin<TimeOff[]>('GET', `/time-off?user_id=${ids.sam}`)).body;
    expect(sams.find((t) => t.id === request.id)?.status).toBe('approved');
    // The keyboard stays on the screen: focus is on its heading.
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    await context.close();
  });

  it('speaks German, down to the empty inbox', async () => {
    // Whatever the other tests left waiting is decided first: the inbox then holds only
    // this test's handover, so deciding it empties the inbox.
    for (const left of (await admin<Offer[]>('GET', '/offers?status=accepted&limit=500')).body) {
      expect((await admin('POST', `/offers/${left.id}/reject`, {})).status).toBe(200);
    }
    for (const left of (await admin<TimeOff[]>('GET', '/time-off?status=requested&limit=500')).body) {
      expect((await admin('POST', `/time-off/${left.id}/reject`, {})).status).toBe(200);
    }
    const offer = await handover(lena, ids.lena, 'Terrassenbar', 16);

    const { context, page } = await desktop(stage.browser, { locale: 'de-DE' });
    await openApprovals(page, 'Freigaben');
    const card = page
      .getByRole('main')
      .getByRole('article', { name: 'Schichtübergabe: Lena Fischer an Maria Weber' })
      .filter({ hasText: 'Terrassenbar' });
    await card.getByRole('button', { name: 'Ablehnen' }).click();
    await card.getByRole('textbox', { name: 'Grund der Ablehnung' }).fill('Maria arbeitet schon genug.');
    await card.getByRole('button', { name: 'Jetzt ablehnen' }).click();
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toMatch(/^Abgelehnt: Lena Fischer behält Terrassenbar /);
    await page.getByText('Nichts wartet auf deine Freigabe.').waitFor();
    const rejected = (await admin<Offer[]>('GET', '/offers?status=rejected&limit=500')).body;
    const mine = rejected.find((o) => o.id === offer.id);
    expect([mine?.from_user_id, mine?.decision_reason]).toEqual([ids.lena, 'Maria arbeitet schon genug.']);
    await context.close();
  });
});
