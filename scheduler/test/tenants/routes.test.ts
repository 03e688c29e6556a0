import { describe, expect, it } from 'vitest';
import { FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';

// Fresh, provisioned tenants per test: no test sees what another created.
const t = useRouteTests();

const url = '/api/v1/tenant/settings';

describe('GET /api/v1/tenant/settings', () => {
  it('returns the defaults of a new tenant', async () => {
    const response = await t.admin.request('GET', url);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      id: t.admin.tenantId,
      tenant_id: t.admin.tenantId,
      time_tracking_enabled: false,
      timezone: 'UTC',
      notify_on_assignment: false,
      locale: 'en-GB',
      remind_minutes_before_shift: null,
      offers_need_approval: false,
      time_off_needs_approval: true,
      shift_colleagues_visible: false,
      time_entries_before_end: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
  });

  it('is readable by employees (they need the time zone)', async () => {
    expect((await t.employee.request('GET', url)).statusCode).toBe(200);
  });
});

describe('PATCH /api/v1/tenant/settings', () => {
  it.each([
    ['Europe/Kyiv', 'Europe/Kyiv'],
    ['europe/kyiv', 'Europe/Kyiv'],
    ['Europe/Kiev', 'Europe/Kiev'],
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['America/Nuuk', 'America/Nuuk'],
    ['Asia/Ho_Chi_Minh', 'Asia/Ho_Chi_Minh'],
  ])('stores the zone %s as %s: the name the admin chose, in its canonical case', async (given, stored) => {
    const response = await t.admin.request('PATCH', url, { time_tracking_enabled: false, timezone: given });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().timezone).toBe(stored);
    expect((await t.admin.request('GET', url)).json().timezone).toBe(stored);
  });

  it('replaces the whole record and canonicalises the zone name', async () => {
    const response = await t.admin.request('PATCH', url, {
      time_tracking_enabled: true,
      timezone: 'europe/berlin',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ time_tracking_enabled: true, timezone: 'Europe/Berlin' });
    expect((await t.admin.request('GET', url)).json()).toMatchObject({
      time_tracking_enabled: true,
      timezone: 'Europe/Berlin',
    });
  });

  it('keeps the language and the reminder lead time, in canonical form, and resets them when omitted', async () => {
    const response = await t.admin.request('PATCH', url, {
      time_tracking_enabled: false,
      locale: 'de-ch',
      remind_minutes_before_shift: 720,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ locale: 'de-CH', remind_minutes_before_shift: 720 });
    const reset = await t.admin.request('PATCH', url, { time_tracking_enabled: false });
    expect(reset.json()).toMatchObject({ locale: 'en-GB', remind_minutes_before_shift: null });
  });

  it('keeps both approval settings and resets them to their defaults when omitted', async () => {
    const response = await t.admin.request('PATCH', url, {
      time_tracking_enabled: false,
      offers_need_approval: true,
      time_off_needs_approval: false,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ offers_need_approval: true, time_off_needs_approval: false });
    expect((await t.admin.request('GET', url)).json()).toMatchObject({
      offers_need_approval: true,
      time_off_needs_approval: false,
    });
    const reset = await t.admin.request('PATCH', url, { time_tracking_enabled: false });
    expect(reset.json()).toMatchObject({ offers_need_approval: false, time_off_needs_approval: true });
  });

  it('keeps whether employees see their colleagues on a shift, off when omitted', async () => {
    const response = await t.admin.request('PATCH', url, {
      time_tracking_enabled: false,
      shift_colleagues_visible: true,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ shift_colleagues_visible: true });
    expect((await t.employee.request('GET', url)).json()).toMatchObject({ shift_colleagues_visible: true });
    const reset = await t.admin.request('PATCH', url, { time_tracking_enabled: false });
    expect(reset.json()).toMatchObject({ shift_colleagues_visible: false });
    const wrong = await t.admin.request('PATCH', url, {
      time_tracking_enabled: false,
      shift_colleagues_visible: 'yes',
    });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'shift_colleagues_visible: must be boolean' },
    });
  });

  it('resets an omitted time zone to UTC and notifications to off (full replace, not merge)', async () => {
    await t.admin.request('PATCH', url, {
      time_tracking_enabled: true,
      timezone: 'America/New_York',
      notify_on_assignment: true,
    });
    expect((await t.admin.request('GET', url)).json().notify_on_assignment).toBe(true);
    const response = await t.admin.request('PATCH', url, { time_tracking_enabled: false });
    expect(response.json()).toMatchObject({
      time_tracking_enabled: false,
      timezone: 'UTC',
      notify_on_assignment: false,
    });
  });

  it('accepts a record read with GET and sent back (read-only fields ignored)', async () => {
    const current = (await t.admin.request('GET', url)).json();
    const response = await t.admin.request('PATCH', url, {
      ...current,
      timezone: 'Asia/Tokyo',
      tenant_id: 'ffffffffffffffffffffffffffffffff',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ tenant_id: t.admin.tenantId, timezone: 'Asia/Tokyo' });
  });

  it('changes only the caller tenant, though the other tenant exists already', async () => {
    const before = (await t.otherAdmin.request('GET', url)).json();
    await t.admin.request('PATCH', url, { time_tracking_enabled: true, timezone: 'Europe/Paris' });
    expect((await t.otherAdmin.request('GET', url)).json()).toEqual(before);
    expect(before).toMatchObject({ time_tracking_enabled: false, timezone: 'UTC' });
    // And straight from the table: one row changed, the other tenant's row untouched.
    const rows = await t.ctx.db.owner
      .selectFrom('tenant_settings')
      .select(['tenant_id', 'timezone'])
      .where('tenant_id', 'in', [t.admin.tenantId, t.otherAdmin.tenantId])
      .orderBy('timezone')
      .execute();
    expect(rows).toEqual([
      { tenant_id: t.admin.tenantId, timezone: 'Europe/Paris' },
      { tenant_id: t.otherAdmin.tenantId, timezone: 'UTC' },
    ]);
  });

  it('answers the fixed 403 to an employee and changes nothing', async () => {
    const before = (await t.admin.request('GET', url)).json();
    const response = await t.employee.request('PATCH', url, {
      time_tracking_enabled: !before.time_tracking_enabled,
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    expect((await t.admin.request('GET', url)).json()).toEqual(before);
  });

  it.each([
    [{}, 'time_tracking_enabled: is required'],
    [{ time_tracking_enabled: 'yes' }, 'time_tracking_enabled: must be boolean'],
    [{ time_tracking_enabled: 1 }, 'time_tracking_enabled: must be boolean'],
    [
      { time_tracking_enabled: true, timezone: 'Mars/Olympus_Mons' },
      'timezone: unknown IANA time zone "Mars/Olympus_Mons"',
    ],
    [{ time_tracking_enabled: true, timezone: 7 }, 'timezone: must be string'],
    [{ time_tracking_enabled: true, timezon: 'UTC' }, 'timezon: is not an allowed field'],
    [
      { time_tracking_enabled: true, locale: 'xx-YY' },
      'locale: no dates can be written in "xx-YY"; use a BCP 47 tag such as de-DE',
    ],
    [
      { time_tracking_enabled: true, locale: 'not a tag' },
      'locale: no dates can be written in "not a tag"; use a BCP 47 tag such as de-DE',
    ],
    [
      { time_tracking_enabled: true, remind_minutes_before_shift: 14 },
      'remind_minutes_before_shift: must be >= 15',
    ],
    [
      { time_tracking_enabled: true, remind_minutes_before_shift: 10_081 },
      'remind_minutes_before_shift: must be <= 10080',
    ],
    [
      { time_tracking_enabled: true, remind_minutes_before_shift: 1.5 },
      'remind_minutes_before_shift: must be integer',
    ],
    [[], 'body: must be object'],
  ])('answers 422 naming the field for %j, and changes nothing', async (body, message) => {
    const before = (await t.admin.request('GET', url)).json();
    const response = await t.admin.request('PATCH', url, body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    expect((await t.admin.request('GET', url)).json()).toEqual(before);
  });

  it('answers 400 for malformed JSON', async () => {
    const response = await t.ctx.request('PATCH', url, {
      token: t.admin.token,
      rawBody: '{"time_tracking_enabled": tru',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: { code: 'BAD_REQUEST', message: 'malformed JSON body' } });
  });
});

describe('a tenant whose settings are gone', () => {
  it('answers 404 to reading and to replacing them', async () => {
    await t.ctx.db.owner.deleteFrom('tenant_settings').where('tenant_id', '=', t.admin.tenantId).execute();
    const notFound = { error: { code: 'NOT_FOUND', message: 'tenant settings not found' } };
    for (const response of [
      await t.admin.request('GET', url),
      await t.admin.request('PATCH', url, { time_tracking_enabled: true }),
    ]) {
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(notFound);
    }
    expect((await t.otherAdmin.request('GET', url)).statusCode).toBe(200);
  });
});

describe('replacing the settings', () => {
  it('stamps updated_at and keeps created_at', async () => {
    const before = (await t.admin.request('GET', url)).json();
    const after = (await t.admin.request('PATCH', url, { time_tracking_enabled: true })).json();
    expect(after.created_at).toBe(before.created_at);
    expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
    expect(after).toEqual({ ...before, time_tracking_enabled: true, updated_at: after.updated_at });
  });
});
