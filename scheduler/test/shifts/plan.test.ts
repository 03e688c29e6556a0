import { describe, expect, it } from 'vitest';
import { FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

// Fresh, provisioned tenants per test: no test sees what another created.
const t = useRouteTests();

const week = 'from=2030-07-01&to=2030-07-08';

describe('GET /api/v1/shifts/plan', () => {
  it('gives every shift of the window, drafts too, with its slots and who holds their seats', async () => {
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const eventId = await newEvent(t.admin, { publish: false });
    const draft = await newShift(t.admin, eventId, {
      roleId,
      capacities: [2, 1],
      starts_at: '2030-07-03T08:00:00Z',
      ends_at: '2030-07-03T12:00:00Z',
      publish: false,
    });
    const published = await newShift(t.admin, eventId, { roleId, capacities: [1] });
    const seat = await created(t.admin, `/api/v1/shifts/${draft.id}/slots/${draft.slots[0]}/assign`, {
      user_id: t.employee.userId,
    });
    // Outside the window (the tenant's zone is UTC): not in the plan.
    await newShift(t.admin, eventId, {
      roleId,
      starts_at: '2030-07-08T00:00:00Z',
      ends_at: '2030-07-08T04:00:00Z',
    });

    const response = await t.admin.request('GET', `/api/v1/shifts/plan?${week}`);
    expect(response.statusCode, response.body).toBe(200);
    const plan = response.json() as { id: string; status: string; slots: unknown[] }[];
    expect(plan.map((shift) => [shift.id, shift.status])).toEqual([
      [published.id, 'open'],
      [draft.id, 'draft'],
    ]);
    const employee = (await t.employee.request('GET', '/api/v1/me')).json() as {
      display_name: string | null;
    };
    expect(plan[1]).toMatchObject({ event_id: eventId, starts_at: '2030-07-03T08:00:00.000Z' });
    expect(plan[1]?.slots).toEqual([
      {
        id: draft.slots[0],
        role_id: roleId,
        capacity: 2,
        filled_count: 1,
        seats: [{ assignment_id: seat.id, user_id: t.employee.userId, name: employee.display_name }],
      },
      { id: draft.slots[1], role_id: roleId, capacity: 1, filled_count: 0, seats: [] },
    ]);
  });

  it('keeps to one event when asked, and never shows another tenant’s shifts', async () => {
    const roleId = await newRole(t.admin);
    const mine = await newEvent(t.admin);
    const other = await newEvent(t.admin);
    const kept = await newShift(t.admin, mine, { roleId });
    await newShift(t.admin, other, { roleId });
    const theirRole = await newRole(t.otherAdmin);
    const theirEvent = await newEvent(t.otherAdmin);
    await newShift(t.otherAdmin, theirEvent, { roleId: theirRole });

    const byEvent = await t.admin.request('GET', `/api/v1/shifts/plan?${week}&event_id=${mine}`);
    expect((byEvent.json() as { id: string }[]).map((s) => s.id)).toEqual([kept.id]);
    const all = await t.admin.request('GET', `/api/v1/shifts/plan?${week}`);
    expect(all.json()).toHaveLength(2);
    const theirs = await t.admin.request('GET', `/api/v1/shifts/plan?${week}&event_id=${theirEvent}`);
    expect(theirs.statusCode).toBe(200);
    expect(theirs.json()).toEqual([]);
  });

  it('is for admins only', async () => {
    const response = await t.employee.request('GET', `/api/v1/shifts/plan?${week}`);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it.each([
    ['no to', 'from=2030-07-01', 'to'],
    ['no from', 'to=2030-07-08', 'from'],
    ['to before from', 'from=2030-07-08&to=2030-07-01', 'to'],
    ['more than 62 days', 'from=2030-07-01&to=2030-09-02', 'to: must be at most 62 days after from'],
    ['a malformed event id', `${week}&event_id=nope`, 'event_id'],
    ['an unknown parameter', `${week}&status=open`, 'status'],
  ])('refuses %s with 422 and changes nothing', async (_case, query, field) => {
    const response = await t.admin.request('GET', `/api/v1/shifts/plan?${query}`);
    expect(response.statusCode, response.body).toBe(422);
    const body = response.json() as { error: { code: string; message: string } };
    expect(body.error.code).toBe('VALIDATION_FAILED');
    expect(body.error.message).toContain(field);
  });

  it('takes 62 days exactly', async () => {
    const response = await t.admin.request('GET', '/api/v1/shifts/plan?from=2030-07-01&to=2030-09-01');
    expect(response.statusCode, response.body).toBe(200);
  });
});
