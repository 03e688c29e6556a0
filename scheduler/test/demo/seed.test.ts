import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Temporal } from 'temporal-polyfill';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { type DevIssuer, openDevIssuer } from '../../src/auth/dev-issuer.ts';
import { userIdForSubject } from '../../src/auth/identity.ts';
import {
  DEMO_EVENT_NAME,
  DEMO_TIME_ZONE,
  type DemoSeedResult,
  describeDemoSeed,
  seedDemo,
} from '../../src/demo/seed.ts';
import { DEMO_TENANT, demoPeople } from '../../src/dev-sign-in/people.ts';
import type { App } from '../../src/http/types.ts';
import { noGeocoder } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * The demo week, read back through the API as the demo people see it: what the staff app
 * is shown with (DEMO_DATA=true).
 */
const now = new Date();

/** A database seeded with the demo week; a test that changes the week takes one of its own. */
interface Demo {
  db: TestDatabase;
  app: App;
  issuer: DevIssuer;
  first: DemoSeedResult;
}
const opened: Demo[] = [];

async function freshDemo(): Promise<Demo> {
  const issuer = await openDevIssuer(mkdtempSync(path.join(tmpdir(), 'demo-seed-')), { create: true });
  const db = await openTestDatabase();
  const app = await buildApp({ db: db.db, verifier: issuer.verifier, geocoder: noGeocoder });
  const demo = { db, app, issuer, first: await seedDemo(app, issuer, { now }) };
  opened.push(demo);
  return demo;
}

// The week the reading tests share: none of them changes it.
let shared: Demo;
let app: App;
let issuer: DevIssuer;
let first: DemoSeedResult;
let as: ReturnType<typeof caller>;

interface Shift {
  id: string;
  name: string;
  starts_at: string;
  ends_at: string;
  status: string;
}
interface Slot {
  id: string;
  role_id: string;
  capacity: number;
  filled_count: number;
}

beforeAll(async () => {
  shared = await freshDemo();
  ({ app, issuer, first } = shared);
  as = caller(shared);
});

afterAll(async () => {
  for (const demo of opened) {
    await demo.app.close();
    await demo.db.dispose();
  }
});

/** Requests to a demo's API as one of the demo people. */
const caller = (demo: Demo) =>
  async function as<T>(subject: string, method: 'GET' | 'POST', url: string, body?: unknown) {
    const { app, issuer } = demo;
    const person = demoPeople.find((p) => p.subject === subject);
    if (!person) throw new Error(subject);
    const token = await issuer.sign({
      tenant: DEMO_TENANT,
      role: person.role,
      subject,
      name: person.name,
      email: person.email,
      ttlSeconds: 600,
    });
    const response = await app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.json() as T };
  };

const MARIA = 'demo-employee-1';
const mariaId = (demo: Demo = shared) => userIdForSubject(demo.issuer.issuer, MARIA);
const overlaps = (a: { starts_at: string; ends_at: string }, b: { starts_at: string; ends_at: string }) =>
  Date.parse(a.starts_at) < Date.parse(b.ends_at) && Date.parse(b.starts_at) < Date.parse(a.ends_at);
const local = (instant: string) => Temporal.Instant.from(instant).toZonedDateTimeISO(DEMO_TIME_ZONE);

