import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { mondayOf, shiftByDays } from '../../src/admin/schedule/time.ts';
import { fromLocal, toLocal } from '../../src/admin/ui/wall-time.ts';
import { demo, expectAccessible, openManagerScreen, signIn } from '../support/app.ts';
import { chromiumAvailable, desktop, NEEDS_CHROMIUM } from '../support/browser.ts';
import { useStage } from '../support/stage.ts';
import { apiAs } from '../support/tokens.ts';

/**
 * The Schedule screen as Alex (admin of the demo tenant, Europe/Berlin) plans with it:
 * events weeks ahead (clear of the demo week), their shifts generated overnight, seats
 * given and refused, published after a preview, split, deleted, copied forward. The tests
 * share one scheduler but not their data: each plans a week of its own (CI shuffles them).
 */
const stage = useStage();

const zone = 'Europe/Berlin';

/** A calendar date in the demo tenant's zone, some days from today. */
function dateFromToday(days: number): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date());
  const [y, m, d] = today.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}
const weekday = new Date(`${dateFromToday(0)}T12:00:00Z`).getUTCDay(); // 0 = Sunday
/** A day of a week ahead: 0 is its Monday. */
const dayOfWeek = (weeksAhead: number, day: number) =>
  dateFromToday(-((weekday + 6) % 7) + 7 * weeksAhead + day);

async function openSchedule(page: Page, weeks: number, options: { heading?: string; next?: string } = {}) {
  await signIn(page, stage.scheduler.base, demo.alex);
  await openManagerScreen(page, options.heading ?? 'Schedule');
  for (let i = 0; i < weeks; i++)
    await page.getByRole('button', { name: options.next ?? 'Next week' }).click();
}

/**
 * A week planned through the API, as another admin would: an event from Monday 10:00 to
 * Wednesday 20:00, a draft shift 18:00–02:00 each of its days with one Security seat, and
 * Sam (who holds Security) on Monday's when asked.
 */
async function planWeek(weeksAhead: number, name: string, options: { sam?: boolean } = {}): Promise<void> {
  const call = await apiAs(stage.scheduler, 'demo-admin', 'admin');
  const event = await call<{ id: string }>('POST', '/events', {
    name,
    starts_at: fromLocal(zone, `${dayOfWeek(weeksAhead, 0)}T10:00`),
    ends_at: fromLocal(zone, `${dayOfWeek(weeksAhead, 2)}T20:00`),
  });
  const roles = await call<{ id: string; name: string }[]>('GET', '/roles');
  const security = roles.body.find((role) => role.name === 'Security')?.id;
  const shifts = await call<{ id: string }[]>('POST', `/events/${event.body.id}/shifts/bulk`, {
    start_time: '18:00',
    end_time: '02:00',
    slots: [{ role_id: security, capacity: 1 }],
  });
  expect(shifts.status).toBe(201);
  if (options.sam) {
    const users = await call<{ id: string; display_name: string | null }[]>('GET', '/users');
    const sam = users.body.find((user) => user.display_name === 'Sam Okafor')?.id;
    const first = shifts.body[0]?.id ?? '';
    const slots = await call<{ id: string }[]>('GET', `/shifts/${first}/slots`);
    const seat = await call('POST', `/shifts/${first}/slots/${slots.body[0]?.id}/assign`, { user_id: sam });
    expect(seat.status).toBe(201);
  }
}

/** Picks an event in a select of events ("Winter fair (Mon 14 Dec, 10:00 – …)"). */
async function chooseEvent(select: Locator, eventName: string): Promise<void> {
  const label = await select.locator('option', { hasText: eventName }).textContent();
  await select.selectOption({ label: label ?? '' });
}

const grid = (page: Page) => page.getByRole('table');
const shiftButtons = (page: Page) => grid(page).getByRole('button');
const status = (page: Page) => page.getByRole('status').filter({ hasText: /\S/ });

