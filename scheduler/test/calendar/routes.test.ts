import { createHash } from 'node:crypto';
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { type Caller, createTestContext, FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';

/** The secret calendar feed, read back with an iCalendar parser (ical.js). */
const t = useRouteTests();

interface ParsedEvent {
  uid: string;
  summary: string;
  location: string;
  description: string;
  start: string;
  end: string;
  tzid: string | null;
}

function parse(text: string): { name: string; zones: string[]; events: ParsedEvent[] } {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const zones = calendar.getAllSubcomponents('vtimezone');
  for (const zone of zones) ICAL.TimezoneService.register(zone);
  return {
    name: String(calendar.getFirstPropertyValue('name') ?? calendar.getFirstPropertyValue('x-wr-calname')),
    zones: zones.map((zone) => String(zone.getFirstPropertyValue('tzid'))),
    events: calendar.getAllSubcomponents('vevent').map((component) => {
      const event = new ICAL.Event(component);
      return {
        uid: event.uid,
        summary: event.summary,
        location: event.location,
        description: event.description,
        start: event.startDate.toJSDate().toISOString(),
        end: event.endDate.toJSDate().toISOString(),
        tzid: component.getFirstProperty('dtstart')?.getParameter('tzid') as string | null,
      };
    }),
  };
}

async function feedUrl() {
  const response = await t.employee.request('POST', '/api/v1/me/calendar-token');
  expect(response.statusCode).toBe(201);
  return response.json() as { token: string; url: string };
}
const fetchFeed = (url: string) => t.ctx.request('GET', new URL(url).pathname);

/** Feeds in the tenant's zone (time tracking left off). */
async function inZone(timezone: string) {
  const response = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
    time_tracking_enabled: false,
    timezone,
  });
  expect(response.statusCode, response.body).toBe(200);
}

/** A new role the worker holds. */
async function roleHeldBy(worker: Caller, name: string): Promise<string> {
  const role = await newRole(t.admin, name);
  await qualify(t.admin, worker, role);
  return role;
}

/** The worker assigned to the first slot of a shift. */
const assign = (shift: { id: string; slots: string[] }, worker: Caller) =>
  created(t.admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, { user_id: worker.userId });

/** The employee on a shift at a place, in a tenant on Berlin time. */
async function scheduled(options: { publish?: boolean; timezone?: string } = {}) {
  await inZone(options.timezone ?? 'Europe/Berlin');
  const role = await roleHeldBy(t.employee, 'Bartender');
  const location = (
    await created(t.admin, '/api/v1/locations', {
      name: 'Hall 3',
      street: 'Messedamm 22',
      postal_code: '14055',
      city: 'Berlin',
    })
  ).id;
  const event = await newEvent(t.admin, { publish: options.publish ?? true });
  const shift = await created(t.admin, '/api/v1/shifts', {
    event_id: event,
    name: 'Bar, early',
    location_id: location,
    starts_at: '2030-07-02T06:00:00Z',
    ends_at: '2030-07-02T12:00:00Z',
    slots: [{ role_id: role, capacity: 2 }],
  });
  if (options.publish ?? true) await t.admin.request('POST', `/api/v1/shifts/${shift.id}/publish`);
  const slot = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()[0].id;
  return created(t.admin, `/api/v1/shifts/${shift.id}/slots/${slot}/assign`, { user_id: t.employee.userId });
}