describe('demo seed', () => {
  it('seeds the demo tenant with a published week from today', async () => {
    expect(first).toMatchObject({ seeded: true, tenant: 'demo', people: 4, offers: 2 });
    expect(describeDemoSeed(first)).toMatch(
      /^demo data: seeded tenant "demo": 4 people, 3 roles, 2 locations, event "Demo week" \S+ to \S+ with \d+ shifts, \d+ seats taken and 2 open offers$/,
    );
    const settings = await as<Record<string, unknown>>('demo-admin', 'GET', '/api/v1/tenant/settings');
    expect(settings.body).toMatchObject({
      timezone: 'Europe/Berlin',
      locale: 'en',
      time_tracking_enabled: true,
    });

    const roles = await as<{ name: string }[]>('demo-admin', 'GET', '/api/v1/roles');
    expect(roles.body.map((r) => r.name)).toEqual(['Bar', 'Cashier', 'Security']);
    const locations = await as<{ name: string; street: string; city: string }[]>(
      'demo-admin',
      'GET',
      '/api/v1/locations',
    );
    expect(locations.body).toEqual([
      expect.objectContaining({ name: 'Main Hall', street: 'Alexanderplatz 1', city: 'Berlin' }),
      expect.objectContaining({ name: 'Riverside Stage', street: 'Friedrichstraße 100', city: 'Berlin' }),
    ]);

    const users = await as<{ id: string; display_name: string; role: string; email: string }[]>(
      'demo-admin',
      'GET',
      '/api/v1/users',
    );
    expect(users.body.map((u) => [u.id, u.display_name, u.role, u.email]).sort()).toEqual(
      demoPeople.map((p) => [userIdForSubject(issuer.issuer, p.subject), p.name, p.role, p.email]).sort(),
    );

    const events = await as<{ name: string; starts_at: string; ends_at: string; status: string }[]>(
      'demo-admin',
      'GET',
      '/api/v1/events',
    );
    expect(events.body).toHaveLength(1);
    const event = events.body[0];
    expect(event).toMatchObject({ name: DEMO_EVENT_NAME, status: 'published' });
    const today = Temporal.Instant.fromEpochMilliseconds(now.getTime()).toZonedDateTimeISO(DEMO_TIME_ZONE);
    expect(
      local(event?.starts_at ?? '')
        .toPlainDate()
        .equals(today.toPlainDate()),
    ).toBe(true);
    expect(
      local(event?.starts_at ?? '')
        .toPlainTime()
        .toString(),
    ).toBe('00:00:00');
    expect(
      local(event?.ends_at ?? '')
        .toPlainDate()
        .equals(today.toPlainDate().add({ days: 7 })),
    ).toBe(true);

    // Shifts on each of the seven days, all published.
    const shifts = await as<Shift[]>('demo-admin', 'GET', '/api/v1/shifts');
    const days = new Set(shifts.body.map((s) => local(s.starts_at).toPlainDate().toString()));
    expect(days.size).toBe(7);
    expect(shifts.body.every((s) => s.status !== 'draft')).toBe(true);
  });

  it('gives Maria her next shift within 24 hours, and an overnight shift in the week', async () => {
    const mine = await as<{ shift: Shift }[]>(
      MARIA,
      'GET',
      `/api/v1/me/assignments?from=${encodeURIComponent(now.toISOString())}`,
    );
    expect(mine.status).toBe(200);
    const upcoming = mine.body
      .map((a) => a.shift)
      .filter((s) => Date.parse(s.starts_at) > now.getTime())
      .sort((a, b) => Date.parse(a.starts_at) - Date.parse(b.starts_at));
    expect(upcoming.length).toBeGreaterThanOrEqual(3);
    expect(Date.parse(upcoming[0]?.starts_at ?? '') - now.getTime()).toBeLessThanOrEqual(24 * 60 * 60 * 1000);

    const shifts = await as<Shift[]>(MARIA, 'GET', '/api/v1/shifts');
    const overnight = shifts.body.filter(
      (s) => !local(s.starts_at).toPlainDate().equals(local(s.ends_at).toPlainDate()),
    );
    expect(
      overnight.map((s) => [
        s.name,
        local(s.starts_at).toPlainTime().toString(),
        local(s.ends_at).toPlainTime().toString(),
      ]),
    ).toEqual([['Night security', '22:00:00', '06:00:00']]);
  });

  it('offers two seats Maria can take: one of Sam to anyone, one of Lena to her', async () => {
    const offers = await as<
      { id: string; from_user_id: string; to_user_id: string | null; status: string }[]
    >(MARIA, 'GET', '/api/v1/offers?status=open');
    expect(offers.status).toBe(200);
    const sam = userIdForSubject(issuer.issuer, 'demo-employee-2');
    const lena = userIdForSubject(issuer.issuer, 'demo-employee-3');
    expect(offers.body.map((o) => [o.from_user_id, o.to_user_id]).sort()).toEqual(
      [
        [sam, null],
        [lena, mariaId()],
      ].sort(),
    );
    // Not taken here: the idempotency test below reads the week as seeded.
  });

  it('does not seed again while the week runs', async () => {
    const before = await as<Shift[]>('demo-admin', 'GET', '/api/v1/shifts');
    const again = await seedDemo(app, issuer, { now });
    expect(again).toMatchObject({ seeded: false, tenant: 'demo' });
    expect(describeDemoSeed(again)).toMatch(
      /^demo data: tenant "demo" has shifts until \S+; nothing seeded$/,
    );
    const after = await as<Shift[]>('demo-admin', 'GET', '/api/v1/shifts');
    expect(after.body.map((s) => s.id)).toEqual(before.body.map((s) => s.id));
    expect((await as<unknown[]>('demo-admin', 'GET', '/api/v1/roles')).body).toHaveLength(3);
    expect((await as<unknown[]>('demo-admin', 'GET', '/api/v1/events')).body).toHaveLength(1);
  });

  it('lets Maria claim an open seat and accept both offers, but not a Security seat', async () => {
    const demo = await freshDemo();
    const as = caller(demo);
    const mariaId = () => userIdForSubject(demo.issuer.issuer, MARIA);
    const shifts = await as<Shift[]>(
      MARIA,
      'GET',
      `/api/v1/shifts?from=${encodeURIComponent(now.toISOString())}`,
    );
    const mine = await as<{ shift: Shift }[]>(MARIA, 'GET', '/api/v1/me/assignments');
    const qualified = await as<{ id: string; name: string }[]>(MARIA, 'GET', '/api/v1/me/qualifications');
    expect(qualified.body.map((r) => r.name).sort()).toEqual(['Bar', 'Cashier']);
    const held = new Set(qualified.body.map((r) => r.id));

    const roles = await as<{ id: string; name: string }[]>(MARIA, 'GET', '/api/v1/roles');
    const security = roles.body.find((r) => r.name === 'Security')?.id;
    let claimable: { shift: Shift; slot: Slot } | undefined;
    let unqualified: { shift: Shift; slot: Slot } | undefined;
    for (const shift of shifts.body) {
      if (Date.parse(shift.starts_at) <= now.getTime()) continue;
      const slots = await as<Slot[]>(MARIA, 'GET', `/api/v1/shifts/${shift.id}/slots`);
      for (const slot of slots.body) {
        if (slot.filled_count >= slot.capacity) continue;
        if (slot.role_id === security) unqualified ??= { shift, slot };
        else if (held.has(slot.role_id) && !mine.body.some((a) => overlaps(a.shift, shift)))
          claimable ??= { shift, slot };
      }
    }
    if (!claimable || !unqualified) throw new Error('the week has no open seat of each kind');
    const claimed = await as(
      MARIA,
      'POST',
      `/api/v1/shifts/${claimable.shift.id}/slots/${claimable.slot.id}/claim`,
    );
    expect(claimed).toMatchObject({ status: 201, body: { user_id: mariaId(), source: 'claim' } });
    const refused = await as(
      MARIA,
      'POST',
      `/api/v1/shifts/${unqualified.shift.id}/slots/${unqualified.slot.id}/claim`,
    );
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'NOT_QUALIFIED' } } });

    const offers = await as<{ id: string }[]>(MARIA, 'GET', '/api/v1/offers?status=open');
    for (const offer of offers.body) {
      const accepted = await as(MARIA, 'POST', `/api/v1/offers/${offer.id}/accept`);
      expect(accepted).toMatchObject({ status: 200, body: { status: 'approved', accepted_by: mariaId() } });
    }
    expect(offers.body).toHaveLength(2);
  });

  it('seeds a fresh week once the last one is over, keeping people, roles and locations', async () => {
    const demo = await freshDemo();
    const as = caller(demo);
    const { app, issuer } = demo;
    const later = new Date(now.getTime() + 8 * 24 * 60 * 60 * 1000);
    const next = await seedDemo(app, issuer, { now: later });
    expect(next).toMatchObject({ seeded: true, people: 4, offers: 2 });
    expect((await as<unknown[]>('demo-admin', 'GET', '/api/v1/roles')).body).toHaveLength(3);
    expect((await as<unknown[]>('demo-admin', 'GET', '/api/v1/locations')).body).toHaveLength(2);
    expect((await as<unknown[]>('demo-admin', 'GET', '/api/v1/users')).body).toHaveLength(4);
    const events = await as<{ name: string; starts_at: string }[]>('demo-admin', 'GET', '/api/v1/events');
    expect(events.body.map((e) => e.name)).toEqual([DEMO_EVENT_NAME, DEMO_EVENT_NAME]);
    const mine = await as<{ shift: Shift }[]>(
      MARIA,
      'GET',
      `/api/v1/me/assignments?from=${encodeURIComponent(later.toISOString())}`,
    );
    const upcoming = mine.body
      .map((a) => Date.parse(a.shift.starts_at))
      .filter((start) => start > later.getTime())
      .sort((a, b) => a - b);
    expect((upcoming[0] ?? Number.POSITIVE_INFINITY) - later.getTime()).toBeLessThanOrEqual(
      24 * 60 * 60 * 1000,
    );
    // And then it is running again.
    expect(await seedDemo(app, issuer, { now: later })).toMatchObject({ seeded: false });
  });
});
