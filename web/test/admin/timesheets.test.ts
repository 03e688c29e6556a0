import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openDevIssuer } from '../../../scheduler/src/auth/dev-issuer.ts';
import { runsIf } from '../../../scripts/test-skip.ts';
import { toLocal as wallTime } from '../../src/admin/ui/wall-time.ts';
import { addDays, dateIn, formatter } from '../../src/i18n/format.ts';
import { demo, expectAccessible, openManagerScreen, signIn } from '../support/app.ts';
import { chromiumAvailable, desktop, NEEDS_CHROMIUM } from '../support/browser.ts';
import { useStage } from '../support/stage.ts';
import { apiAs } from '../support/tokens.ts';

/** Timesheets: record and correct a seat's time, balances by name, payouts, the payroll CSV. */
const stage = useStage();
const zone = 'Europe/Berlin';
/** Minutes and times as the screen writes them for an en-GB browser. */
const { minutes, range } = formatter('en-GB', zone);

interface Shift {
  id: string;
  name: string;
  starts_at: string;
  ends_at: string;
}
interface Assignment {
  id: string;
  user_id: string;
}

async function admin() {
  return apiAs(stage.scheduler, 'demo-admin', 'admin');
}

/** A demo person's user id and overtime balance now (other tests may have moved it). */
async function balanceOf(subject: string): Promise<{ id: string; balance: number }> {
  const person = await apiAs(stage.scheduler, subject, 'employee');
  const id = (await person<{ id: string }>('GET', '/me')).body.id;
  const call = await admin();
  const answer = await call<{ balance_minutes: number }>('GET', `/time-tracking/balance/${id}`);
  expect(answer.status).toBe(200);
  return { id, balance: answer.body.balance_minutes };
}

/** What a colleague sets meanwhile: time may (or may not) be recorded before a shift ends. */
async function recordBeforeEnd(allowed: boolean): Promise<void> {
  const call = await admin();
  const settings = await call<Record<string, unknown>>('GET', '/tenant/settings');
  // The whole record, as PATCH replaces it.
  const patched = await call('PATCH', '/tenant/settings', {
    ...settings.body,
    time_entries_before_end: allowed,
  });
  expect(patched.status).toBe(200);
}

/** A colleague records a seat's time: the shift's own times, the end moved by `extra` minutes. */
async function recordSeat(seat: { shift: Shift; seats: Assignment[] } | undefined, extra: number) {
  const assignment = seat?.seats[0];
  if (!seat || !assignment) throw new Error('no seat in the demo week');
  const call = await admin();
  const recorded = await call('POST', '/time-tracking/entries', {
    shift_assignment_id: assignment.id,
    started_at: seat.shift.starts_at,
    ended_at: new Date(Date.parse(seat.shift.ends_at) + extra * 60_000).toISOString(),
  });
  expect([200, 201]).toContain(recorded.status);
}

/** The demo week's shifts of a name, by start, with their seats. */
async function demoShifts(name: string): Promise<{ shift: Shift; seats: Assignment[] }[]> {
  const call = await admin();
  const today = dateIn(zone, new Date());
  const shifts = await call<Shift[]>('GET', `/shifts?from=${today}&to=${addDays(today, 8)}`);
  return Promise.all(
    shifts.body
      .filter((s) => s.name === name)
      .map(async (shift) => ({
        shift,
        seats: (await call<Assignment[]>('GET', `/shifts/${shift.id}/assignments`)).body,
      })),
  );
}

/** A demo person's first shift of a name in the demo week, with that person's seat only. */
async function seatOf(name: string, subject: string): Promise<{ shift: Shift; seats: Assignment[] }> {
  const person = await apiAs(stage.scheduler, subject, 'employee');
  const userId = (await person<{ id: string }>('GET', '/me')).body.id;
  for (const { shift, seats } of await demoShifts(name)) {
    const theirs = seats.filter((a) => a.user_id === userId);
    if (theirs.length > 0) return { shift, seats: theirs };
  }
  throw new Error(`no ${name} seat of ${subject} in the demo week`);
}

const MINUTE = 60_000;

/**
 * Clocked time, as employees send it from their phones: a new two-hour Bar shift starting
 * in 20 minutes (its clock window open), a seat each (theirs at that time go first), each
 * clocked in and out through the API.
 */
