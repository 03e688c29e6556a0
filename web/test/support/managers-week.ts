import { readFile } from 'node:fs/promises';
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { mondayOf } from '../../src/admin/schedule/time.ts';
import { fromLocal } from '../../src/admin/ui/wall-time.ts';
import { addDays, dateIn } from '../../src/i18n/format.ts';
import { demo, openManagerScreen, signIn } from './app.ts';
import { desktop, phone } from './browser.ts';
import type { Stage } from './stage.ts';
import { apiAs, tokenAs } from './tokens.ts';

/** The demo tenant's zone: where the week is planned. */
const zone = 'Europe/Berlin';
const eventName = 'Harbour festival';

const status = (page: Page) => page.getByRole('status').filter({ hasText: /\S/ });

/** Picks the option of a select whose text holds `text` (options name events with their dates). */
async function chooseOption(select: Locator, text: string): Promise<void> {
  const label = await select.locator('option', { hasText: text }).first().textContent();
  await select.selectOption({ label: label ?? '' });
}

/**
 * The first of `days` on which none of `people` holds a seat overlapping 10:00-16:00 in
 * `zone` (the hours of the event's shifts), read through their own /me/assignments.
 */
async function firstFreeDay(
  people: Awaited<ReturnType<typeof apiAs>>[],
  zone: string,
  days: string[],
): Promise<string> {
  for (const day of days) {
    const from = Date.parse(fromLocal(zone, `${day}T10:00`));
    const to = Date.parse(fromLocal(zone, `${day}T16:00`));
    let free = true;
    for (const person of people) {
      const seats = await person<{ shift: { starts_at: string; ends_at: string } }[]>(
        'GET',
        `/me/assignments?from=${day}&to=${addDays(day, 1)}`,
      );
      if (seats.body.some((s) => Date.parse(s.shift.starts_at) < to && Date.parse(s.shift.ends_at) > from))
        free = false;
    }
    if (free) return day;
  }
  throw new Error(`no day of ${days.join(', ')} is free for the claim`);
}

/** The grid's shift of the event on a day of the week shown (0 = Monday). */
function shiftOnDay(page: Page, day: number): Locator {
  return page
    .getByRole('table')
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: new RegExp(eventName) }) })
    .getByRole('cell')
    .nth(day)
    .getByRole('button', { name: /10:00/ });
}

/** Shows the week of `date` in the Schedule, from the week shown now (`shown`, its Monday). */
async function goToWeek(page: Page, shown: string, date: string): Promise<string> {
  const target = mondayOf(date);
  const label = target < shown ? 'Previous week' : 'Next week';
  for (let monday = shown; monday !== target; monday = addDays(monday, target < shown ? -7 : 7)) {
    await page.getByRole('button', { name: label }).click();
  }
  return target;
}

const dayIndex = (date: string) => (new Date(`${date}T12:00:00Z`).getUTCDay() + 6) % 7;

/** Gives a person the Bar seat of the event's shift on `date`, from the Schedule's grid. */
async function assign(page: Page, date: string, person: string): Promise<void> {
  await shiftOnDay(page, dayIndex(date)).click();
  const dialog = page.getByRole('dialog', { name: eventName });
  await dialog.getByLabel('Person for Bar').selectOption({ label: person });
  await dialog.getByRole('button', { name: 'Assign' }).click();
  await expect.poll(() => dialog.getByRole('status').textContent()).toBe(`${person} is on it as Bar.`);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
}

/**
 * A manager's week, as one person does it in the browser, with the staff app beside it:
 * invite two people, create an event, generate its week, give seats, publish it with its
 * shifts; an employee claims a shift on her phone; approve a swap and a time off; record
 * time; export the month and read the CSV back exactly. Days are counted from today in the
 * tenant's zone: the event starts yesterday, so one of its shifts has ended (time can be
 * recorded for it) and the others are still to come (they can be claimed).
 */