describe('calendar feed at the edges', () => {
  it('writes a shift whose local time reaches year 10000 in UTC, never with a five-digit year', async () => {
    await inZone('Pacific/Kiritimati');
    const role = await roleHeldBy(t.employee, 'Watch');
    const event = await newEvent(t.admin, {
      starts_at: '9999-12-30T00:00:00Z',
      ends_at: '9999-12-31T23:59:00Z',
    });
    const shift = await newShift(t.admin, event, {
      roleId: role,
      starts_at: '9999-12-31T08:00:00Z',
      ends_at: '9999-12-31T20:00:00Z',
    });
    await assign(shift, t.employee);
    const { url } = await feedUrl();
    const response = await fetchFeed(url);
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toMatch(/\d{9}T\d{6}/);
    expect(response.body).toContain('DTSTART:99991231T080000Z');
    expect(response.body).toContain('DTEND:99991231T200000Z');
    expect(parse(response.body).events.map((e) => [e.start, e.end])).toEqual([
      ['9999-12-31T08:00:00.000Z', '9999-12-31T20:00:00.000Z'],
    ]);
  });

  it('writes a shift with a time in the hour a fall-back night repeats in UTC, where no reader can mistake it', async () => {
    // Berlin falls back at 03:00 CEST on 27 October 2030: 02:30 is 00:30Z, then 01:30Z.
    // RFC 5545 reads a repeated local time as its first occurrence, ical.js as its second:
    // a shift with a time in either run is written in UTC; others keep the zone.
    await inZone('Europe/Berlin');
    const role = await roleHeldBy(t.employee, 'Night watch');
    const event = await newEvent(t.admin, {
      starts_at: '2030-10-26T00:00:00Z',
      ends_at: '2030-10-28T00:00:00Z',
    });
    const first = await newShift(t.admin, event, {
      roleId: role,
      starts_at: '2030-10-26T22:30:00Z',
      ends_at: '2030-10-27T00:30:00Z',
    });
    const second = await newShift(t.admin, event, {
      roleId: role,
      starts_at: '2030-10-27T01:30:00Z',
      ends_at: '2030-10-27T03:30:00Z',
    });
    const evening = await newShift(t.admin, event, {
      roleId: role,
      starts_at: '2030-10-27T16:00:00Z',
      ends_at: '2030-10-27T20:00:00Z',
    });
    for (const shift of [first, second, evening]) await assign(shift, t.employee);
    const body = (await fetchFeed((await feedUrl()).url)).body;
    expect(body).toContain('DTSTART;TZID=Europe/Berlin:20301027T170000');
    expect(body).toContain('DTSTART:20301026T223000Z');
    expect(body).toContain('DTEND:20301027T003000Z');
    expect(body).toContain('DTSTART:20301027T013000Z');
    expect(body).toContain('DTEND:20301027T033000Z');
    expect(parse(body).events.map((e) => [e.start, e.end])).toEqual([
      ['2030-10-26T22:30:00.000Z', '2030-10-27T00:30:00.000Z'],
      ['2030-10-27T01:30:00.000Z', '2030-10-27T03:30:00.000Z'],
      ['2030-10-27T16:00:00.000Z', '2030-10-27T20:00:00.000Z'],
    ]);
  });

  it('writes a shift ending in New York’s repeated hour in UTC, and one across the spring gap in the zone', async () => {
    // New York falls back at 02:00 EDT on 3 November 2030 (01:30 is 05:30Z, then 06:30Z)
    // and springs forward at 02:00 EST on 10 March 2030 (no 02:xx that night).
    await inZone('America/New_York');
    const role = await roleHeldBy(t.employee, 'Door');
    const event = await newEvent(t.admin, {
      starts_at: '2030-03-01T00:00:00Z',
      ends_at: '2030-11-30T00:00:00Z',
    });
    const autumn = await newShift(t.admin, event, {
      roleId: role,
      starts_at: '2030-11-03T04:00:00Z',
      ends_at: '2030-11-03T06:30:00Z',
    });
    const spring = await newShift(t.admin, event, {
      roleId: role,
      starts_at: '2030-03-10T06:30:00Z',
      ends_at: '2030-03-10T07:30:00Z',
    });
    await assign(autumn, t.employee);
    await assign(spring, t.employee);
    const body = (await fetchFeed((await feedUrl()).url)).body;
    expect(body).toContain('DTSTART:20301103T040000Z');
    expect(body).toContain('DTEND:20301103T063000Z');
    expect(body).toContain('DTSTART;TZID=America/New_York:20300310T013000');
    expect(body).toContain('DTEND;TZID=America/New_York:20300310T033000');
    expect(
      parse(body)
        .events.map((e) => [e.start, e.end])
        .sort(),
    ).toEqual([
      ['2030-03-10T06:30:00.000Z', '2030-03-10T07:30:00.000Z'],
      ['2030-11-03T04:00:00.000Z', '2030-11-03T06:30:00.000Z'],
    ]);
  });

  it('names the feed after its owner in one line, whatever the name claim held', async () => {
    const evil = await t.ctx.caller('employee', tenantOf(t.admin), `eve-${Date.now()}`, {
      name: 'Eve\r\nX-WR-CALNAME:Owned\r\nBEGIN:VEVENT',
    });
    const token = (await evil.request('POST', '/api/v1/me/calendar-token')).json();
    const body = (await t.ctx.request('GET', new URL(token.url).pathname)).body;
    expect(body).not.toContain('\r\nX-WR-CALNAME:Owned');
    expect(body).not.toContain('\r\nBEGIN:VEVENT');
    expect(parse(body).name).toBe('Shifts of Eve X-WR-CALNAME:Owned BEGIN:VEVENT');
  });
});

