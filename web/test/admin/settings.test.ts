import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { demo, expectAccessible, openManagerScreen, signIn } from '../support/app.ts';
import { chromiumAvailable, desktop, NEEDS_CHROMIUM } from '../support/browser.ts';
import { useStage } from '../support/stage.ts';
import { apiAs } from '../support/tokens.ts';

/**
 * Settings: the tenant's record as one form, roles, locations, webhooks (the secret once),
 * the audit log's filters, dead jobs. Webhooks may point at a closed port on this machine
 * only: nothing is ever sent anywhere else.
 */
const stage = useStage(async () => ({ OUTBOUND_ALLOWED_HOSTS: '127.0.0.1:9' }));

interface TenantSettings {
  timezone: string;
  remind_minutes_before_shift: number | null;
  notify_on_assignment: boolean;
  [field: string]: unknown;
}

async function admin() {
  return apiAs(stage.scheduler, 'demo-admin', 'admin');
}

async function settingsNow(): Promise<TenantSettings> {
  return (await (await admin())<TenantSettings>('GET', '/tenant/settings')).body;
}

/** Opens a section of the screen (a disclosure button in its h2) and returns the section. */
async function openSection(page: Page, name: string) {
  const toggle = page.getByRole('button', { name, exact: true });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  return page.getByRole('region', { name, exact: true });
}

/** Presses Tab until the focused element has this accessible name (at most 60 times). */
async function tabTo(page: Page, name: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const active = document.activeElement as HTMLElement | null;
      return active?.closest('label')?.textContent?.trim() || active?.textContent?.trim() || '';
    });
    if (focused === name) return;
  }
  throw new Error(`Tab never reached ${name}`);
}

