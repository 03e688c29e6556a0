import { Temporal } from 'temporal-polyfill';
import type { DevIssuer } from '../auth/dev-issuer.ts';
import { userIdForSubject } from '../auth/identity.ts';
import { DEMO_TENANT, type DemoPerson, demoPeople } from '../dev-sign-in/people.ts';
import type { App } from '../http/types.ts';

/**
 * The demo week (DEMO_DATA=true, with the development issuer): the demo tenant, its job
 * roles, two locations, the demo people with their qualifications, and a published event
 * over the next seven days with shifts every day, seeded through the API's own routes
 * (each request with a development token of the person acting), so every rule holds as
 * for any caller.
 *
 * For Maria (the employee the staff app is shown with): her next shift starts within a
 * day, open Bar and Cashier seats she may claim, Security shifts she may not (she lacks
 * the role), one overnight shift, a seat of Sam's offered to anyone and one of Lena's
 * offered to her.
 *
 * Run at every start: while the tenant has a shift that has not ended, nothing is seeded
 * (a restart does not duplicate); once the week is over, a fresh week from today.
 */

export const DEMO_TIME_ZONE = 'Europe/Berlin';
export const DEMO_EVENT_NAME = 'Demo week';

const roles = [
  { name: 'Bar', description: 'Drinks and counter' },
  { name: 'Cashier', description: 'Tickets and till' },
  { name: 'Security', description: 'Doors and crowd' },
] as const;
type RoleName = (typeof roles)[number]['name'];

const locations = [
  {
    name: 'Main Hall',
    street: 'Alexanderplatz 1',
    postal_code: '10178',
    city: 'Berlin',
    country: 'DE',
  },
  {
    name: 'Riverside Stage',
    street: 'Friedrichstraße 100',
    postal_code: '10117',
    city: 'Berlin',
    country: 'DE',
  },
] as const;
type LocationName = (typeof locations)[number]['name'];

/** Who holds which job roles. */
const qualifications: Record<string, RoleName[]> = {
  'demo-employee-1': ['Bar', 'Cashier'],
  'demo-employee-2': ['Bar', 'Security'],
  'demo-employee-3': ['Bar', 'Cashier', 'Security'],
};

const MARIA = 'demo-employee-1';
const SAM = 'demo-employee-2';
const LENA = 'demo-employee-3';

/** A shift of the week: local times on day `day` (0 = today); an end before the start is the next day. */
interface PlannedShift {
  day: number;
  name: string;
  start: string;
  end: string;
  location: LocationName;
  role: RoleName;
  capacity: number;
  /** Subjects given a seat. */
  people: string[];
  /** A seat offered: to anyone (`to: null`) or to a subject. */
  offer?: { from: string; to: string | null };
}

/** The week; Maria's next shift is added to it by `plan`. */
function plan(): PlannedShift[] {
  const shifts: PlannedShift[] = [];
  for (let day = 0; day < 7; day++) {
    shifts.push({
      day,
      name: 'Box office',
      start: '10:00',
      end: '16:00',
      location: 'Main Hall',
      role: 'Cashier',
      capacity: 1,
      people: [],
    });
    shifts.push({
      day,
      name: 'Bar',
      start: '16:00',
      end: '23:00',
      location: 'Riverside Stage',
      role: 'Bar',
      capacity: 2,
      people: [],
    });
  }
  shifts.push(
    {
      day: 1,
      name: 'Door security',
      start: '17:00',
      end: '23:00',
      location: 'Riverside Stage',
      role: 'Security',
      capacity: 2,
      people: [SAM],
    },
    {
      day: 2,
      name: 'Night security',
      start: '22:00',
      end: '06:00',
      location: 'Main Hall',
      role: 'Security',
      capacity: 2,
      people: [SAM],
    },
    {
      day: 5,
      name: 'Door security',
      start: '17:00',
      end: '23:00',
      location: 'Riverside Stage',
      role: 'Security',
      capacity: 2,
      people: [LENA],
    },
  );
  const at = (day: number, name: string) => shifts.find((s) => s.day === day && s.name === name);
  // Maria: Box office on day 3, Bar on day 6 (her next shift is chosen by the clock).
  at(3, 'Box office')?.people.push(MARIA);
  at(6, 'Bar')?.people.push(MARIA);
  // Lena on the Bar of day 2 (one seat left there); Sam's Bar seat of day 4 offered to
  // anyone, Lena's Box office seat of day 5 offered to Maria: both free days for Maria.
  at(2, 'Bar')?.people.push(LENA);
  const samsBar = at(4, 'Bar');
  if (samsBar) {
    samsBar.people.push(SAM);
    samsBar.offer = { from: SAM, to: null };
  }
  const lenasBox = at(5, 'Box office');
  if (lenasBox) {
    lenasBox.people.push(LENA);
    lenasBox.offer = { from: LENA, to: MARIA };
  }
  return shifts;
}

