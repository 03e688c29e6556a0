import { describe, expect, it } from 'vitest';
import { runsIf } from '../../scripts/test-skip.ts';
import { demo, expectAccessible, signIn, Taps } from './support/app.ts';
import { chromiumAvailable, NEEDS_CHROMIUM, phone } from './support/browser.ts';
import { useStage } from './support/stage.ts';
import { apiAs } from './support/tokens.ts';

/**
 * Clocking from the phone: Maria's seat on a shift starting within the hour (given by the
 * admin through the API meanwhile) shows `Clock in` on Home, then `Clock out` with the
 * start, then the time sent for confirmation; the admin finds the entry proposed. Offline
 * the tap is refused in words before anything is sent.
 */
const stage = useStage();
const MINUTE = 60_000;

interface Seat {
  id: string;
  shift: { id: string; starts_at: string; ends_at: string };
}

/** The admin gives a person a Bar seat on a new two-hour shift starting in 20 minutes. */
async function seatWithinTheHour(subject: string): Promise<Seat> {
  const admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
  const person = await apiAs(stage.scheduler, subject, 'employee');
  const userId = (await person<{ id: string }>('GET', '/me')).body.id;
  const start = new Date(Math.ceil(Date.now() / MINUTE) * MINUTE + 20 * MINUTE).toISOString();
  const end = new Date(Date.parse(start) + 120 * MINUTE).toISOString();
  // Seats of theirs at that time go first (the demo week may have one then).
  const overlapping = await admin<Seat[]>('GET', `/users/${userId}/assignments?from=${start}&to=${end}`);
  for (const seat of overlapping.body) {
    expect((await admin('DELETE', `/shifts/${seat.shift.id}/assignments/${seat.id}`)).status).toBe(204);
  }
  const event = (await admin<{ id: string; name: string }[]>('GET', '/events')).body.find(
    (e) => e.name === 'Demo week',
  );
  const bar = (await admin<{ id: string; name: string }[]>('GET', '/roles')).body.find(
    (r) => r.name === 'Bar',
  );
  const shift = await admin<{ id: string }>('POST', '/shifts', {
    event_id: event?.id,
    name: 'Early doors',
    starts_at: start,
    ends_at: end,
    slots: [{ role_id: bar?.id, capacity: 1 }],
  });
  expect(shift.status).toBe(201);
  const [slot] = (await admin<{ id: string }[]>('GET', `/shifts/${shift.body.id}/slots`)).body;
  const seat = await admin<{ id: string }>('POST', `/shifts/${shift.body.id}/slots/${slot?.id}/assign`, {
    user_id: userId,
  });
  expect(seat.status).toBe(201);
  expect((await admin('POST', '/shifts/publish', { shift_ids: [shift.body.id] })).status).toBe(200);
  return { id: seat.body.id, shift: { id: shift.body.id, starts_at: start, ends_at: end } };
}

describe('clocking in and out on the phone', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('clocks in and out in two taps from Home; the admin sees the time proposed', async () => {
    const seat = await seatWithinTheHour('demo-employee-1');
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.maria);
    const clock = page.getByRole('region', { name: 'Time clock' });
    await clock.getByRole('button', { name: 'Clock in' }).waitFor();
    expect(await page.getByRole('region', { name: 'Next shift' }).innerText()).toContain('Early doors');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await expectAccessible(page);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // Offline, the clock-in is refused here, in words, and nothing is sent.
    const admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
    const entriesOfSeat = async (status: 'proposed' | 'confirmed') =>
      (
        await admin<{ shift_assignment_id: string; status: string; ended_at: string | null }[]>(
          'GET',
          `/time-tracking/entries?status=${status}`,
        )
      ).body.filter((e) => e.shift_assignment_id === seat.id);
    await page.context().setOffline(true);
    await clock.getByRole('button', { name: 'Clock in' }).click();
    await expect
      .poll(() => clock.getByRole('alert').textContent())
      .toBe('You are offline. Changes need a connection; nothing was sent.');
    expect(await entriesOfSeat('proposed')).toEqual([]);
    await page.context().setOffline(false);

    const taps = new Taps();
    await taps.tap(clock.getByRole('button', { name: 'Clock in' }));
    await clock.getByRole('status').filter({ hasText: 'You are clocked in.' }).waitFor();
    await clock.getByText(/^Clocked in since /).waitFor();
    await taps.tap(clock.getByRole('button', { name: 'Clock out' }));
    await clock.getByRole('status').filter({ hasText: 'Clocked out. Time sent for confirmation.' }).waitFor();
    await clock.getByText(/^Time sent for confirmation: /).waitFor();
    expect(await clock.getByRole('button').count()).toBe(0);
    expect(taps.count).toBe(2);

    const [entry] = await entriesOfSeat('proposed');
    expect(entry?.status).toBe('proposed');
    expect(entry?.ended_at).not.toBeNull();
    await context.close();
  });
});