describe('Settings', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('changes the time zone without touching reminders, and saves with the keyboard alone', async () => {
    // A colleague set reminders 12 hours before shifts, in Berlin time (the whole record, as
    // PATCH replaces it): where this test starts, whatever another test changed.
    const call = await admin();
    const before = { ...(await settingsNow()), timezone: 'Europe/Berlin', remind_minutes_before_shift: 720 };
    expect((await call('PATCH', '/tenant/settings', before)).status).toBe(200);

    const { context, page } = await desktop(stage.browser);
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Settings');
    const tenant = await openSection(page, 'Tenant settings');
    await expect.poll(() => tenant.getByLabel('Minutes before the shift').inputValue()).toBe('720');
    await tenant.getByLabel('Time zone').selectOption('Europe/Lisbon');
    await tenant.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const changed = await settingsNow();
    expect(changed.timezone).toBe('Europe/Lisbon');
    expect(changed.remind_minutes_before_shift).toBe(720);
    expect({ ...changed, updated_at: null }).toEqual({
      ...before,
      timezone: 'Europe/Lisbon',
      updated_at: null,
    });

    // The keyboard alone: from the heading, Tab to a switch, Space, Tab to Save, Enter.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).focus();
    await tabTo(page, 'Notify people when their shifts change');
    await page.keyboard.press('Space');
    await tabTo(page, 'Save');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = await settingsNow();
    expect(saved.notify_on_assignment).toBe(!changed.notify_on_assignment);
    expect(saved.remind_minutes_before_shift).toBe(720);
    expect(saved.timezone).toBe('Europe/Lisbon');
    await context.close();
  });

  it('adds a role, a location and a customer form (a duplicate refused in words); converts a submission', async () => {
    const { context, page } = await desktop(stage.browser);
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Settings');
    const roles = await openSection(page, 'Job roles');
    const addRole = roles.getByRole('form', { name: 'Add role' });
    await addRole.getByLabel('Name').fill('Cloakroom');
    await addRole.getByLabel('Description').fill('Coats and bags');
    await addRole.getByRole('button', { name: 'Add role' }).click();
    await roles.getByRole('status').filter({ hasText: 'Cloakroom added.' }).waitFor();
    await roles.getByRole('rowheader', { name: 'Cloakroom' }).waitFor();
    await addRole.getByLabel('Name').fill('Bar');
    await addRole.getByRole('button', { name: 'Add role' }).click();
    await expect.poll(() => roles.getByRole('alert').textContent()).toBe('That exists already.');

    const locations = await openSection(page, 'Locations');
    const addLocation = locations.getByRole('form', { name: 'Add location' });
    await addLocation.getByLabel('Name').fill('Garden Pavilion');
    await addLocation.getByLabel('Street and number').fill('Unter den Linden 5');
    await addLocation.getByLabel('Postal code').fill('10117');
    await addLocation.getByLabel('City').fill('Berlin');
    await addLocation.getByLabel('Country').fill('DE');
    await addLocation.getByRole('button', { name: 'Add location' }).click();
    await locations.getByRole('status').filter({ hasText: 'Garden Pavilion added.' }).waitFor();
    const row = locations
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'Garden Pavilion' }) });
    await expect
      .poll(() => row.getByRole('cell').first().textContent())
      .toBe('Unter den Linden 5, 10117 Berlin, DE');
    const stored = await (await admin())<{ name: string; city: string | null }[]>('GET', '/locations');
    expect(stored.body.find((l) => l.name === 'Garden Pavilion')?.city).toBe('Berlin');

    // And gone again.
    await row.getByRole('button', { name: 'Delete' }).click();
    await locations.getByRole('status').filter({ hasText: 'Garden Pavilion deleted.' }).waitFor();
    await expect.poll(() => row.count()).toBe(0);

    // A customer form; a customer's answers become a draft event named and dated by them.
    const forms = await openSection(page, 'Customer forms');
    await forms.getByRole('button', { name: 'Create form' }).click();
    const create = forms.getByRole('form', { name: 'Create form' });
    await create.getByLabel('Title', { exact: true }).fill('Party booking');
    await create.getByRole('group', { name: 'Field 1' }).getByLabel('Question').fill('Occasion');
    await create.getByRole('button', { name: 'Add field' }).click();
    const second = create.getByRole('group', { name: 'Field 2' });
    await second.getByLabel('Question').fill('Date');
    await second.getByRole('combobox', { name: /^Answer type/ }).selectOption('date');
    await create.getByRole('button', { name: 'Create form' }).click();
    await forms.getByRole('status').filter({ hasText: 'Party booking added.' }).waitFor();
    const call = await admin();
    const form = (await call<{ slug: string; title: string }[]>('GET', '/forms')).body.find(
      (f) => f.title === 'Party booking',
    );
    const customer = await apiAs(stage.scheduler, 'demo-employee-1', 'employee');
    const submitted = await customer('POST', `/f/${form?.slug}/submit`, {
      data: { occasion: 'Summer party', date: '2027-06-12' },
    });
    expect(submitted.status).toBe(201);
    await forms.getByRole('button', { name: 'Submissions' }).click();
    await forms.getByRole('button', { name: 'Convert' }).click();
    const convert = forms.getByRole('form', { name: 'Convert into a draft event' });
    expect(await convert.getByLabel('Event name').inputValue()).toBe('Summer party');
    expect(await convert.getByLabel('Starts', { exact: true }).inputValue()).toBe('2027-06-12T00:00');
    expect(await convert.getByLabel('Ends', { exact: true }).inputValue()).toBe('2027-06-13T00:00');
    await convert.getByRole('button', { name: 'Create draft event' }).click();
    await forms.getByRole('status').filter({ hasText: 'Draft event Summer party created.' }).waitFor();
    await forms.getByText('Converted into an event').waitFor();
    const events = await call<{ name: string; status: string }[]>('GET', '/events');
    expect(events.body.find((e) => e.name === 'Summer party')?.status).toBe('draft');
    await context.close();
  });

  it('shows a new webhook its secret once, never again after a reload', async () => {
    const { context, page } = await desktop(stage.browser);
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Settings');
    let webhooks = await openSection(page, 'Webhooks');
    const add = webhooks.getByRole('form', { name: 'Add webhook' });
    // A private address the operator did not admit: refused in words.
    await add.getByLabel('URL').fill('http://10.0.0.1/hook');
    await add.getByLabel('form.submitted').check();
    await add.getByRole('button', { name: 'Add webhook' }).click();
    await expect.poll(() => webhooks.getByRole('alert').textContent()).toMatch(/^Please check your input: /);

    await add.getByLabel('URL').fill('http://127.0.0.1:9/hook');
    await add.getByRole('button', { name: 'Add webhook' }).click();
    const secret = webhooks.getByRole('region', { name: 'Signing secret of http://127.0.0.1:9/hook' });
    await secret.waitFor();
    const shown = (await secret.locator('code').textContent()) ?? '';
    expect(shown).toMatch(/^whsec_/);
    expect(await secret.textContent()).toContain('it is shown only this once');
    await webhooks.getByRole('rowheader', { name: 'http://127.0.0.1:9/hook' }).waitFor();

    await page.reload();
    webhooks = await openSection(page, 'Webhooks');
    await webhooks.getByRole('rowheader', { name: 'http://127.0.0.1:9/hook' }).waitFor();
    expect(await page.getByText(shown).count()).toBe(0);
    expect(await webhooks.getByRole('region', { name: /^Signing secret/ }).count()).toBe(0);
    await webhooks.getByRole('button', { name: 'Deliveries' }).click();
    await webhooks.getByText('Nothing sent yet.').waitFor();
    await context.close();
    // Gone again: what other tests change is sent to no closed port (nor left as a dead job).
    const call = await admin();
    const hooks = await call<{ id: string; url: string }[]>('GET', '/webhooks');
    const hook = hooks.body.find((h) => h.url === 'http://127.0.0.1:9/hook');
    expect((await call('DELETE', `/webhooks/${hook?.id}`)).status).toBe(204);
  });

  it('narrows the audit log by who changed something, and lists dead jobs', async () => {
    const { context, page } = await desktop(stage.browser);
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Settings');
    const audit = await openSection(page, 'Audit log');
    const rows = audit.getByRole('table', { name: 'Audit log' }).getByRole('row');
    await expect.poll(() => rows.count()).toBeGreaterThan(1);
    const all = await rows.count();
    expect(await audit.getByRole('cell', { name: 'Alex Admin', exact: true }).count()).toBeGreaterThan(0);

    // Sam handed on a seat in the demo week: his changes only.
    await audit.getByLabel('Changed by').selectOption({ label: 'Sam Okafor' });
    await audit.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => audit.getByRole('cell', { name: 'Alex Admin', exact: true }).count()).toBe(0);
    const narrowed = await rows.count();
    expect(narrowed).toBeGreaterThan(1);
    expect(narrowed).toBeLessThan(all);
    expect(await audit.getByRole('cell', { name: 'Sam Okafor', exact: true }).count()).toBe(narrowed - 1);

    const jobs = await openSection(page, 'Dead jobs');
    await jobs.getByText('No dead jobs.').waitFor();
    await context.close();
  });

  it('passes axe light and dark with every section open, and speaks German', async () => {
    const sections = [
      'Tenant settings',
      'Job roles',
      'Locations',
      'Customer forms',
      'Webhooks',
      'Audit log',
      'Dead jobs',
    ];
    for (const colorScheme of ['light', 'dark'] as const) {
      const { context, page } = await desktop(stage.browser, { colorScheme });
      await signIn(page, stage.scheduler.base, demo.alex);
      await openManagerScreen(page, 'Settings');
      for (const name of sections) await openSection(page, name);
      await page.getByRole('button', { name: 'Create form' }).click();
      await page.getByRole('form', { name: 'Create form' }).waitFor();
      await page.getByRole('table', { name: 'Audit log' }).waitFor();
      await page.getByRole('table', { name: 'Locations' }).waitFor();
      await expectAccessible(page);
      await context.close();
    }
    const { context, page } = await desktop(stage.browser, { locale: 'de-DE' });
    await signIn(page, stage.scheduler.base, demo.alex);
    await openManagerScreen(page, 'Einstellungen');
    for (const name of [
      'Mandanteneinstellungen',
      'Rollen',
      'Orte',
      'Kundenformulare',
      'Webhooks',
      'Änderungsprotokoll',
    ])
      await page.getByRole('heading', { level: 2, name }).waitFor();
    await page.getByLabel('Zeitzone').waitFor();
    await page.getByRole('button', { name: 'Speichern' }).waitFor();
    await context.close();
  });
});
