import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { demo, expectAccessible, openManagerScreen, signIn } from '../support/app.ts';
import { chromiumAvailable, desktop, NEEDS_CHROMIUM } from '../support/browser.ts';
import { useStage } from '../support/stage.ts';
import { apiAs } from '../support/tokens.ts';

/** The admin's list of people: invite, filter, qualifications, deactivate and reactivate. */
const stage = useStage();

interface User {
  id: string;
  display_name: string | null;
  active: boolean;
  qualifications?: { name: string }[];
}

async function openPeople(page: Page, options: { link?: string } = {}): Promise<void> {
  await signIn(page, stage.scheduler.base, demo.alex);
  await openManagerScreen(page, options.link ?? 'People');
  await page.getByRole('table').waitFor();
}

/** A person's row of the table (not the panel opened below it). */
const rowOf = (page: Page, name: string) =>
  page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });

describe('people', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('invites a person, refuses the same subject twice, and filters by role and status', async () => {
    const admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
    const { context, page } = await desktop(stage.browser);
    await openPeople(page);
    const invite = async () => {
      await page.getByRole('button', { name: 'Invite' }).click();
      const form = page.getByRole('form', { name: 'Invite a person' });
      await form.getByRole('textbox', { name: 'Sign-in subject' }).fill('new-person-1');
      await form.getByRole('textbox', { name: 'Name' }).fill('Nora Neumann');
      await form.getByRole('textbox', { name: 'E-mail' }).fill('nora@demo.invalid');
      await form.getByRole('combobox', { name: 'Role' }).selectOption({ label: 'Employee' });
      await form.getByRole('checkbox', { name: 'Bar' }).check();
      await form.getByRole('button', { name: 'Invite' }).click();
    };
    await invite();
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toBe('Nora Neumann is added: their first sign-in lands on this record.');
    await rowOf(page, 'Nora Neumann').waitFor();
    const users = (await admin<User[]>('GET', '/users')).body;
    const nora = users.find((u) => u.display_name === 'Nora Neumann')!;
    const detail = (await admin<User>('GET', `/users/${nora.id}`)).body;
    expect(detail.qualifications?.map((q) => q.name)).toEqual(['Bar']);

    await invite();
    await expect
      .poll(() => page.getByRole('alert').innerText())
      .toBe('Someone with this sign-in subject exists already.');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('combobox', { name: 'Role' }).selectOption({ label: 'Admin' });
    await expect.poll(() => page.getByRole('rowheader').allInnerTexts()).toEqual(['Alex Admin']);
    await page.getByRole('combobox', { name: 'Role' }).selectOption({ label: 'All roles' });
    await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'Deactivated' });
    await page.getByText('Nobody matches these filters.').waitFor();
    await context.close();
  });

  it('grants a qualification', async () => {
    const admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
    const maria = (await (await apiAs(stage.scheduler, 'demo-employee-1', 'employee'))<User>('GET', '/me'))
      .body;
    const { context, page } = await desktop(stage.browser);
    await openPeople(page);
    await rowOf(page, 'Maria Weber').getByRole('button', { name: 'Edit qualifications' }).click();
    const editor = page.getByRole('group', { name: 'Qualifications of Maria Weber' });
    await editor.getByRole('checkbox', { name: 'Security' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toBe('Qualifications of Maria Weber saved.');
    await expect.poll(() => rowOf(page, 'Maria Weber').innerText()).toContain('Bar, Cashier, Security');
    const detail = (await admin<User>('GET', `/users/${maria.id}`)).body;
    expect(detail.qualifications?.map((q) => q.name)).toContain('Security');
    await context.close();
  });

  it('deactivates after showing the seats it frees, refuses an admin themselves, and reactivates', async () => {
    const admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
    const samApi = await apiAs(stage.scheduler, 'demo-employee-2', 'employee');
    const sam = (await samApi<User>('GET', '/me')).body;
    const now = Date.now();
    const upcoming = (
      await samApi<{ shift: { id: string; name: string; starts_at: string } }[]>('GET', '/me/assignments')
    ).body.filter((seat) => Date.parse(seat.shift.starts_at) > now);
    expect(upcoming.length).toBeGreaterThan(0);

    const { context, page } = await desktop(stage.browser);
    // What the screen asks the API for: the list and one person's seats, never user by user or shift by shift.
    const asked: string[] = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith('/api/v1/')) asked.push(`${request.method()} ${path}`);
    });
    await openPeople(page);
    expect(asked.filter((call) => /^GET \/api\/v1\/users\/[0-9a-f]{32}$/.test(call))).toEqual([]);
    await rowOf(page, 'Alex Admin').getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('button', { name: 'Deactivate now' }).click();
    await expect
      .poll(() => page.getByRole('alert').innerText())
      .toBe('You cannot deactivate yourself; another admin can.');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await rowOf(page, 'Sam Okafor').getByRole('button', { name: 'Deactivate' }).click();
    const panel = page.getByRole('region', { name: 'Deactivate Sam Okafor?' });
    await panel.getByText('This frees their upcoming seats:').waitFor();
    expect(asked).toContain(`GET /api/v1/users/${sam.id}/assignments`);
    expect(asked.filter((call) => call.includes('/shifts/'))).toEqual([]);
    expect(await panel.getByRole('listitem').count()).toBe(upcoming.length);
    for (const seat of upcoming) expect(await panel.innerText()).toContain(seat.shift.name);
    await panel.getByRole('button', { name: 'Deactivate now' }).click();
    await expect
      .poll(() => page.getByRole('status').innerText())
      .toBe('Sam Okafor is deactivated; their upcoming seats are free again.');
    expect((await admin<User>('GET', `/users/${sam.id}`)).body.active).toBe(false);
    for (const seat of upcoming) {
      const seats = (await admin<{ user_id: string }[]>('GET', `/shifts/${seat.shift.id}/assignments`)).body;
      expect(seats.map((s) => s.user_id)).not.toContain(sam.id);
    }

    await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'Deactivated' });
    await expect.poll(() => page.getByRole('rowheader').allInnerTexts()).toEqual(['Sam Okafor']);
    await rowOf(page, 'Sam Okafor').getByRole('button', { name: 'Reactivate' }).click();
    await expect.poll(() => page.getByRole('status').innerText()).toBe('Sam Okafor is active again.');
    expect((await admin<User>('GET', `/users/${sam.id}`)).body.active).toBe(true);
    await context.close();
  });

  it('has no serious accessibility problem, light and dark, with the invite form open', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { context, page } = await desktop(stage.browser, { colorScheme });
      await openPeople(page);
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Invite' }).click();
      await page.getByRole('form', { name: 'Invite a person' }).waitFor();
      await rowOf(page, 'Lena Fischer').getByRole('button', { name: 'Deactivate' }).click();
      await page.getByText('This frees their upcoming seats:').waitFor();
      await expectAccessible(page);
      await context.close();
    }
  });

  it('speaks German: heading, filters, table and the invite form', async () => {
    const { context, page } = await desktop(stage.browser, { locale: 'de-DE' });
    await openPeople(page, { link: 'Personen' });
    await page.getByRole('combobox', { name: 'Rolle' }).waitFor();
    await page.getByRole('combobox', { name: 'Status' }).waitFor();
    await page.getByRole('columnheader', { name: 'Qualifikationen' }).waitFor();
    await page.getByRole('button', { name: 'Einladen' }).click();
    const form = page.getByRole('form', { name: 'Eine Person einladen' });
    for (const label of ['Anmelde-Kennung (Subject)', 'Name', 'E-Mail'])
      await form.getByRole('textbox', { name: label }).waitFor();
    await form.getByRole('group', { name: 'Qualifikationen' }).waitFor();
    await context.close();
  });
});