describe('the Schedule screen', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('creates an event, generates overnight shifts, assigns with a refusal in words, publishes after a preview', async () => {
    const eventName = 'Winter fair';
    const { context, page } = await desktop(stage.browser);
    await openSchedule(page, 0);

    await page.getByRole('button', { name: 'New event' }).click();
    const eventDialog = page.getByRole('dialog', { name: 'New event' });
    await eventDialog.getByLabel('Event name').fill(eventName);
    await eventDialog.getByLabel('Start', { exact: true }).fill(`${dayOfWeek(3, 0)}T10:00`);
    await eventDialog.getByLabel('End', { exact: true }).fill(`${dayOfWeek(3, 2)}T20:00`);
    await eventDialog.getByLabel('Description (optional)').fill('Stalls and mulled wine');
    await eventDialog.getByRole('button', { name: 'Create event' }).click();
    await expect.poll(() => status(page).textContent()).toContain(`Event “${eventName}” created as a draft.`);
    // The grid went to the event's week, which has no shift yet.
    await page.getByText('No shifts start in this week.').waitFor();

    await page.getByRole('button', { name: 'Generate shifts' }).click();
    const generate = page.getByRole('dialog', { name: 'Generate shifts' });
    await chooseEvent(generate.getByLabel('Event', { exact: true }), eventName);
    await generate.getByLabel('Start time').fill('18:00');
    await generate.getByLabel('End time').fill('02:00');
    await generate.getByRole('button', { name: 'Add a role' }).click();
    await generate.getByLabel('Role 1').selectOption({ label: 'Security' });
    await generate.getByLabel('Seats 1').fill('1');
    await generate.getByRole('button', { name: 'Generate', exact: true }).click();
    await generate.getByRole('heading', { name: 'Draft shifts generated: 3' }).waitFor();
    // As the API made them: overnight, each naming the day it ends, 8 hours long.
    const made = await generate.getByRole('listitem').allTextContents();
    expect(made).toHaveLength(3);
    for (const line of made) expect(line).toMatch(/18:00.*02:00.*8 hr|18:00.*02:00.*8 h/);
    // The event ends Wednesday 20:00: the last night runs past it, and the API's warning says so.
    expect(made.map((line) => line.endsWith('ends after the event'))).toEqual([false, false, true]);
    await page.keyboard.press('Escape');
    await generate.waitFor({ state: 'detached' });

    // Drafts, in words, each once on its start day with the day it ends.
    await expect.poll(() => shiftButtons(page).count()).toBe(3);
    const first = shiftButtons(page).first();
    await expect
      .poll(() => first.textContent())
      .toMatch(/18:00–02:00.*ends.*Winter fair.*0\/1 filled.*Draft/);
    expect(await page.getByRole('rowheader', { name: /Winter fair/ }).textContent()).toContain('Draft');

    // Maria lacks the Security role: refused in words. Sam holds it.
    await first.click();
    const shift = page.getByRole('dialog', { name: eventName });
    await shift.getByLabel('Person for Security').selectOption({ label: 'Maria Weber' });
    await shift.getByRole('button', { name: 'Assign' }).click();
    await expect
      .poll(() => shift.getByRole('alert').textContent())
      .toBe('This person is not qualified for the role of this slot.');
    await shift.getByLabel('Person for Security').selectOption({ label: 'Sam Okafor' });
    await shift.getByRole('button', { name: 'Assign' }).click();
    await expect.poll(() => shift.getByRole('status').textContent()).toBe('Sam Okafor is on it as Security.');
    await shift.getByRole('button', { name: 'Unassign Sam Okafor' }).waitFor();
    await page.keyboard.press('Escape');
    await shift.waitFor({ state: 'detached' });
    await expect.poll(() => first.textContent()).toContain('1/1 filled');

    // Publish the event with its shifts: the preview first, axe-checked while open.
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    const publish = page.getByRole('dialog', { name: 'Publish' });
    await publish.getByRole('radio', { name: 'An event with all its draft shifts' }).check();
    await chooseEvent(publish.getByLabel('Event', { exact: true }), eventName);
    const preview = publish.getByRole('region', { name: 'What employees will see' });
    await preview.getByText('Shifts that become visible to employees: 3').waitFor();
    const previewText = await preview.textContent();
    expect(previewText).toContain(`The event “${eventName}” is published: employees see it.`);
    expect(previewText).toMatch(
      /People told of their published week, once per week \(1\): Sam Okafor \(\d{4}-W\d\d(, \d{4}-W\d\d)?\)\./,
    );
    expect(previewText).toContain(
      'Webhook events it sends: 1 × event.published, 3 × shift.published. Webhooks of this tenant that receive them: 0.',
    );
    await expectAccessible(page);
    await publish.getByRole('button', { name: 'Publish now (3)' }).click();
    await expect.poll(() => status(page).textContent()).toBe('Shifts published: 3.');
    await expect.poll(() => grid(page).getByText('Draft').count()).toBe(0);
    await context.close();
  });

  it('groups the week by person and by role', async () => {
    await planWeek(4, 'Spring fair', { sam: true });
    const { context, page } = await desktop(stage.browser);
    await openSchedule(page, 4);
    await expect.poll(() => shiftButtons(page).count()).toBe(3);
    await page.getByLabel('Group by').selectOption('person');
    await page.getByRole('rowheader', { name: 'Sam Okafor' }).waitFor();
    const samRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Sam Okafor' }) });
    expect(await samRow.getByRole('button').count()).toBe(1);
    const open = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Open seats' }) });
    expect(await open.getByRole('button').count()).toBe(2);
    await page.getByLabel('Group by').selectOption('role');
    await page.getByRole('rowheader', { name: 'Security' }).waitFor();
    expect(await page.getByRole('columnheader').count()).toBe(8);
    await context.close();
  });

  it('edits and splits a shift, deletes a piece (asking once more), copies the week forward and publishes a selection', async () => {
    const eventName = 'Night market';
    await planWeek(5, eventName, { sam: true });
    const { context, page } = await desktop(stage.browser);
    await openSchedule(page, 5);
    await expect.poll(() => shiftButtons(page).count()).toBe(3);
    // Tuesday's shift: a new name, and an hour shorter.
    await shiftButtons(page).nth(1).click();
    let shift = page.getByRole('dialog', { name: eventName });
    await shift.getByLabel('Shift name').fill('Late stall');
    await shift.getByLabel('End', { exact: true }).fill(`${dayOfWeek(5, 2)}T01:00`);
    await shift.getByRole('button', { name: 'Save shift' }).click();
    await page.getByRole('dialog', { name: 'Late stall' }).waitFor();
    await page.keyboard.press('Escape');
    await expect
      .poll(() => shiftButtons(page).nth(1).textContent())
      .toMatch(/^18:00–01:00 ends .* Late stall /);

    // Monday's shift has Sam on it: the API refuses a split, said in words.
    await shiftButtons(page).first().click();
    shift = page.getByRole('dialog', { name: eventName });
    await shift.getByRole('button', { name: 'Split shift' }).click();
    await expect
      .poll(() => shift.getByRole('alert').textContent())
      .toBe(
        'Not while people are on this shift (or it changed meanwhile): unassign them first, then try again.',
      );
    await page.keyboard.press('Escape');
    await shift.waitFor({ state: 'detached' });

    // The last shift has no one on it: split into two pieces of four hours.
    await shiftButtons(page).last().click();
    shift = page.getByRole('dialog', { name: eventName });
    await shift.getByLabel('Pieces').fill('2');
    await shift.getByRole('button', { name: 'Split shift' }).click();
    await expect.poll(() => status(page).textContent()).toBe('Split into pieces: 2.');
    await expect.poll(() => shiftButtons(page).count()).toBe(4);
    expect(await shiftButtons(page).allTextContents()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^18:00–22:00/), expect.stringMatching(/^22:00–02:00/)]),
    );

    await shiftButtons(page)
      .filter({ hasText: /^22:00–02:00/ })
      .click();
    shift = page.getByRole('dialog', { name: eventName });
    await shift.getByRole('button', { name: 'Delete shift' }).click();
    await shift
      .getByRole('group', { name: /Delete this shift/ })
      .getByRole('button', { name: 'Yes, delete' })
      .click();
    await expect.poll(() => status(page).textContent()).toBe(`Shift “${eventName}” deleted.`);
    await expect.poll(() => shiftButtons(page).count()).toBe(3);

    await page.getByRole('button', { name: 'Copy week forward' }).click();
    const copy = page.getByRole('dialog', { name: 'Copy week forward' });
    await copy.getByRole('button', { name: 'Copy (3)' }).click();
    await expect.poll(() => status(page).textContent()).toMatch(/^Shifts copied to .* as drafts: 3\.$/);
    await page.getByRole('button', { name: 'Next week' }).click();
    await expect.poll(() => shiftButtons(page).filter({ hasText: 'Draft' }).count()).toBe(3);
    // Seats copied, people not.
    await expect
      .poll(
        async () =>
          (await shiftButtons(page).allTextContents()).filter((t) => t.includes('0/1 filled')).length,
      )
      .toBe(3);

    // Publish a selection: one of the copies.
    await page.getByRole('checkbox').first().check();
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    const publish = page.getByRole('dialog', { name: 'Publish' });
    await publish.getByText('Shifts that become visible to employees: 1').waitFor();
    await publish.getByRole('button', { name: 'Publish now (1)' }).click();
    await expect.poll(() => status(page).textContent()).toBe('Shifts published: 1.');
    await expect.poll(() => shiftButtons(page).filter({ hasText: 'Draft' }).count()).toBe(2);
    await context.close();
  });

  it('creates an event and assigns a seat with the keyboard alone; Escape closes and returns focus', async () => {
    const eventName = 'Harbour nights';
    await planWeek(7, eventName);
    const { context, page } = await desktop(stage.browser);
    await openSchedule(page, 7);
    await expect.poll(() => shiftButtons(page).count()).toBe(3);
    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        return element?.getAttribute('aria-label') ?? element?.innerText?.trim() ?? '';
      });
    /** Tabs until the element named `name` has focus. */
    async function reach(name: RegExp): Promise<void> {
      for (let i = 0; i < 80; i++) {
        await page.keyboard.press('Tab');
        if (name.test(await focused())) return;
      }
      throw new Error(`never reached ${name}`);
    }
    await reach(/^New event$/);
    await page.keyboard.press('Enter');
    await reach(/^$/); // the name field (an input has no inner text)
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).type)).toBe('text');
    await page.keyboard.type('Keyboard gala');
    await reach(/^Create event$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => status(page).textContent()).toBe('Event “Keyboard gala” created as a draft.');

    // A shift for it, on the week's Monday (the times the form starts with), one Bar seat.
    await reach(/^Add shift$/);
    await page.keyboard.press('Enter');
    const add = page.getByRole('dialog', { name: 'Add shift' });
    await add.waitFor();
    expect(await add.getByRole('combobox', { name: 'Event' }).inputValue()).not.toBe('');
    await reach(/^$/); // the name field, after the event
    await page.keyboard.type('Gala bar');
    await reach(/^Add shift$/);
    await page.keyboard.press('Enter');
    await expect.poll(() => status(page).textContent()).toBe('Shift “Gala bar” added as a draft.');
    await expect.poll(() => shiftButtons(page).count()).toBe(4);

    // Monday's night shift: open it, give Lena the seat, close with Escape.
    await reach(/^18:00–02:00/);
    await page.keyboard.press('Enter');
    const shift = page.getByRole('dialog', { name: eventName });
    await shift.waitFor();
    await reach(/^Choose a person/);
    await page.keyboard.type('Lena');
    await reach(/^Assign$/);
    await page.keyboard.press('Enter');
    await expect
      .poll(() => shift.getByRole('status').textContent())
      .toBe('Lena Fischer is on it as Security.');
    await page.keyboard.press('Escape');
    await shift.waitFor({ state: 'detached' });
    expect(await focused()).toMatch(/^18:00–02:00/);
    await context.close();
  });

  it('speaks German and has no serious accessibility problem in the dark with a form open', async () => {
    const eventName = 'Winterzauber';
    await planWeek(9, eventName, { sam: true });
    const { context, page } = await desktop(stage.browser, { locale: 'de-DE', colorScheme: 'dark' });
    await openSchedule(page, 9, { heading: 'Dienstplan', next: 'Nächste Woche' });
    await page.getByLabel('Gruppieren nach').waitFor();
    await expect.poll(() => shiftButtons(page).count()).toBe(3);
    await expectAccessible(page);
    await shiftButtons(page).filter({ hasText: eventName }).first().click();
    await page.getByRole('dialog', { name: eventName }).getByRole('heading', { name: 'Plätze' }).waitFor();
    await expectAccessible(page);
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Schicht hinzufügen' }).click();
    await page.getByRole('dialog', { name: 'Schicht hinzufügen' }).getByLabel('Rolle 1').waitFor();
    await expectAccessible(page);
    await context.close();
  });
});

describe("the Schedule screen's calendar", () => {
  it('reads wall-clock times in the tenant zone across clock changes, and weeks from Monday', () => {
    // Berlin: 29 March 2026 skips 02:00–03:00, 25 October 2026 repeats 02:00–03:00.
    expect(fromLocal(zone, '2026-03-28T22:00')).toBe('2026-03-28T21:00:00.000Z');
    expect(fromLocal(zone, '2026-03-29T02:30')).toBe('2026-03-29T01:30:00.000Z'); // 03:30, after the gap
    expect(fromLocal(zone, '2026-10-25T02:30')).toBe('2026-10-25T00:30:00.000Z'); // the first 02:30
    expect(toLocal(zone, '2026-10-25T01:30:00.000Z')).toBe('2026-10-25T02:30');
    // A week later is the same wall time: 168 hours less the hour the clocks skip.
    expect(shiftByDays(zone, '2026-03-24T08:00:00.000Z', 7)).toBe('2026-03-31T07:00:00.000Z');
    expect(mondayOf('2026-11-29')).toBe('2026-11-23');
    expect(mondayOf('2026-11-30')).toBe('2026-11-30');
  });
});