async function clockedSeats(subjects: string[]): Promise<{ shift: Shift; seats: Map<string, string> }> {
  const call = await admin();
  const start = new Date(Math.ceil(Date.now() / MINUTE) * MINUTE + 20 * MINUTE).toISOString();
  const end = new Date(Date.parse(start) + 120 * MINUTE).toISOString();
  const event = (await call<{ id: string; name: string }[]>('GET', '/events')).body.find(
    (e) => e.name === 'Demo week',
  );
  const bar = (await call<{ id: string; name: string }[]>('GET', '/roles')).body.find(
    (r) => r.name === 'Bar',
  );
  const shift = await call<Shift>('POST', '/shifts', {
    event_id: event?.id,
    name: 'Early doors',
    starts_at: start,
    ends_at: end,
    slots: [{ role_id: bar?.id, capacity: subjects.length }],
  });
  expect(shift.status).toBe(201);
  const [slot] = (await call<{ id: string }[]>('GET', `/shifts/${shift.body.id}/slots`)).body;
  const seats = new Map<string, string>();
  for (const subject of subjects) {
    const person = await apiAs(stage.scheduler, subject, 'employee');
    const userId = (await person<{ id: string }>('GET', '/me')).body.id;
    const overlapping = await call<{ id: string; shift: { id: string } }[]>(
      'GET',
      `/users/${userId}/assignments?from=${start}&to=${end}`,
    );
    for (const seat of overlapping.body.filter((a) => a.shift.id !== shift.body.id))
      expect((await call('DELETE', `/shifts/${seat.shift.id}/assignments/${seat.id}`)).status).toBe(204);
    const seat = await call<{ id: string }>('POST', `/shifts/${shift.body.id}/slots/${slot?.id}/assign`, {
      user_id: userId,
    });
    expect(seat.status).toBe(201);
    seats.set(subject, seat.body.id);
  }
  expect((await call('POST', '/shifts/publish', { shift_ids: [shift.body.id] })).status).toBe(200);
  for (const subject of subjects) {
    const person = await apiAs(stage.scheduler, subject, 'employee');
    const id = seats.get(subject);
    expect((await person('POST', `/me/assignments/${id}/clock-in`)).status).toBe(201);
    // The clock-out must come after the clock-in's instant.
    await expect.poll(async () => (await person('POST', `/me/assignments/${id}/clock-out`)).status).toBe(200);
  }
  return { shift: shift.body, seats };
}

/** Opens Timesheets with the demo week's shifts to choose from. */
async function openWithWeek(page: Page): Promise<void> {
  await openManagerScreen(page, 'Timesheets');
  await page.getByLabel('Shifts until').fill(addDays(dateIn(zone, new Date()), 8));
}

async function chooseShift(page: Page, name: string, index = 0): Promise<void> {
  // A select's name also holds its chosen option (its label wraps it).
  const select = page.getByRole('combobox', { name: /^Shift\b/ });
  const label = await select.locator('option', { hasText: name }).nth(index).textContent();
  await select.selectOption({ label: label ?? '' });
}