function shiftWindow(today: Temporal.PlainDate, shift: PlannedShift): { starts_at: string; ends_at: string } {
  const date = today.add({ days: shift.day });
  const start = date.toZonedDateTime({ timeZone: DEMO_TIME_ZONE, plainTime: shift.start });
  const endDate = shift.end <= shift.start ? date.add({ days: 1 }) : date;
  const end = endDate.toZonedDateTime({ timeZone: DEMO_TIME_ZONE, plainTime: shift.end });
  return { starts_at: start.toInstant().toString(), ends_at: end.toInstant().toString() };
}

/** What a start found or did; `describe` makes it the log line. */
export type DemoSeedResult =
  | { seeded: false; tenant: string; shiftsUntil: string }
  | {
      seeded: true;
      tenant: string;
      eventId: string;
      from: string;
      until: string;
      shifts: number;
      assignments: number;
      offers: number;
      people: number;
    };

export function describeDemoSeed(result: DemoSeedResult): string {
  if (!result.seeded) {
    return `demo data: tenant "${result.tenant}" has shifts until ${result.shiftsUntil}; nothing seeded`;
  }
  return (
    `demo data: seeded tenant "${result.tenant}": ${result.people} people, ${roles.length} roles, ` +
    `${locations.length} locations, event "${DEMO_EVENT_NAME}" ${result.from} to ${result.until} ` +
    `with ${result.shifts} shifts, ${result.assignments} seats taken and ${result.offers} open offers`
  );
}

/** A request the seed makes did not get the answer it expects. */
export class DemoSeedError extends Error {
  override name = 'DemoSeedError';
}

export async function seedDemo(app: App, issuer: DevIssuer, options: { now: Date }): Promise<DemoSeedResult> {
  // The seed's own requests are not logged one by one (its caller logs the result);
  // warnings and errors still are. It runs before the server listens, so no other
  // request is quietened with them.
  const level = app.log.level;
  if (!['fatal', 'error', 'warn', 'silent'].includes(level)) app.log.level = 'warn';
  try {
    return await seedThroughRoutes(app, issuer, options);
  } finally {
    app.log.level = level;
  }
}

