import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { type Caller, uniqueName, useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * Publishing a plan (src/shifts/publication.ts): shifts with their events in one call, a
 * shift announced exactly when employees can first see it (the `shift.published` webhook
 * event and the `schedule.published` notification), once per person and week, and the
 * preview that changes nothing. The job worker is off: what a publication queued stays
 * as it wrote it.
 */
const t = useRouteTests({ jobs: { concurrency: 0 } });

/** A hook of the admin's tenant subscribed to both publication events. */
const subscribe = (admin: Caller) =>
  created(admin, '/api/v1/webhooks', {
    url: 'https://hooks.example.org/plan',
    events: ['event.published', 'shift.published'],
  });

/** The webhook events queued for the tenant, in order: `[type, id of the record]`. */
async function announced(admin: Caller): Promise<[string, string][]> {
  const { rows } = await sql<{ type: string; id: string }>`
    SELECT event_type AS type, payload #>> '{data,id}' AS id FROM webhook_deliveries
     WHERE tenant_id = ${admin.tenantId}::uuid ORDER BY seq`.execute(t.ctx.db.owner);
  return rows.map((row) => [row.type, row.id]);
}

async function publish(body: Record<string, unknown>) {
  const response = await t.admin.request('POST', '/api/v1/shifts/publish', body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as Record<string, unknown>;
}

const day = (d: number, hour = 10) => ({
  starts_at: `2030-07-${String(d).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00Z`,
  ends_at: `2030-07-${String(d).padStart(2, '0')}T${String(hour + 4).padStart(2, '0')}:00:00Z`,
});

/** A draft event with draft shifts on the given days of July 2030, of one role. */
async function draftPlan(days: number[]) {
  const roleId = await newRole(t.admin, uniqueName('Cook'));
  const eventId = await newEvent(t.admin, { publish: false });
  const shifts = [];
  for (const d of days) shifts.push(await newShift(t.admin, eventId, { roleId, publish: false, ...day(d) }));
  return { roleId, eventId, shifts };
}

describe('a shift is announced once, when employees can first see it', () => {
  it('shifts first, then the event: nothing while the event is a draft, every shift with the event', async () => {
    const { eventId, shifts } = await draftPlan([2, 3]);
    await subscribe(t.admin);
    expect(await publish({ event_id: eventId })).toEqual({ published: 2, events_published: 0 });
    expect(await announced(t.admin)).toEqual([]);
    const event = await t.admin.request('POST', `/api/v1/events/${eventId}/publish`);
    expect(event.statusCode, event.body).toBe(200);
    expect(await announced(t.admin)).toEqual([
      ['event.published', eventId],
      ['shift.published', shifts[0]?.id],
      ['shift.published', shifts[1]?.id],
    ]);
    // Nothing is left to announce.
    expect(await publish({ event_id: eventId })).toEqual({ published: 0, events_published: 0 });
    expect(await announced(t.admin)).toHaveLength(3);
  });

  it('the event first, then the shifts: each announced as it is published', async () => {
    const { eventId, shifts } = await draftPlan([2, 3]);
    await subscribe(t.admin);
    expect((await t.admin.request('POST', `/api/v1/events/${eventId}/publish`)).statusCode).toBe(200);
    expect(await announced(t.admin)).toEqual([['event.published', eventId]]);
    const single = await t.admin.request('POST', `/api/v1/shifts/${shifts[0]?.id}/publish`);
    expect(single.statusCode, single.body).toBe(200);
    expect(await publish({ shift_ids: shifts.map((s) => s.id) })).toEqual({
      published: 1,
      events_published: 0,
    });
    expect(await announced(t.admin)).toEqual([
      ['event.published', eventId],
      ['shift.published', shifts[0]?.id],
      ['shift.published', shifts[1]?.id],
    ]);
  });

  it('the single-shift route of a draft event announces nothing; the event then announces it', async () => {
    const { eventId, shifts } = await draftPlan([2]);
    await subscribe(t.admin);
    expect((await t.admin.request('POST', `/api/v1/shifts/${shifts[0]?.id}/publish`)).statusCode).toBe(200);
    expect(await announced(t.admin)).toEqual([]);
    expect((await t.admin.request('POST', `/api/v1/events/${eventId}/publish`)).statusCode).toBe(200);
    expect(await announced(t.admin)).toEqual([
      ['event.published', eventId],
      ['shift.published', shifts[0]?.id],
    ]);
  });

  it('both in one call (include_event): the event, then every shift it reveals, once', async () => {
    const { eventId, shifts } = await draftPlan([2, 3, 4]);
    // One published before: visible with the event too, announced by this call.
    expect((await t.admin.request('POST', `/api/v1/shifts/${shifts[0]?.id}/publish`)).statusCode).toBe(200);
    await subscribe(t.admin);
    expect(await publish({ event_id: eventId, include_event: true })).toEqual({
      published: 2,
      events_published: 1,
    });
    expect(await announced(t.admin)).toEqual([
      ['event.published', eventId],
      ...shifts.map((s): [string, string] => ['shift.published', s.id]),
    ]);
    const employeeSees = await t.employee.request('GET', `/api/v1/events/${eventId}/shifts`);
    expect((employeeSees.json() as unknown[]).length).toBe(3);
    // Again: nothing to publish, nothing announced.
    expect(await publish({ event_id: eventId, include_event: true })).toEqual({
      published: 0,
      events_published: 0,
    });
    expect(await announced(t.admin)).toHaveLength(4);
  });

  it('include_event with shift_ids publishes the draft events of those shifts only', async () => {
    const first = await draftPlan([2]);
    const second = await draftPlan([3]);
    const untouched = await draftPlan([4]);
    const live = await newEvent(t.admin);
    const inLive = await newShift(t.admin, live, { roleId: first.roleId, publish: false, ...day(5) });
    await subscribe(t.admin);
    const ids = [first.shifts[0]?.id, second.shifts[0]?.id, inLive.id];
    expect(await publish({ shift_ids: ids, include_event: true })).toEqual({
      published: 3,
      events_published: 2,
    });
    const events = [first.eventId, second.eventId].sort();
    expect(await announced(t.admin)).toEqual([
      ...events.map((id): [string, string] => ['event.published', id]),
      ['shift.published', first.shifts[0]?.id],
      ['shift.published', second.shifts[0]?.id],
      ['shift.published', inLive.id],
    ]);
    const other = (await t.admin.request('GET', `/api/v1/events/${untouched.eventId}`)).json();
    expect(other.status).toBe('draft');
  });
});

describe('publishing tells the people on the shifts, once per week', () => {
  async function notifyOn() {
    const response = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      notify_on_assignment: true,
      timezone: 'Europe/Berlin',
    });
    expect(response.statusCode, response.body).toBe(200);
  }

  const notes = async (caller: Caller) =>
    (
      (await caller.request('GET', '/api/v1/notifications')).json() as {
        type: string;
        title: string;
        body: string;
        data: { week: string; shift_ids: string[] };
      }[]
    ).filter((n) => n.type === 'schedule.published');

  async function seated(days: number[], worker: Caller) {
    const plan = await draftPlan(days);
    await qualify(t.admin, worker, plan.roleId);
    for (const shift of plan.shifts) {
      await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: worker.userId,
      });
    }
    return plan;
  }

  it('five shifts of one person in one week: one notification', async () => {
    await notifyOn();
    // Monday 1 to Friday 5 July 2030: ISO week 27.
    const plan = await seated([1, 2, 3, 4, 5], t.employee);
    await publish({ event_id: plan.eventId, include_event: true });
    const told = await notes(t.employee);
    expect(told).toEqual([
      expect.objectContaining({
        title: 'Your schedule for week 27 is published',
        body: '5 shifts, the first Mon 1 Jul, 12:00–16:00',
        data: { week: '2030-W27', shift_ids: plan.shifts.map((s) => s.id) },
      }),
    ]);
    // Republishing nothing tells nobody.
    await publish({ event_id: plan.eventId, include_event: true });
    expect(await notes(t.employee)).toHaveLength(1);
  });

  it('two weeks: two notifications; in German for a person who chose it', async () => {
    await notifyOn();
    const language = await t.employee.request('PATCH', '/api/v1/me', { locale: 'de-DE' });
    expect(language.statusCode, language.body).toBe(200);
    // Sunday 7 July (week 27) and Monday 8 July (week 28).
    const plan = await seated([7, 8], t.employee);
    await publish({ shift_ids: plan.shifts.map((s) => s.id) });
    expect(await notes(t.employee)).toEqual([]); // the event is still a draft
    expect((await t.admin.request('POST', `/api/v1/events/${plan.eventId}/publish`)).statusCode).toBe(200);
    const told = await notes(t.employee);
    expect(told.map((n) => [n.data.week, n.title, n.body]).sort()).toEqual([
      ['2030-W27', 'Dein Dienstplan für KW 27 ist veröffentlicht', '1 Schicht, So., 7. Juli, 12:00–16:00'],
      ['2030-W28', 'Dein Dienstplan für KW 28 ist veröffentlicht', '1 Schicht, Mo., 8. Juli, 12:00–16:00'],
    ]);
  });

  it('nobody without a seat, nor anyone while notify_on_assignment is off', async () => {
    const plan = await seated([2], t.employee);
    await publish({ event_id: plan.eventId, include_event: true });
    expect(await notes(t.employee)).toEqual([]);
    await notifyOn();
    const empty = await draftPlan([3]);
    await publish({ event_id: empty.eventId, include_event: true });
    expect(await notes(t.employee)).toEqual([]);
    expect(await notes(t.admin)).toEqual([]);
  });
});