describe('Timesheets', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it("records a seat's time (refused in words before the shift ends), lists it, corrects it", async () => {
    // Sam's door security of the demo week's second day, and his balance before it.
    const [door] = await demoShifts('Door security');
    const seat = door?.seats[0];
    if (!door || !seat) throw new Error('no door security seat in the demo week');
    const sam = await balanceOf('demo-employee-2');
    expect(seat.user_id).toBe(sam.id);
    const { context, page } = await desktop(stage.browser);
    await recordBeforeEnd(false);
    await signIn(page, stage.scheduler.base, demo.alex);
    await openWithWeek(page);
    // Sam's door security of the demo week's second day: it has not ended yet.
    await chooseShift(page, 'Door security');
    const form = page.getByRole('form', { name: 'Record time' });
    await expect
      .poll(() => form.getByLabel('Person').locator('option:checked').textContent())
      .toBe('Sam Okafor');
    await page.getByRole('button', { name: 'Record time' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toContain('This shift has not ended yet.');

    // Meanwhile a colleague allows recording before the end.
    await recordBeforeEnd(true);

    await page.getByLabel('Break (minutes)').fill('30');
    await page.getByRole('button', { name: 'Record time' }).click();
    await page.getByRole('status').filter({ hasText: 'Time recorded for Sam Okafor.' }).waitFor();
    const entries = page.getByRole('table', { name: 'Recorded time' });
    // Sam's row of this shift's times (other tests may have recorded other time of his).
    const row = entries
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'Sam Okafor' }) })
      .filter({ hasText: range(door.shift.starts_at, door.shift.ends_at) });
    await expect
      .poll(() => row.getByRole('cell').allTextContents())
      .toEqual([
        expect.stringContaining('17:00'),
        minutes(30),
        minutes(330),
        minutes(360),
        minutes(-30),
        'Confirmed',
        'Correct',
      ]);
    const balances = page.getByRole('table', { name: 'Overtime balances' });
    const samBalance = balances
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'Sam Okafor' }) });
    await expect
      .poll(() => samBalance.getByRole('cell').first().textContent())
      .toBe(minutes(sam.balance - 30));

    // A correction: no break after all. The same seat, new times; the balance moves by the difference.
    await row.getByRole('button', { name: 'Correct' }).click();
    await page.getByRole('form', { name: 'Correct the time of Sam Okafor' }).waitFor();
    await page.getByLabel('Break (minutes)').fill('0');
    await page.getByRole('button', { name: 'Save correction' }).click();
    await page.getByRole('status').filter({ hasText: 'Time of Sam Okafor saved.' }).waitFor();
    await expect.poll(() => samBalance.getByRole('cell').first().textContent()).toBe(minutes(sam.balance));
    // One entry for the seat: corrected, not recorded twice.
    const call = await admin();
    const recorded = await call<{ shift_assignment_id: string; break_minutes: number }[]>(
      'GET',
      `/time-tracking/entries?user_id=${sam.id}&limit=500`,
    );
    expect(
      recorded.body.filter((e) => e.shift_assignment_id === seat.id).map((e) => e.break_minutes),
    ).toEqual([0]);
    await context.close();
  });

  it('pays out overtime, and refuses more than the balance in words', async () => {
    // A colleague records Lena's door security (the last of the week) with an hour more than planned.
    await recordBeforeEnd(true);
    const before = await balanceOf('demo-employee-3');
    await recordSeat((await demoShifts('Door security')).at(-1), 60);
    // Her balance now: whatever it was, an hour more.
    const { balance } = await balanceOf('demo-employee-3');
    expect(balance).toBe(before.balance + 60);

    const { context, page } = await desktop(stage.browser);
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Timesheets');
    const payout = page.getByRole('form', { name: 'Pay out overtime' });
    await payout.getByLabel('Person').selectOption({ label: 'Lena Fischer' });
    await payout.getByLabel('Minutes').fill(String(balance + 30));
    await payout.getByRole('button', { name: 'Pay out' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toBe('That is more than this person’s overtime balance.');
    await payout.getByLabel('Minutes').fill('45');
    await payout.getByLabel('Note').fill('December payroll');
    await payout.getByRole('button', { name: 'Pay out' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${minutes(45)} paid out to Lena Fischer.` })
      .waitFor();
    const lena = page
      .getByRole('table', { name: 'Overtime balances' })
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'Lena Fischer' }) });
    await expect.poll(() => lena.getByRole('cell').first().textContent()).toBe(minutes(balance - 45));
    await context.close();
  });

  it("downloads a month's payroll CSV exactly as the API answers it", async () => {
    // A colleague records Lena's Box office seat of the week (Maria's seats are the clocking test's).
    await recordBeforeEnd(true);
    const box = await seatOf('Box office', 'demo-employee-3');
    await recordSeat(box, 0);
    const month = dateIn(zone, new Date(box?.shift.starts_at ?? '')).slice(0, 7);

    const { context, page } = await desktop(stage.browser);
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Timesheets');
    await page.getByLabel('Month').fill(month);
    const delimiter = page.getByRole('combobox', { name: 'Delimiter' });
    expect(await delimiter.locator('option:checked').textContent()).toBe('Comma');
    await delimiter.selectOption({ label: 'Semicolon' });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`payroll-${month}.csv`);
    const file = await readFile((await download.path()) ?? '');

    // The same range from the API: the first day of the month to the first of the next.
    const [y, m] = month.split('-').map(Number) as [number, number];
    const next = m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
    const issuer = await openDevIssuer(stage.scheduler.dataDir, { create: false });
    const token = await issuer.sign({
      tenant: 'demo',
      role: 'admin',
      subject: 'demo-admin',
      ttlSeconds: 600,
    });
    const response = await fetch(
      `${stage.scheduler.base}/api/v1/time-tracking/export.csv?from=${month}-01&to=${next}-01&delimiter=semicolon&hours=true`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    const expected = Buffer.from(await response.arrayBuffer());
    expect(file.equals(expected)).toBe(true);
    const text = file.toString('utf8');
    expect(text).toContain('Box office');
    // Semicolons between the cells, hours beside minutes with a decimal comma.
    const header = text.replace(/^\uFEFF/, '').split('\r\n')[0] ?? '';
    expect(header).toContain(';worked_minutes;worked_hours;');
    expect(text).toMatch(/;-?\d+,\d\d;/);
    await page
      .getByRole('status')
      .filter({ hasText: `payroll-${month}.csv downloaded.` })
      .waitFor();
    await context.close();
  });

  it('passes axe light and dark with its forms, and speaks German', async () => {
    // Recorded time to list (the table shows once there is some): a colleague records Lena's Bar.
    await recordBeforeEnd(true);
    await recordSeat(await seatOf('Bar', 'demo-employee-3'), 0);
    for (const colorScheme of ['light', 'dark'] as const) {
      const { context, page } = await desktop(stage.browser, { colorScheme });
      await signIn(page, stage.scheduler.base, demo.alex);
      await openWithWeek(page);
      await chooseShift(page, 'Bar', 2);
      await page.getByRole('table', { name: 'Recorded time' }).waitFor();
      await page.getByRole('table', { name: 'Overtime balances' }).waitFor();
      await expectAccessible(page);
      await context.close();
    }
    const { context, page } = await desktop(stage.browser, { locale: 'de-DE' });
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Zeiterfassung');
    for (const name of [
      'Zeit erfassen',
      'Erfasste Zeiten',
      'Überstundenkonten',
      'Überstunden auszahlen',
      'Lohnexport',
    ])
      await page.getByRole('heading', { level: 2, name }).waitFor();
    await page.getByLabel('Monat').waitFor();
    await page.getByRole('heading', { level: 2, name: 'Zu bestätigen' }).waitFor();
    // A German manager gets the file German spreadsheets read: semicolons.
    expect(
      await page.getByRole('combobox', { name: 'Trennzeichen' }).locator('option:checked').textContent(),
    ).toBe('Semikolon');
    await context.close();
  });

  it('confirms clocked time as clocked, and corrected; each leaves the list and reaches the balance', async () => {
    const { shift, seats } = await clockedSeats(['demo-employee-1', 'demo-employee-2']);
    const call = await admin();
    const mariaId = (
      await (
        await apiAs(stage.scheduler, 'demo-employee-1', 'employee')
      )<{ id: string }>('GET', '/me')
    ).body.id;
    const before = (await call<{ balance_minutes: number }>('GET', `/time-tracking/balance/${mariaId}`)).body
      .balance_minutes;

    const { context, page } = await desktop(stage.browser);
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Timesheets');
    const waiting = page.getByRole('table', { name: 'To confirm' });
    const rowOf = (name: string) =>
      waiting.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });
    await expect
      .poll(() => rowOf('Maria Weber').getByRole('cell').nth(0).textContent())
      .toContain('Early doors');
    const recorded = page.getByRole('table', { name: 'Recorded time' });
    const recordedRow = (name: string) =>
      recorded
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name }) })
        .filter({ hasText: 'Waiting for confirmation' });
    await recordedRow('Maria Weber').waitFor();

    // Maria's as clocked: a few seconds worked of two hours planned.
    await rowOf('Maria Weber').getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('status').filter({ hasText: 'Time of Maria Weber confirmed.' }).waitFor();
    await rowOf('Maria Weber').waitFor({ state: 'detached' });
    await recordedRow('Maria Weber').waitFor({ state: 'detached' });
    const mariaBalance = page
      .getByRole('table', { name: 'Overtime balances' })
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'Maria Weber' }) });
    await expect.poll(() => mariaBalance.getByRole('cell').first().textContent()).toBe(minutes(before - 120));

    // Sam's corrected: he worked until the shift's end.
    await rowOf('Sam Okafor').getByRole('button', { name: 'Correct' }).click();
    const form = page.getByRole('form', { name: 'Correct and confirm the time of Sam Okafor' });
    await form.waitFor();
    // The list of clocked time and the correction form open: still no serious violation.
    await expectAccessible(page);
    await form.getByLabel('End').fill(wallTime(zone, shift.ends_at));
    await form.getByRole('button', { name: 'Confirm with these times' }).click();
    await page.getByRole('status').filter({ hasText: 'Time of Sam Okafor confirmed.' }).waitFor();
    await page.getByText('No clocked time is waiting for confirmation.').waitFor();
    const confirmed = await call<{ shift_assignment_id: string; ended_at: string }[]>(
      'GET',
      '/time-tracking/entries?status=confirmed&limit=500',
    );
    const samEntry = confirmed.body.find((e) => e.shift_assignment_id === seats.get('demo-employee-2'));
    expect(samEntry?.ended_at).toBe(shift.ends_at);
    await context.close();
  });
});