export async function planAndPayAWeek(stage: Stage): Promise<void> {
  const admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
  const maria = await apiAs(stage.scheduler, 'demo-employee-1', 'employee');
  const lena = await apiAs(stage.scheduler, 'demo-employee-3', 'employee');
  const sam = await apiAs(stage.scheduler, 'demo-employee-2', 'employee');
  const today = dateIn(zone, new Date());
  const yesterday = addDays(today, -1);
  // A swap needs the manager's approval in this tenant (set meanwhile by a colleague).
  const settings = await admin<Record<string, unknown>>('GET', '/tenant/settings');
  expect(
    (await admin('PATCH', '/tenant/settings', { ...settings.body, offers_need_approval: true })).status,
  ).toBe(200);

  const { context, page } = await desktop(stage.browser);
  await signIn(page, stage.scheduler.base, demo.alex);

  // People: invite two.
  await openManagerScreen(page, 'People');
  for (const [subject, name] of [
    ['harbour-ida', 'Ida Invited'],
    ['harbour-ben', 'Ben Invited'],
  ] as const) {
    await page.getByRole('button', { name: 'Invite' }).click();
    const form = page.getByRole('form', { name: 'Invite a person' });
    await form.getByRole('textbox', { name: 'Sign-in subject' }).fill(subject);
    await form.getByRole('textbox', { name: 'Name' }).fill(name);
    await form.getByRole('textbox', { name: 'E-mail' }).fill(`${subject}@demo.invalid`);
    await form.getByRole('combobox', { name: 'Role' }).selectOption({ label: 'Employee' });
    await form.getByRole('checkbox', { name: 'Bar' }).check();
    await form.getByRole('button', { name: 'Invite' }).click();
    await expect
      .poll(() => status(page).textContent())
      .toBe(`${name} is added: their first sign-in lands on this record.`);
  }

  // Schedule: the event, its week of shifts, two seats given, published with its shifts.
  await openManagerScreen(page, 'Schedule');
  await page.getByRole('button', { name: 'New event' }).click();
  const eventDialog = page.getByRole('dialog', { name: 'New event' });
  await eventDialog.getByLabel('Event name').fill(eventName);
  await eventDialog.getByLabel('Start', { exact: true }).fill(`${yesterday}T08:00`);
  await eventDialog.getByLabel('End', { exact: true }).fill(`${addDays(today, 6)}T20:00`);
  await eventDialog.getByRole('button', { name: 'Create event' }).click();
  await expect.poll(() => status(page).textContent()).toContain(`Event “${eventName}” created as a draft.`);
  let shown = mondayOf(yesterday);

  await page.getByRole('button', { name: 'Generate shifts' }).click();
  const generate = page.getByRole('dialog', { name: 'Generate shifts' });
  await chooseOption(generate.getByLabel('Event', { exact: true }), eventName);
  await generate.getByLabel('Start time').fill('10:00');
  await generate.getByLabel('End time').fill('16:00');
  await generate.getByRole('button', { name: 'Add a role' }).click();
  await generate.getByLabel('Role 1').selectOption({ label: 'Bar' });
  await generate.getByLabel('Seats 1').fill('2');
  await generate.getByRole('button', { name: 'Generate', exact: true }).click();
  await generate.getByRole('heading', { name: 'Draft shifts generated: 8' }).waitFor();
  await page.keyboard.press('Escape');
  await generate.waitFor({ state: 'detached' });

  shown = await goToWeek(page, shown, yesterday);
  await assign(page, yesterday, 'Ida Invited');
  const later = addDays(today, 2);
  shown = await goToWeek(page, shown, later);
  await assign(page, later, 'Ben Invited');

  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  const publish = page.getByRole('dialog', { name: 'Publish' });
  await publish.getByRole('radio', { name: 'An event with all its draft shifts' }).check();
  await chooseOption(publish.getByLabel('Event', { exact: true }), eventName);
  const preview = publish.getByRole('region', { name: 'What employees will see' });
  await preview.getByText('Shifts that become visible to employees: 8').waitFor();
  expect(await preview.textContent()).toContain(`The event “${eventName}” is published: employees see it.`);
  expect(await preview.textContent()).toMatch(
    /\(2\): Ben Invited \(\d{4}-W\d\d\), Ida Invited \(\d{4}-W\d\d\)\./,
  );
  await publish.getByRole('button', { name: 'Publish now (8)' }).click();
  await expect.poll(() => status(page).textContent()).toBe('Shifts published: 8.');

  // Maria claims a shift of the event on her phone (the first day from tomorrow on, but
  // Ben's, on which neither she nor Lena, who takes it from her later, works at the
  // shift's hours: the demo week gives them seats on some weekdays); the manager's grid
  // shows her on it.
  const claimDay = await firstFreeDay(
    [maria, lena],
    zone,
    [1, 3, 4, 5].map((n) => addDays(today, n)),
  );
  const staff = await phone(stage.browser, { base: stage.scheduler.base });
  await signIn(staff.page, stage.scheduler.base, demo.maria);
  await staff.page.getByRole('link', { name: 'Open shifts' }).click();
  const claimStart = new Date(fromLocal(zone, `${claimDay}T10:00`));
  const card = staff.page
    .getByRole('listitem')
    .filter({ hasText: eventName })
    .filter({
      hasText: new Intl.DateTimeFormat('en-GB', { timeZone: zone, day: 'numeric', month: 'short' }).format(
        claimStart,
      ),
    })
    .filter({ has: staff.page.getByRole('button', { name: 'Claim' }) });
  await card.getByRole('button', { name: 'Claim' }).first().click();
  await expect
    .poll(() => staff.page.getByRole('status').filter({ hasText: /\S/ }).textContent())
    .toContain(eventName);
  await staff.context.close();
  // The Schedule opened again reads the week as it is now.
  await openManagerScreen(page, 'People');
  await openManagerScreen(page, 'Schedule');
  await goToWeek(page, mondayOf(today), claimDay);
  await expect.poll(() => shiftOnDay(page, dayIndex(claimDay)).textContent()).toContain('1/2 filled');

  // Maria hands that seat to Lena, who takes it; Sam asks for two days off later on.
  const seats = await maria<{ id: string; shift: { name: string; starts_at: string } }[]>(
    'GET',
    `/me/assignments?from=${claimDay}&to=${addDays(claimDay, 1)}`,
  );
  const seat = seats.body.find((s) => s.shift.name === eventName);
  const lenaId = (await lena<{ id: string }>('GET', '/me')).body.id;
  const offer = await maria<{ id: string }>('POST', `/assignments/${seat?.id}/offer`, { to_user_id: lenaId });
  expect(offer.status).toBe(201);
  expect((await lena('POST', `/offers/${offer.body.id}/accept`)).status).toBe(200);
  const off = await sam<{ id: string }>('POST', '/me/time-off', {
    starts_at: fromLocal(zone, `${addDays(today, 20)}T00:00`),
    ends_at: fromLocal(zone, `${addDays(today, 22)}T00:00`),
    reason: 'Family visit',
  });
  expect(off.status).toBe(201);

  // Approvals: the swap and the time off.
  await openManagerScreen(page, 'Approvals');
  const handover = page.getByRole('article', { name: 'Shift handover: Maria Weber to Lena Fischer' });
  await handover.getByRole('button', { name: 'Approve' }).click();
  await expect.poll(() => status(page).textContent()).toMatch(/^Approved: /);
  const timeOff = page.getByRole('article', { name: 'Time off: Sam Okafor' });
  await timeOff.getByRole('button', { name: 'Approve' }).click();
  await timeOff.waitFor({ state: 'detached' });
  const offers = await admin<{ id: string; status: string }[]>('GET', '/offers?status=approved');
  expect(offers.body.map((o) => o.id)).toContain(offer.body.id);
  const samOff = await sam<{ id: string; status: string }[]>('GET', '/time-off');
  expect(samOff.body.find((t) => t.id === off.body.id)?.status).toBe('approved');

  // Timesheets: Ida's time of yesterday, then the month's payroll export.
  await openManagerScreen(page, 'Timesheets');
  const shiftSelect = page.getByRole('combobox', { name: /^Shift\b/ });
  await chooseOption(shiftSelect, eventName);
  const form = page.getByRole('form', { name: 'Record time' });
  await expect
    .poll(() => form.getByLabel('Person').locator('option:checked').textContent())
    .toBe('Ida Invited');
  await form.getByLabel('Break (minutes)').fill('30');
  await page.getByRole('button', { name: 'Record time' }).click();
  await status(page).filter({ hasText: 'Time recorded for Ida Invited.' }).waitFor();

  const month = yesterday.slice(0, 7);
  await page.getByLabel('Month').fill(month);
  // The accountant opens it in a German Excel: semicolons, hours beside minutes.
  await page.getByLabel('Delimiter').selectOption({ label: 'Semicolon' });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download CSV' }).click(),
  ]);
  const bytes = await readFile((await download.path()) ?? '');
  const csv = bytes.toString('utf8');
  const next = month.endsWith('-12')
    ? `${Number(month.slice(0, 4)) + 1}-01`
    : `${month.slice(0, 5)}${String(Number(month.slice(5)) + 1).padStart(2, '0')}`;
  const response = await fetch(
    `${stage.scheduler.base}/api/v1/time-tracking/export.csv?from=${month}-01&to=${next}-01&delimiter=semicolon&hours=true`,
    { headers: { authorization: `Bearer ${await tokenAs(stage.scheduler, 'demo-admin', 'admin')}` } },
  );
  // Byte for byte what the API writes for the month (its byte-order mark included).
  expect(bytes.equals(Buffer.from(await response.arrayBuffer()))).toBe(true);
  const rows = csv
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const ida = rows.filter((row) => row.includes('Ida Invited'));
  expect(ida).toHaveLength(1);
  const fields = (ida[0] ?? '').split(';');
  expect(fields.slice(1, 5)).toEqual(['Ida Invited', 'harbour-ida@demo.invalid', eventName, eventName]);
  expect(fields[5]).toMatch(new RegExp(`^${yesterday} 10:00 [+-]\\d\\d:\\d\\d$`));
  expect(fields[6]).toMatch(new RegExp(`^${yesterday} 16:00 [+-]\\d\\d:\\d\\d$`));
  // 30 minutes' break: 330 worked of 360 scheduled, 30 short; hours beside minutes, with
  // a decimal comma as German Excel reads them.
  expect(fields.slice(7, 15)).toEqual(['30', '0,50', '330', '5,50', '360', '6,00', '-30', '-0,50']);
  expect(rows[0]?.split(';').slice(7, 15)).toEqual([
    'break_minutes',
    'break_hours',
    'worked_minutes',
    'worked_hours',
    'scheduled_minutes',
    'scheduled_hours',
    'overtime_minutes',
    'overtime_hours',
  ]);
  await context.close();
}