describe('calendar feed', () => {
  it('serves the caller’s shifts as iCalendar with stable UIDs, the tenant zone and the place', async () => {
    const assignment = await scheduled();
    const { token, url } = await feedUrl();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url).toMatch(new RegExp(`^http://[^/]+/cal/${token}\\.ics$`));
    const response = await fetchFeed(url);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    // No cache may keep serving a feed after its address is revoked.
    expect(response.headers['cache-control']).toBe('private, no-store');
    const feed = parse(response.body);
    expect(feed.zones).toEqual(['Europe/Berlin']);
    expect(feed.events).toEqual([
      {
        uid: `${assignment.id}@shift-scheduler`,
        summary: 'Bar, early (Festival)',
        location: 'Hall 3, Messedamm 22, 14055 Berlin',
        description: 'Bartender at Festival',
        start: '2030-07-02T06:00:00.000Z',
        end: '2030-07-02T12:00:00.000Z',
        tzid: 'Europe/Berlin',
      },
    ]);
    expect(response.body).toContain('DTSTART;TZID=Europe/Berlin:20300702T080000');
    // Who made it, and how often clients that honour it should poll: hourly.
    expect(response.body).toContain('\r\nPRODID:-//shift-scheduler//shifts//EN\r\n');
    expect(response.body).toContain('\r\nREFRESH-INTERVAL;VALUE=DURATION:PT1H\r\nX-PUBLISHED-TTL:PT1H\r\n');
    // The same UIDs on every fetch: calendars update events instead of adding copies.
    expect(parse((await fetchFeed(url)).body).events.map((e) => e.uid)).toEqual([
      `${assignment.id}@shift-scheduler`,
    ]);
  });

  it('writes a UTC tenant’s times in UTC and every DTSTAMP in UTC, as RFC 5545 requires', async () => {
    const assignment = await scheduled({ timezone: 'UTC' });
    const { url } = await feedUrl();
    const body = (await fetchFeed(url)).body;
    expect(body).toContain('DTSTART:20300702T060000Z');
    expect(body).toContain('DTEND:20300702T120000Z');
    expect(body).not.toContain('VTIMEZONE');
    expect(body).not.toContain('TZID');
    expect(body).toMatch(/\r\nDTSTAMP:\d{8}T\d{6}Z\r\n/);
    const feed = parse(body);
    expect(feed.events.map((e) => [e.uid, e.start, e.end])).toEqual([
      [`${assignment.id}@shift-scheduler`, '2030-07-02T06:00:00.000Z', '2030-07-02T12:00:00.000Z'],
    ]);
    // In a zoned feed too, and every TZID used has its VTIMEZONE.
    await inZone('America/New_York');
    const zoned = (await fetchFeed(url)).body;
    expect(zoned).toMatch(/\r\nDTSTAMP:\d{8}T\d{6}Z\r\n/);
    expect(zoned).toContain('DTSTART;TZID=America/New_York:20300702T020000');
    expect(parse(zoned).zones).toEqual(['America/New_York']);
    expect(zoned.endsWith('END:VCALENDAR\r\n')).toBe(true);
  });

  it('holds only the owner’s own shifts, with and without a place', async () => {
    const mine = await scheduled();
    // A colleague on another shift, without a location: not in my feed, in theirs.
    const colleague = await t.ctx.caller('employee', tenantOf(t.admin), 'colleague');
    const role = await roleHeldBy(colleague, 'Runner');
    const event = await newEvent(t.admin);
    const shift = await newShift(t.admin, event, { roleId: role });
    const theirs = await assign(shift, colleague);
    const { url } = await feedUrl();
    expect(parse((await fetchFeed(url)).body).events.map((e) => e.uid)).toEqual([
      `${mine.id}@shift-scheduler`,
    ]);
    const theirUrl = (await colleague.request('POST', '/api/v1/me/calendar-token')).json().url;
    const [event2] = parse((await fetchFeed(theirUrl)).body).events;
    expect(event2?.uid).toBe(`${theirs.id}@shift-scheduler`);
    expect(event2?.location).toBeNull();
  });

  it('hands out addresses under PUBLIC_BASE_URL when one is configured', async () => {
    const behindProxy = await createTestContext({ publicBaseUrl: 'https://shifts.example.org/scheduler' });
    try {
      const { employee } = await behindProxy.freshTenant();
      const { token, url } = (await employee.request('POST', '/api/v1/me/calendar-token')).json();
      expect(url).toBe(`https://shifts.example.org/scheduler/cal/${token}.ics`);
    } finally {
      await behindProxy.close();
    }
  });

  it('stores only a hash; a new token replaces the old, and revoking ends access at once', async () => {
    await scheduled();
    const first = await feedUrl();
    const row = await t.ctx.db.owner
      .selectFrom('calendar_tokens')
      .select('token_hash')
      .where('user_id', '=', t.employee.userId)
      .where('tenant_id', '=', t.employee.tenantId)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(createHash('sha256').update(first.token).digest('hex'));
    const second = await feedUrl();
    expect(second.token).not.toBe(first.token);
    expect((await fetchFeed(first.url)).statusCode).toBe(404);
    expect((await fetchFeed(second.url)).statusCode).toBe(200);
    expect((await t.employee.request('DELETE', '/api/v1/me/calendar-token')).statusCode).toBe(204);
    const revoked = await fetchFeed(second.url);
    expect(revoked.statusCode).toBe(404);
    expect(revoked.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'calendar not found' } });
    expect((await t.employee.request('DELETE', '/api/v1/me/calendar-token')).statusCode).toBe(204);
  });

  it('stops answering while its owner is deactivated, and answers again once reactivated', async () => {
    await scheduled();
    const { url } = await feedUrl();
    const deactivate = (active: boolean) =>
      t.admin.request('PATCH', `/api/v1/users/${t.employee.userId}`, { active });
    expect((await deactivate(false)).statusCode).toBe(200);
    const refused = await fetchFeed(url);
    expect(refused.statusCode).toBe(404);
    expect(refused.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'calendar not found' } });
    expect((await deactivate(true)).statusCode).toBe(200);
    expect((await fetchFeed(url)).statusCode).toBe(200);
  });

  it('answers 404 for malformed and unknown tokens, without a bearer token either way', async () => {
    for (const path of [
      '/cal/abc.ics',
      `/cal/${'A'.repeat(43)}.ics`,
      `/cal/${'A'.repeat(43)}`,
      '/cal/%00.ics',
    ]) {
      const response = await t.ctx.request('GET', path);
      expect(response.statusCode, path).toBe(404);
      expect(response.json(), path).toEqual({ error: { code: 'NOT_FOUND', message: 'calendar not found' } });
    }
  });

  it('reaches back 90 days: a shift that ended longer ago is left out, a recent one is in', async () => {
    await inZone('UTC');
    const role = await roleHeldBy(t.employee, 'Porter');
    const day = 24 * 60 * 60 * 1000;
    const at = (daysAgo: number, hours: number) =>
      new Date(Date.now() - daysAgo * day + hours * 3_600_000).toISOString();
    const event = await newEvent(t.admin, { starts_at: at(120, 0), ends_at: at(1, 0) });
    const assigned = [];
    for (const daysAgo of [95, 85]) {
      const shift = await newShift(t.admin, event, {
        roleId: role,
        starts_at: at(daysAgo, 0),
        ends_at: at(daysAgo, 4),
      });
      assigned.push(await assign(shift, t.employee));
    }
    const { url } = await feedUrl();
    expect(parse((await fetchFeed(url)).body).events.map((e) => e.uid)).toEqual([
      `${assigned[1]?.id}@shift-scheduler`,
    ]);
  });

  it('shows an admin the unpublished shifts they are on, and names a feed without a display name "Shifts"', async () => {
    await scheduled({ publish: false });
    const admin = await t.ctx.caller('admin', tenantOf(t.admin), `boss-${Date.now()}`, { name: '' });
    const role = await roleHeldBy(admin, 'Lead');
    const event = await newEvent(t.admin, { publish: false });
    const shift = await newShift(t.admin, event, { roleId: role, publish: false });
    const held = await assign(shift, admin);
    const token = (await admin.request('POST', '/api/v1/me/calendar-token')).json();
    const feed = parse((await t.ctx.request('GET', new URL(token.url).pathname)).body);
    expect(feed.events.map((e) => e.uid)).toEqual([`${held.id}@shift-scheduler`]);
    expect(feed.name).toBe('Shifts');
  });

  it('writes a place from what the location has: a name and a city only', async () => {
    await inZone('UTC');
    const role = await roleHeldBy(t.employee, 'Usher');
    const location = (await created(t.admin, '/api/v1/locations', { name: 'Hall 5', city: 'Leipzig' })).id;
    const event = await newEvent(t.admin);
    const shift = await created(t.admin, '/api/v1/shifts', {
      event_id: event,
      name: 'Doors',
      location_id: location,
      starts_at: '2030-07-02T06:00:00Z',
      ends_at: '2030-07-02T12:00:00Z',
      slots: [{ role_id: role, capacity: 1 }],
    });
    await t.admin.request('POST', `/api/v1/shifts/${shift.id}/publish`);
    const slot = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()[0].id;
    await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${slot}/assign`, { user_id: t.employee.userId });
    const { url } = await feedUrl();
    expect(parse((await fetchFeed(url)).body).events.map((e) => e.location)).toEqual(['Hall 5, Leipzig']);
  });

  it('shows employees only published shifts of published events', async () => {
    await scheduled({ publish: false });
    const { url } = await feedUrl();
    expect(parse((await fetchFeed(url)).body).events).toEqual([]);
  });

  it('is for admins and employees: a customer gets the fixed 403', async () => {
    const customer = await t.ctx.caller('customer', tenantOf(t.admin), 'cust-1', { customer: 'c-1' });
    const response = await customer.request('POST', '/api/v1/me/calendar-token');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    expect((await customer.request('GET', '/api/v1/me/calendar-token')).json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('GET /api/v1/me/calendar-token', () => {
  const status = (caller: Caller) => caller.request('GET', '/api/v1/me/calendar-token');
  const none = { error: { code: 'NOT_FOUND', message: 'calendar token not found' } };

  it('says whether the caller’s address works and since when, never the address', async () => {
    const missing = await status(t.employee);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual(none);
    const { token } = await feedUrl();
    const first = await status(t.employee);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/) });
    expect(first.body).not.toContain(token);
    // Another person's address is theirs alone: the admin has none.
    expect((await status(t.admin)).json()).toEqual(none);
    const second = await feedUrl();
    expect(Date.parse((await status(t.employee)).json().created_at)).toBeGreaterThanOrEqual(
      Date.parse(first.json().created_at),
    );
    expect(second.token).not.toBe(token);
    expect((await t.employee.request('DELETE', '/api/v1/me/calendar-token')).statusCode).toBe(204);
    expect((await status(t.employee)).json()).toEqual(none);
  });
});

describe('the feed address behind a public base URL', () => {
  const behindProxy = useRouteTests({ publicBaseUrl: 'https://shifts.example.org/scheduler' });

  it('is absolute, on the public address an employee’s calendar app can reach, and opens the feed there', async () => {
    const response = await behindProxy.employee.request('POST', '/api/v1/me/calendar-token');
    expect(response.statusCode).toBe(201);
    const { token, url } = response.json();
    expect(url).toBe(`https://shifts.example.org/scheduler/cal/${token}.ics`);
    // The proxy strips its prefix: the app serves the feed at /cal/.
    const feed = await behindProxy.ctx.request('GET', `/cal/${token}.ics`);
    expect(feed.statusCode).toBe(200);
    expect(feed.headers['content-type']).toBe('text/calendar; charset=utf-8');
  });
});
