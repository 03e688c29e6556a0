import { expect } from 'vitest';
import type { RouteTestState } from './context.ts';
import { uniqueName } from './context.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from './scheduling.ts';

/**
 * Every /api/v1 route that names a record in its path, as the app registered it, called
 * by an admin of another tenant with the ids of real records: each answers 404, exactly
 * like a missing record, and changes nothing. A new route with a path id joins the
 * matrix by itself; one that needs a body fails here until a valid body is listed below.
 * Run as it is (test/http/cross-tenant-matrix.test.ts) and with the application's tenant
 * filters removed (test/db/tenant-wall.test.ts). Routes that name records in their
 * body instead (bodyReferences) answer 422 for another tenant's, as for unknown ones, and
 * change nothing either. Answers the records it laid down, for further checks.
 */
const bodies: Record<string, (world: World) => unknown> = {
  'PATCH /api/v1/events/:id': () => ({ name: 'Taken over' }),
  'POST /api/v1/events/:id/documents/upload': () => ({
    filename: 'a.pdf',
    content_type: 'application/pdf',
    size_bytes: 10,
  }),
  'POST /api/v1/events/:event_id/shifts/bulk': () => ({ start_time: '09:00', end_time: '17:00' }),
  'PATCH /api/v1/shifts/:id': () => ({ name: 'Taken over' }),
  'POST /api/v1/shifts/:id/slots': (world) => ({ role_id: world.theirRole, capacity: 1 }),
  'PATCH /api/v1/shifts/:id/slots/:slot_id': () => ({ capacity: 9 }),
  'POST /api/v1/shifts/:shift_id/slots/:slot_id/assign': (world) => ({ user_id: world.theirUser }),
  'POST /api/v1/assignments/:id/offer': () => ({}),
  'PATCH /api/v1/forms/:id': () => ({ title: 'Taken over' }),
  'PATCH /api/v1/users/:id': () => ({ active: false, name: 'Taken over' }),
  'POST /api/v1/forms/:form_id/submissions/:sub_id/convert': () => ({
    name: 'Taken over',
    starts_at: '2030-01-01T10:00:00Z',
    ends_at: '2030-01-01T12:00:00Z',
  }),
};

/** Routes whose body names records: another tenant's are unknown there (422), like missing ones. */
const bodyReferences: [string, string, (world: World) => unknown, string][] = [
  [
    'POST',
    '/api/v1/shifts/publish',
    (world) => ({ shift_ids: [world.draftShift] }),
    'shift_ids: no such shift in this tenant',
  ],
  [
    'POST',
    '/api/v1/shifts/publish',
    (world) => ({ event_id: world.event }),
    'event_id: no such event in this tenant',
  ],
];

export interface World {
  role: string;
  location: string;
  event: string;
  shift: string;
  /** A draft shift of `event`: what a publication of another tenant must leave a draft. */
  draftShift: string;
  slot: string;
  assignment: string;
  user: string;
  theirRole: string;
  theirUser: string;
  form: string;
  submission: string;
  notification: string;
  pushSubscription: string;
  timeEntry: string;
  timeOff: string;
  /** An open offer of a seat of the worker's (one without recorded time). */
  offer: string;
  webhook: string;
}

function idFor(route: string, param: string, world: World): string {
  const resource = route.split('/')[3];
  const byResource: Record<string, string> = {
    events: world.event,
    shifts: world.shift,
    roles: world.role,
    locations: world.location,
    users: world.user,
    forms: world.form,
    notifications: world.notification,
    'push-subscriptions': world.pushSubscription,
    'time-tracking': world.timeEntry,
    'time-off': world.timeOff,
    assignments: world.assignment,
    // /me/assignments/{id}/clock-in and clock-out: a seat of the worker's.
    me: world.assignment,
    offers: world.offer,
    webhooks: world.webhook,
  };
  const byName: Record<string, string> = {
    event_id: world.event,
    shift_id: world.shift,
    slot_id: world.slot,
    assignment_id: world.assignment,
    role_id: world.role,
    user_id: world.user,
    form_id: world.form,
    sub_id: world.submission,
    n: '2',
  };
  const id = param === 'id' ? byResource[resource ?? ''] : byName[param];
  if (!id) throw new Error(`no id for :${param} in ${route}; add it to the matrix`);
  return id;
}

