import { describe, expect, it } from 'vitest';
import { runsIf } from '../../scripts/test-skip.ts';
import { demo, signIn, Taps } from './support/app.ts';
import { chromiumAvailable, NEEDS_CHROMIUM, phone } from './support/browser.ts';
import { useStage } from './support/stage.ts';
import { apiAs } from './support/tokens.ts';

/**
 * What an employee does every day, on a 360×640 phone, counted in taps from Home (My
 * shifts, where the app opens): each at most three. The demo tenant's week is the data.
 */
const stage = useStage();

describe('an employee’s day in three taps', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('shows my next shift on Home without a tap: event, role, place and time', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.maria);
    const next = page.getByRole('region', { name: 'Next shift' });
    await expect.poll(() => next.getByRole('link').count()).toBe(1);
    const text = await next.innerText();
    expect(text).toMatch(/\d{2}:\d{2}/);
    // Role and place come with the shift: no call per shift for them.
    expect(await next.locator('.chip').count()).toBeGreaterThan(0);
    await context.close();
  });

  it('claims an open shift in two taps, and it is on My shifts after', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.maria);
    const taps = new Taps();
    await taps.tap(page.getByRole('link', { name: 'Open shifts' }));
    const first = page
      .getByRole('main')
      .getByRole('listitem')
      .filter({ has: page.getByRole('button', { name: 'Claim' }) })
      .first();
    const shiftName = (await first.locator('.shift-name').innerText()).split(' · ')[0]!;
    await taps.tap(first.getByRole('button', { name: 'Claim' }).first());
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Done: you are on' }).count()).toBe(1);
    expect(taps.count).toBeLessThanOrEqual(3);
    await page.getByRole('link', { name: 'My shifts' }).click();
    await expect.poll(() => page.getByRole('main').getByText(shiftName).count()).toBeGreaterThan(0);
    await context.close();
  });

  it('says in words why a claim was refused when someone was quicker', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.sam);
    await page.getByRole('link', { name: 'Open shifts' }).click();
    const card = page
      .getByRole('main')
      .getByRole('listitem')
      .filter({ has: page.getByRole('button', { name: 'Claim' }) })
      .first();
    await card.waitFor();
    // Meanwhile the seat goes: the admin cuts the slot to its fill, and if it was empty a
    // colleague free at that time takes the last seat.
    const admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
    const sam = await apiAs(stage.scheduler, 'demo-employee-2', 'employee');
    const shifts = await sam<
      { shift: { id: string; starts_at: string }; slots: { id: string; filled_count: number }[] }[]
    >('GET', '/me/open-shifts');
    // The first card is the first shift of the same list.
    const target = shifts.body[0]!;
    const slot = target.slots[0]!;
    const cut = await admin('PATCH', `/shifts/${target.shift.id}/slots/${slot.id}`, {
      capacity: Math.max(slot.filled_count, 1),
    });
    expect(cut.status).toBe(200);
    if (slot.filled_count === 0) {
      const answers: number[] = [];
      for (const colleague of ['demo-employee-3', 'demo-employee-1']) {
        const claim = await (await apiAs(stage.scheduler, colleague, 'employee'))(
          'POST',
          `/shifts/${target.shift.id}/slots/${slot.id}/claim`,
        );
        answers.push(claim.status);
        if (claim.status === 201) break;
      }
      expect(answers).toContain(201);
    }
    await card.getByRole('button', { name: 'Claim' }).first().click();
    await expect
      .poll(() =>
        page.getByRole('alert').filter({ hasText: 'Someone was quicker: this shift is full now.' }).count(),
      )
      .toBe(1);
    await context.close();
  });

  it('requests time off in three taps and lists it as requested', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.lena);
    const taps = new Taps();
    await taps.tap(page.getByRole('link', { name: 'Requests' }));
    await taps.tap(page.getByRole('button', { name: 'Request time off' }));
    await taps.tap(page.getByRole('button', { name: 'Send request' }));
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Time off requested.' }).count())
      .toBe(1);
    expect(taps.count).toBe(3);
    await expect
      .poll(() => page.getByRole('region', { name: 'Time off' }).getByText('requested').count())
      .toBe(1);
    await context.close();
  });

  it('accepts a shift offered to me in two taps', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.maria);
    const taps = new Taps();
    await taps.tap(page.getByRole('link', { name: 'Requests' }));
    const offered = page
      .getByRole('region', { name: 'Offers' })
      .getByRole('button', { name: 'Accept' })
      .first();
    await taps.tap(offered);
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: /Accepted/ })
          .count(),
      )
      .toBe(1);
    expect(taps.count).toBeLessThanOrEqual(3);
    await context.close();
  });

  it('signs out and back to the sign-in page', async () => {
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    await signIn(page, stage.scheduler.base, demo.sam);
    await page.getByRole('link', { name: 'Me', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    // The provider asks once more, then sends the browser back to the app, signed out.
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The next sign-in asks who you are again: the provider's session ended too.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: demo.maria }).waitFor();
    await context.close();
  });
});