async function seedThroughRoutes(
  app: App,
  issuer: DevIssuer,
  options: { now: Date },
): Promise<DemoSeedResult> {
  const tokens = new Map<string, string>();
  const tokenFor = async (person: DemoPerson) => {
    let token = tokens.get(person.subject);
    if (!token) {
      token = await issuer.sign({
        tenant: DEMO_TENANT,
        role: person.role,
        subject: person.subject,
        name: person.name,
        email: person.email,
        ttlSeconds: 10 * 60,
      });
      tokens.set(person.subject, token);
    }
    return token;
  };
  const person = (subject: string): DemoPerson => {
    const found = demoPeople.find((p) => p.subject === subject);
    if (!found) throw new DemoSeedError(`no demo person ${subject}`);
    return found;
  };
  const userId = (subject: string): string => {
    const id = userIdForSubject(issuer.issuer, subject);
    if (!id) throw new DemoSeedError(`no user id for ${subject}`);
    return id;
  };

  /** One request as `subject`; the parsed body, or a DemoSeedError naming the answer. */
  async function call<T>(
    subject: string,
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    body: unknown,
    expected: number[],
  ): Promise<{ status: number; body: T }> {
    const response = await app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${await tokenFor(person(subject))}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (!expected.includes(response.statusCode)) {
      throw new DemoSeedError(`${method} ${url} answered ${response.statusCode}: ${response.body}`);
    }
    return { status: response.statusCode, body: (response.body === '' ? undefined : response.json()) as T };
  }
  const admin = 'demo-admin';

  /** The ids of named records (roles, locations) by name: the existing ones, the rest created. */
  async function ensureNamed(
    collection: string,
    wanted: readonly { name: string }[],
  ): Promise<Map<string, string>> {
    const ids = new Map<string, string>();
    const existing = await call<{ id: string; name: string }[]>(admin, 'GET', collection, undefined, [200]);
    for (const record of existing.body) ids.set(record.name, record.id);
    for (const record of wanted) {
      if (ids.has(record.name)) continue;
      const created = await call<{ id: string }>(admin, 'POST', collection, record, [201]);
      ids.set(record.name, created.body.id);
    }
    return ids;
  }
  const now = Temporal.Instant.fromEpochMilliseconds(options.now.getTime());

  // A shift not yet over: the week is running (the request also provisions the tenant).
  const current = await call<{ ends_at: string }[]>(
    admin,
    'GET',
    `/api/v1/shifts?from=${encodeURIComponent(now.toString())}`,
    undefined,
    [200],
  );
  if (current.body.length > 0) {
    const last = current.body.map((s) => s.ends_at).sort((a, b) => Temporal.Instant.compare(a, b));
    return { seeded: false, tenant: DEMO_TENANT, shiftsUntil: last[last.length - 1] ?? '' };
  }

  await call(
    admin,
    'PATCH',
    '/api/v1/tenant/settings',
    {
      time_tracking_enabled: true,
      timezone: DEMO_TIME_ZONE,
      locale: 'en',
      notify_on_assignment: true,
      offers_need_approval: false,
      time_off_needs_approval: true,
    },
    [200],
  );

  const roleIds = await ensureNamed('/api/v1/roles', roles);
  const roleId = (name: RoleName) => roleIds.get(name) ?? '';

  const locationIds = await ensureNamed('/api/v1/locations', locations);

  // The employees, by the subject their sign-in carries; existing ones keep their
  // records and get any qualification they lack.
  for (const employee of demoPeople.filter((p) => p.role === 'employee')) {
    const held = (qualifications[employee.subject] ?? []).map(roleId);
    const created = await call(
      admin,
      'POST',
      '/api/v1/users',
      {
        subject: employee.subject,
        name: employee.name,
        role: 'employee',
        email: employee.email,
        qualifications: held,
      },
      [201, 409],
    );
    if (created.status === 409) {
      for (const id of held) {
        await call(
          admin,
          'POST',
          `/api/v1/users/${userId(employee.subject)}/qualifications/${id}`,
          undefined,
          [204],
        );
      }
    }
  }

  const today = now.toZonedDateTimeISO(DEMO_TIME_ZONE).toPlainDate();
  const from = today.toZonedDateTime({ timeZone: DEMO_TIME_ZONE }).toInstant().toString();
  const until = today.add({ days: 7 }).toZonedDateTime({ timeZone: DEMO_TIME_ZONE }).toInstant().toString();
  const event = await call<{ id: string }>(
    admin,
    'POST',
    '/api/v1/events',
    {
      name: DEMO_EVENT_NAME,
      description: 'A week of shifts for trying the staff app (DEMO_DATA=true).',
      location_id: locationIds.get('Main Hall'),
      starts_at: from,
      ends_at: until,
    },
    [201],
  );

  const shifts = plan();
  // Maria's next shift: the first Box office or Bar shift not yet started (they start at
  // 10:00 and 16:00, so within 18 hours), unless it is one she cannot take.
  const next = shifts
    .filter((s) => s.role !== 'Security' && s.people.length === 0 && !s.offer)
    .map((s) => ({ shift: s, startsAt: shiftWindow(today, s).starts_at }))
    .filter((s) => Temporal.Instant.compare(s.startsAt, now) > 0)
    .sort((a, b) => Temporal.Instant.compare(a.startsAt, b.startsAt))[0];
  next?.shift.people.push(MARIA);

  let assignments = 0;
  const offers: { assignmentId: string; offer: { from: string; to: string | null } }[] = [];
  for (const planned of shifts) {
    const created = await call<{ id: string }>(
      admin,
      'POST',
      '/api/v1/shifts',
      {
        event_id: event.body.id,
        name: planned.name,
        location_id: locationIds.get(planned.location),
        ...shiftWindow(today, planned),
        slots: [{ role_id: roleId(planned.role), capacity: planned.capacity }],
      },
      [201],
    );
    const slots = await call<{ id: string }[]>(
      admin,
      'GET',
      `/api/v1/shifts/${created.body.id}/slots`,
      undefined,
      [200],
    );
    const slotId = slots.body[0]?.id ?? '';
    for (const subject of planned.people) {
      const assignment = await call<{ id: string }>(
        admin,
        'POST',
        `/api/v1/shifts/${created.body.id}/slots/${slotId}/assign`,
        { user_id: userId(subject) },
        [201],
      );
      assignments += 1;
      if (planned.offer?.from === subject)
        offers.push({ assignmentId: assignment.body.id, offer: planned.offer });
    }
  }

  await call(admin, 'POST', '/api/v1/shifts/publish', { event_id: event.body.id }, [200]);
  await call(admin, 'POST', `/api/v1/events/${event.body.id}/publish`, undefined, [200]);

  for (const { assignmentId, offer } of offers) {
    await call(
      offer.from,
      'POST',
      `/api/v1/assignments/${assignmentId}/offer`,
      offer.to ? { to_user_id: userId(offer.to) } : {},
      [201],
    );
  }

  return {
    seeded: true,
    tenant: DEMO_TENANT,
    eventId: event.body.id,
    from,
    until,
    shifts: shifts.length,
    assignments,
    offers: offers.length,
    people: demoPeople.length,
  };
}
