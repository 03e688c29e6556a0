import { describe, expect, it } from 'vitest';
import { type Caller, type RouteInfo, uniqueName, useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';

/**
 * Employees see published shifts of published events only, on every route and in every
 * message. An employee holds seats an admin gave them in two shifts they cannot see (a
 * draft shift of a published event, a published shift of a draft event), named like
 * something only admins may read; offers of such seats exist. Every route an employee may
 * call, as the app registered it (not a list kept here), is called with those records'
 * ids, and the refusals a hidden seat causes elsewhere (time off approved as entered, a
 * claim or an accept overlapping it) are provoked: no answer names them, by name or id,
 * and a hidden record is as unknown (404) as a missing one and changes nothing.
 */
const t = useRouteTests();

const CONFIDENTIAL = 'Layoff briefing (confidential)';
const unknownId = '0193a1b2c3d47e8f9a0b1c2d3e4f5aff';

interface Hidden {
  event: string;
  shift: string;
  slot: string;
  /** The employee's seat. */
  seat: string;
  /** An admin's offer of the employee's seat. */
  offer: string;
}

/** A shift the employee cannot see, with a seat of theirs that an admin offers to anyone. */
async function hiddenShift(
  role: string,
  publicEvent: string,
  draft: 'shift' | 'event',
  span: { starts_at: string; ends_at: string },
): Promise<Hidden> {
  const event =
    draft === 'event'
      ? (
          await created(t.admin, '/api/v1/events', {
            name: CONFIDENTIAL,
            starts_at: '2030-07-01T00:00:00Z',
            ends_at: '2030-07-08T00:00:00Z',
          })
        ).id
      : publicEvent;
  const shift = await created(t.admin, '/api/v1/shifts', {
    event_id: event,
    name: CONFIDENTIAL,
    ...span,
    slots: [{ role_id: role, capacity: 2 }],
  });
  if (draft === 'event') {
    const published = await t.admin.request('POST', `/api/v1/shifts/${shift.id}/publish`);
    expect(published.statusCode, published.body).toBe(200);
  }
  const slot = (await t.admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json()[0].id as string;
  const seat = await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${slot}/assign`, {
    user_id: t.employee.userId,
  });
  const offer = await created(t.admin, `/api/v1/assignments/${seat.id}/offer`, {});
  return {
    event: draft === 'event' ? event : unknownId,
    shift: shift.id,
    slot,
    seat: seat.id,
    offer: offer.id,
  };
}

/** The route's path with `hidden`'s ids in it, or undefined for a route that names none of its records. */
function pathFor(route: RouteInfo, hidden: Hidden): string {
  const resource = route.url.split('/')[3] ?? '';
  const byResource: Record<string, string> = {
    events: hidden.event,
    shifts: hidden.shift,
    assignments: hidden.seat,
    offers: hidden.offer,
  };
  const byName: Record<string, string> = {
    event_id: hidden.event,
    shift_id: hidden.shift,
    slot_id: hidden.slot,
    assignment_id: hidden.seat,
  };
  return route.url.replace(/:([a-z_]+)/g, (_m, param: string) =>
    param === 'id' ? (byResource[resource] ?? unknownId) : (byName[param] ?? unknownId),
  );
}

describe('records an employee cannot see', () => {
  it('are named by no answer to them, and are 404 on every route that takes their id', async () => {
    const role = await newRole(t.admin, uniqueName('Cook'));
    await qualify(t.admin, t.employee, role);
    const bob: Caller = await t.ctx.caller('employee', tenantOf(t.admin), uniqueName('bob'));
    await qualify(t.admin, bob, role);
    const event = await newEvent(t.admin);
    const hidden = [
      await hiddenShift(role, event, 'shift', {
        starts_at: '2030-07-02T10:00:00Z',
        ends_at: '2030-07-02T14:00:00Z',
      }),
      await hiddenShift(role, event, 'event', {
        starts_at: '2030-07-03T10:00:00Z',
        ends_at: '2030-07-03T14:00:00Z',
      }),
    ];
    const secrets = [CONFIDENTIAL, ...hidden.flatMap((h) => [h.shift, h.slot, h.seat, h.offer])];
    const draftEvent = hidden[1]?.event as string;
    secrets.push(draftEvent);
    // A visible shift overlapping the first hidden seat; Bob offers his seat in it to anyone.
    const visible = await newShift(t.admin, event, {
      roleId: role,
      starts_at: '2030-07-02T12:00:00Z',
      ends_at: '2030-07-02T16:00:00Z',
    });
    const bobsSeat = await created(bob, `/api/v1/shifts/${visible.id}/slots/${visible.slots[0]}/claim`, {});
    const bobsOffer = await created(bob, `/api/v1/assignments/${bobsSeat.id}/offer`, {});
    const settings = (await t.admin.request('GET', '/api/v1/tenant/settings')).json();
    const { tenant_id: _, created_at: __, updated_at: ___, ...writable } = settings;
    const noApproval = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
      ...writable,
      time_off_needs_approval: false,
    });
    expect(noApproval.statusCode, noApproval.body).toBe(200);

    const snapshot = async () =>
      Promise.all(
        [
          '/api/v1/offers',
          '/api/v1/time-off',
          ...hidden.map((h) => `/api/v1/shifts/${h.shift}/assignments`),
          `/api/v1/shifts/${visible.id}/assignments`,
        ].map(async (url) => (await t.admin.request('GET', url)).json()),
      );
    const before = await snapshot();

    const answers: { what: string; status: number; body: string }[] = [];
    const ask = async (what: string, method: RouteInfo['method'], url: string, body?: unknown) => {
      const response = await t.employee.request(method, url, body);
      answers.push({ what, status: response.statusCode, body: response.body });
      return response;
    };

    // Every route an employee may call that names a record in its path, with hidden ids.
    const routes = t.ctx.routes.filter(
      (r) =>
        r.access === 'member' &&
        r.url.startsWith('/api/v1/') &&
        r.url.includes(':') &&
        !['/api/v1/users/', '/api/v1/notifications/', '/api/v1/push-subscriptions/'].some((p) =>
          r.url.startsWith(p),
        ),
    );
    expect(routes.length).toBeGreaterThan(8);
    for (const route of routes) {
      for (const h of hidden) {
        const url = pathFor(route, h);
        const withBody = ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined;
        const response = await ask(`${route.method} ${route.url}`, route.method, url, withBody);
        expect(response.statusCode, `${route.method} ${url}: ${response.body}`).toBe(404);
        expect(response.json().error.code).toBe('NOT_FOUND');
      }
    }
    // Every list an employee reads.
    for (const url of [
      '/api/v1/me/assignments',
      '/api/v1/me/open-shifts',
      '/api/v1/shifts',
      `/api/v1/shifts?event_id=${event}`,
      `/api/v1/events/${event}/shifts`,
      '/api/v1/events',
      '/api/v1/offers',
      '/api/v1/notifications',
      '/api/v1/time-off',
    ]) {
      const response = await ask(`GET ${url}`, 'GET', url);
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    }
    const feed = await ask('POST calendar token', 'POST', '/api/v1/me/calendar-token');
    const calendar = await t.ctx.request('GET', new URL(feed.json().url).pathname);
    expect(calendar.statusCode).toBe(200);
    answers.push({ what: 'the calendar feed', status: calendar.statusCode, body: calendar.body });

    // Refusals a hidden seat causes on visible records.
    for (const h of hidden) {
      const [day] = (await t.admin.request('GET', `/api/v1/shifts/${h.shift}`)).json().starts_at.split('T');
      const off = await ask('time off over a hidden seat', 'POST', '/api/v1/me/time-off', {
        starts_at: `${day}T00:00:00Z`,
        ends_at: `${day}T23:00:00Z`,
      });
      expect(off.statusCode, off.body).toBe(409);
      expect(off.json().error).toEqual({
        code: 'OVERLAPPING_ASSIGNMENT',
        message: 'the time off overlaps assignments of the user: 1 assignment you cannot see',
      });
    }
    const claim = await ask(
      'a claim overlapping a hidden seat',
      'POST',
      `/api/v1/shifts/${visible.id}/slots/${visible.slots[0]}/claim`,
      {},
    );
    expect(claim.statusCode, claim.body).toBe(409);
    expect(claim.json().error.code).toBe('OVERLAPPING_ASSIGNMENT');
    const accept = await ask(
      'an accept overlapping a hidden seat',
      'POST',
      `/api/v1/offers/${bobsOffer.id}/accept`,
    );
    expect(accept.statusCode, accept.body).toBe(409);
    expect(accept.json().error.code).toBe('OVERLAPPING_ASSIGNMENT');

    for (const { what, body } of answers) {
      for (const secret of secrets) expect(body, `${what} names ${secret}`).not.toContain(secret);
    }
    expect(await snapshot()).toEqual(before);
  });
});