export async function anotherTenantGetsNothing(t: RouteTestState): Promise<World> {
  const role = await newRole(t.admin);
  // A subject only this tenant has: ids derive from issuer and subject, not tenant.
  const worker = await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('worker'));
  await qualify(t.admin, worker, role);
  const location = (await created(t.admin, '/api/v1/locations', { name: 'Hall' })).id;
  const event = await newEvent(t.admin);
  const shift = await newShift(t.admin, event, { roleId: role, capacities: [3] });
  const slot = shift.slots[0] ?? '';
  const draftShift = (
    await newShift(t.admin, event, {
      roleId: role,
      publish: false,
      starts_at: '2030-07-03T10:00:00Z',
      ends_at: '2030-07-03T14:00:00Z',
    })
  ).id;
  const assignment = (await created(worker, `/api/v1/shifts/${shift.id}/slots/${slot}/claim`, {})).id;
  // Time tracking on in both tenants, so its 404s come from the data, not the gate; time
  // is recorded below on a shift of 2030, before it ends.
  for (const admin of [t.admin, t.otherAdmin]) {
    await admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: true,
      notify_on_assignment: true,
      time_entries_before_end: true,
    });
  }
  // The worker is told of a change to their shift: a notification only they own.
  await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Bar, late' });
  const notification = (await worker.request('GET', '/api/v1/notifications')).json()[0].id as string;
  // Registered after the notification, so nothing is sent to this made-up push service.
  const pushSubscription = (
    await created(worker, '/api/v1/push-subscriptions', {
      endpoint: 'https://push.example.net/wpush/matrix',
      keys: {
        p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
        auth: 'tBHItJI5svbpez7KI4CCXg',
      },
    })
  ).id;
  const timeEntry = await created(t.admin, '/api/v1/time-tracking/entries', {
    shift_assignment_id: assignment,
    started_at: '2030-01-01T10:00:00Z',
    ended_at: '2030-01-01T12:00:00Z',
  });
  // Requested: it blocks nothing, and another tenant must neither decide nor remove it.
  const timeOff = (
    await created(worker, '/api/v1/me/time-off', {
      starts_at: '2030-08-01T00:00:00Z',
      ends_at: '2030-08-02T00:00:00Z',
    })
  ).id;
  const offeredShift = await newShift(t.admin, event, {
    roleId: role,
    starts_at: '2030-07-04T10:00:00Z',
    ends_at: '2030-07-04T14:00:00Z',
  });
  const offeredSeat = (
    await created(worker, `/api/v1/shifts/${offeredShift.id}/slots/${offeredShift.slots[0]}/claim`, {})
  ).id;
  const offer = (await created(worker, `/api/v1/assignments/${offeredSeat}/offer`, {})).id;
  const form = await created(t.admin, '/api/v1/forms', {
    title: 'Catering',
    fields: [{ name: 'contact', label: 'Name', type: 'text', required: true }],
  });
  const submission = await created(t.admin, `/api/v1/f/${form.slug}/submit`, { data: { contact: 'Dana' } });
  // Made last, so no change above is sent to this made-up receiver.
  const webhook = (
    await created(t.admin, '/api/v1/webhooks', {
      url: 'https://hooks.example.net/matrix',
      events: ['form.submitted'],
    })
  ).id;
  const world: World = {
    role,
    location,
    event,
    shift: shift.id,
    draftShift,
    slot,
    assignment,
    user: worker.userId,
    theirRole: await newRole(t.otherAdmin),
    theirUser: t.otherAdmin.userId,
    form: form.id,
    submission: submission.id,
    notification,
    pushSubscription,
    timeEntry: timeEntry.id,
    timeOff,
    offer,
    webhook,
  };
  const snapshot = async () =>
    Promise.all(
      [
        `/api/v1/events/${event}`,
        `/api/v1/shifts/${shift.id}`,
        `/api/v1/shifts/${draftShift}`,
        `/api/v1/shifts/${shift.id}/slots`,
        `/api/v1/shifts/${shift.id}/assignments`,
        `/api/v1/users/${worker.userId}`,
        '/api/v1/roles',
        '/api/v1/locations',
        `/api/v1/events/${event}/shifts`,
        `/api/v1/time-tracking/ledger/${worker.userId}`,
        `/api/v1/time-tracking/payouts/${worker.userId}`,
        `/api/v1/time-tracking/entries/${timeEntry.id}`,
        `/api/v1/forms/${form.id}`,
        `/api/v1/forms/${form.id}/submissions`,
        // Any change another tenant made would have left an entry here.
        '/api/v1/audit-log?limit=200',
        `/api/v1/time-off?user_id=${worker.userId}`,
        '/api/v1/offers',
        '/api/v1/webhooks',
        `/api/v1/webhooks/${webhook}/deliveries`,
      ].map(async (url) => (await t.admin.request('GET', url)).json()),
    );
  const before = await snapshot();

  // The form surface resolves slugs across tenants and answers 403 (test/forms/routes.test.ts).
  const routes = t.ctx.routes.filter(
    (r) => r.url.startsWith('/api/v1/') && r.url.includes(':') && !r.url.startsWith('/api/v1/f/'),
  );
  expect(routes.length).toBeGreaterThan(20);
  for (const route of routes) {
    const key = `${route.method} ${route.url}`;
    const url = route.url.replace(/:([a-z_]+)/g, (_m, param: string) => idFor(route.url, param, world));
    const body = bodies[key]?.(world);
    const response = await t.otherAdmin.request(route.method, url, body);
    expect(response.statusCode, `${key}: ${response.body}`).toBe(404);
    expect(response.json().error.code, key).toBe('NOT_FOUND');
  }
  for (const [method, url, body, message] of bodyReferences) {
    const response = await t.otherAdmin.request(method as 'POST', url, body(world));
    expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(422);
    expect(response.json().error.message, `${method} ${url}`).toMatch(new RegExp(`^${message}`));
  }
  expect(await snapshot()).toEqual(before);
  // Another tenant's audit log names none of these records, even when asked for one.
  for (const id of [world.shift, world.assignment, world.user]) {
    const audit = await t.otherAdmin.request('GET', `/api/v1/audit-log?target_id=${id}`);
    expect(audit.json(), id).toEqual([]);
  }
  const byWorker = await t.otherAdmin.request('GET', `/api/v1/audit-log?actor_id=${world.user}`);
  expect(byWorker.json()).toEqual([]);
  // The worker's notification is still unread and the subscription still theirs.
  expect((await worker.request('GET', '/api/v1/notifications')).json()[0]).toMatchObject({
    id: notification,
    read_at: null,
  });
  expect((await worker.request('DELETE', `/api/v1/push-subscriptions/${pushSubscription}`)).statusCode).toBe(
    204,
  );
  return world;
}