describe('dry_run: a preview that changes nothing', () => {
  /** Rows of every table a publication writes to, for the tenant. */
  async function footprint(tenantId: string) {
    const { rows } = await sql<Record<string, number>>`
      SELECT (SELECT count(*)::int FROM shifts WHERE tenant_id = ${tenantId}::uuid AND published_at IS NOT NULL) AS shifts,
             (SELECT count(*)::int FROM events WHERE tenant_id = ${tenantId}::uuid AND published_at IS NOT NULL) AS events,
             (SELECT count(*)::int FROM webhook_deliveries WHERE tenant_id = ${tenantId}::uuid) AS deliveries,
             (SELECT count(*)::int FROM jobs WHERE tenant_id = ${tenantId}::uuid) AS jobs,
             (SELECT count(*)::int FROM notifications WHERE tenant_id = ${tenantId}::uuid) AS notifications,
             (SELECT count(*)::int FROM audit_log WHERE tenant_id = ${tenantId}::uuid) AS audit`.execute(
      t.ctx.db.owner,
    );
    return rows[0];
  }

  it('answers what the call would do, and the call then does exactly that', async () => {
    const response = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      notify_on_assignment: true,
    });
    expect(response.statusCode).toBe(200);
    const plan = await draftPlan([1, 2, 8]);
    await qualify(t.admin, t.employee, plan.roleId);
    const named = await t.admin.request('PATCH', `/api/v1/users/${t.employee.userId}`, {
      name: 'Dana',
    });
    expect(named.statusCode, named.body).toBe(200);
    for (const shift of plan.shifts) {
      await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: t.employee.userId,
      });
    }
    await subscribe(t.admin);
    const before = await footprint(t.admin.tenantId);
    const preview = await publish({ event_id: plan.eventId, include_event: true, dry_run: true });
    expect(preview).toEqual({
      dry_run: true,
      published: 3,
      events_published: 1,
      people: [{ id: t.employee.userId, name: 'Dana', weeks: ['2030-W27', '2030-W28'] }],
      webhook_events: [
        { type: 'event.published', count: 1 },
        { type: 'shift.published', count: 3 },
      ],
    });
    expect(await footprint(t.admin.tenantId)).toEqual(before);
    expect(await publish({ event_id: plan.eventId, include_event: true })).toEqual({
      published: 3,
      events_published: 1,
    });
    const after = await footprint(t.admin.tenantId);
    expect(after).toMatchObject({ shifts: 3, events: 1, deliveries: 4, notifications: 2 });
    // A preview of nothing to do.
    expect(await publish({ event_id: plan.eventId, dry_run: true })).toEqual({
      dry_run: true,
      published: 0,
      events_published: 0,
      people: [],
      webhook_events: [],
    });
  });

  it('is refused as the call would be, and changes nothing', async () => {
    const before = await footprint(t.admin.tenantId);
    const missing = '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c';
    const response = await t.admin.request('POST', '/api/v1/shifts/publish', {
      shift_ids: [missing],
      dry_run: true,
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: `shift_ids: no such shift in this tenant: ${missing}` },
    });
    expect(await footprint(t.admin.tenantId)).toEqual(before);
  });
});
