import { describe, expect, it } from 'vitest';
import { type Caller, FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';

/** GET /api/v1/audit-log: what the database recorded of each change, read back by an admin. */
const t = useRouteTests();

interface Entry {
  id: string;
  actor_user_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  at: string;
  changes: { before: Record<string, unknown>; after: Record<string, unknown> };
}

async function auditLog(caller: Caller, query = ''): Promise<Entry[]> {
  const response = await caller.request('GET', `/api/v1/audit-log${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** A published shift with one slot of `capacity` that the employee may claim. */
async function claimableShift(capacity = 2) {
  const roleId = await newRole(t.admin);
  await qualify(t.admin, t.employee, roleId);
  const eventId = await newEvent(t.admin);
  const shift = await newShift(t.admin, eventId, { roleId, capacities: [capacity] });
  return { ...shift, roleId, slotId: shift.slots[0] ?? '' };
}

const claim = (caller: Caller, shiftId: string, slotId: string) =>
  caller.request('POST', `/api/v1/shifts/${shiftId}/slots/${slotId}/claim`);

describe('GET /api/v1/audit-log', () => {
  it('records a claim and a withdrawal as the employee’s, with the whole assignment', async () => {
    const shift = await claimableShift();
    const claimed = await claim(t.employee, shift.id, shift.slotId);
    expect(claimed.statusCode, claimed.body).toBe(201);
    const seat = claimed.json() as { id: string; created_at: string };
    const withdrawn = await t.employee.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat.id}`);
    expect(withdrawn.statusCode, withdrawn.body).toBe(204);

    const [withdrawal, claiming] = await auditLog(t.admin, `?target_id=${seat.id}`);
    const assignment = {
      id: seat.id,
      shift_id: shift.id,
      slot_id: shift.slotId,
      user_id: t.employee.userId,
      source: 'claim',
      assigned_by: t.employee.userId,
      starts_at: '2030-07-02T10:00:00.000Z',
      ends_at: '2030-07-02T14:00:00.000Z',
      created_at: seat.created_at,
    };
    expect(claiming).toMatchObject({
      actor_user_id: t.employee.userId,
      action: 'assignment.claimed',
      target_type: 'assignment',
      target_id: seat.id,
      changes: { before: {}, after: assignment },
    });
    expect(withdrawal).toMatchObject({
      actor_user_id: t.employee.userId,
      action: 'assignment.withdrawn',
      target_type: 'assignment',
      target_id: seat.id,
      changes: { before: assignment, after: {} },
    });
    // The slot's filled_count moved with each, and is the database's bookkeeping: no row.
    expect((await auditLog(t.admin, `?target_id=${shift.slotId}`)).map((e) => e.action)).toEqual([
      'slot.created',
    ]);
  });

  it('records an admin’s edit with only the fields that changed, and names assign, unassign and publish', async () => {
    const shift = await claimableShift();
    const edited = await t.admin.request('PATCH', `/api/v1/shifts/${shift.id}`, { name: 'Bar (evening)' });
    expect(edited.statusCode, edited.body).toBe(200);
    const seat = await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${shift.slotId}/assign`, {
      user_id: t.employee.userId,
    });
    const removed = await t.admin.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat.id}`);
    expect(removed.statusCode, removed.body).toBe(204);

    const [edit, published, createdShift] = await auditLog(t.admin, `?target_id=${shift.id}`);
    expect(edit).toMatchObject({
      actor_user_id: t.admin.userId,
      action: 'shift.updated',
      target_type: 'shift',
      changes: { before: { name: 'Bar' }, after: { name: 'Bar (evening)' } },
    });
    expect(published?.action).toBe('shift.published');
    expect(Object.keys(published?.changes.after ?? {})).toEqual(['published_at']);
    expect(createdShift?.action).toBe('shift.created');
    expect((await auditLog(t.admin, `?target_id=${seat.id}`)).map((e) => e.action)).toEqual([
      'assignment.unassigned',
      'assignment.assigned',
    ]);
  });

  it('records settings under the tenant, ignoring the bookkeeping updated_at', async () => {
    const settings = (await t.admin.request('GET', '/api/v1/tenant/settings')).json() as Record<
      string,
      unknown
    >;
    const { time_tracking_enabled } = settings;
    const patched = await t.admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled,
      timezone: 'Europe/Berlin',
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const [entry] = await auditLog(t.admin, '?limit=1');
    expect(entry).toMatchObject({
      actor_user_id: t.admin.userId,
      action: 'tenant_settings.updated',
      target_type: 'tenant_settings',
      target_id: t.admin.tenantId,
      changes: { before: { timezone: 'UTC' }, after: { timezone: 'Europe/Berlin' } },
    });
  });

  it('leaves no row for a claim refused by a full slot', async () => {
    const shift = await claimableShift(1);
    const colleague = await t.ctx.caller('employee', tenantOf(t.admin), 'employee-2');
    expect((await colleague.request('GET', '/api/v1/roles')).statusCode).toBe(200);
    await qualify(t.admin, colleague, shift.roleId);
    expect((await claim(t.employee, shift.id, shift.slotId)).statusCode).toBe(201);
    const before = await auditLog(t.admin, '?limit=200');
    const refused = await claim(colleague, shift.id, shift.slotId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ error: { code: 'SLOT_FULL', message: 'the slot is full' } });
    expect(await auditLog(t.admin, '?limit=200')).toEqual(before);
  });

  it('records exactly the claims that won when many race for a slot', async () => {
    const shift = await claimableShift(2);
    const racers = await Promise.all(
      [2, 3, 4, 5, 6, 7].map((n) => t.ctx.caller('employee', tenantOf(t.admin), `racer-${n}`)),
    );
    for (const racer of racers) {
      expect((await racer.request('GET', '/api/v1/roles')).statusCode).toBe(200);
      await qualify(t.admin, racer, shift.roleId);
    }
    const answers = await Promise.all(racers.map((racer) => claim(racer, shift.id, shift.slotId)));
    const winners = racers.filter((_racer, i) => answers[i]?.statusCode === 201).map((r) => r.userId);
    expect(winners).toHaveLength(2);
    const claims = (await auditLog(t.admin, '?limit=200')).filter((e) => e.action === 'assignment.claimed');
    expect(claims.map((e) => e.actor_user_id).sort()).toEqual([...winners].sort());
  });

  it('filters by actor, record and time, newest first', async () => {
    const shift = await claimableShift();
    const seat = (await claim(t.employee, shift.id, shift.slotId)).json() as { id: string };
    const all = await auditLog(t.admin, '?limit=200');
    expect(all.length).toBeGreaterThan(5);
    // Newest first: the claim was the last change.
    expect(all[0]).toMatchObject({ action: 'assignment.claimed', target_id: seat.id });
    const byEmployee = await auditLog(t.admin, `?actor_id=${t.employee.userId}`);
    expect(byEmployee.map((e) => e.action)).toEqual(['assignment.claimed']);
    const byAdmin = await auditLog(t.admin, `?actor_id=${t.admin.userId.toUpperCase()}&limit=200`);
    expect(byAdmin.map((e) => e.id)).toEqual(
      all.filter((e) => e.actor_user_id === t.admin.userId).map((e) => e.id),
    );
    expect(byAdmin.length).toBeGreaterThan(3);
    const at = Date.parse(all[0]?.at ?? '');
    const around = (ms: number) => new Date(at + ms).toISOString();
    expect((await auditLog(t.admin, `?from=${around(0)}&to=${around(1)}`)).map((e) => e.id)).toContain(
      all[0]?.id,
    );
    expect(await auditLog(t.admin, `?from=${around(1)}`)).toEqual([]);
    expect(await auditLog(t.admin, `?to=${around(-60_000)}`)).toEqual([]);
  });

  it('pages with limit and after, each entry once', async () => {
    await claimableShift();
    const all = await auditLog(t.admin, '?limit=200');
    const pages: string[] = [];
    let after = '';
    for (;;) {
      const page = await auditLog(t.admin, `?limit=2${after}`);
      pages.push(...page.map((e) => e.id));
      if (page.length < 2) break;
      after = `&after=${page[1]?.id}`;
    }
    expect(pages).toEqual(all.map((e) => e.id));
    expect(await auditLog(t.admin)).toHaveLength(Math.min(all.length, 50));
  });

  it('shows a tenant only its own log', async () => {
    await claimableShift();
    const theirs = await auditLog(t.otherAdmin, '?limit=200');
    const mine = await auditLog(t.admin, '?limit=200');
    expect(theirs.filter((e) => mine.some((m) => m.id === e.id))).toEqual([]);
    expect(theirs.some((e) => e.actor_user_id === t.admin.userId)).toBe(false);
    // Another tenant's entry is no cursor here.
    const foreign = mine[0]?.id ?? '';
    const refused = await t.otherAdmin.request('GET', `/api/v1/audit-log?after=${foreign}`);
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'after: no such audit entry' },
    });
  });

  it('records each time off step under its decision: requested, approved, rejected, deleted', async () => {
    const span = { starts_at: '2031-03-02T00:00:00Z', ends_at: '2031-03-04T00:00:00Z' };
    const { id: first } = await created(t.employee, '/api/v1/me/time-off', span);
    const { id: second } = await created(t.employee, '/api/v1/me/time-off', {
      starts_at: '2031-04-02T00:00:00Z',
      ends_at: '2031-04-03T00:00:00Z',
    });
    expect((await t.admin.request('POST', `/api/v1/time-off/${first}/approve`)).statusCode).toBe(200);
    expect((await t.admin.request('POST', `/api/v1/time-off/${second}/reject`)).statusCode).toBe(200);
    expect((await t.admin.request('DELETE', `/api/v1/time-off/${first}`)).statusCode).toBe(204);

    const steps = (await auditLog(t.admin, `?target_id=${first}`)).reverse();
    expect(steps.map((e) => [e.action, e.actor_user_id])).toEqual([
      ['time_off.requested', t.employee.userId],
      ['time_off.approved', t.admin.userId],
      ['time_off.deleted', t.admin.userId],
    ]);
    expect(steps[1]?.changes).toEqual({
      before: { status: 'requested', decided_by: null, decided_at: null },
      after: { status: 'approved', decided_by: t.admin.userId, decided_at: expect.any(String) },
    });
    expect((await auditLog(t.admin, `?target_id=${second}`)).map((e) => e.action)).toEqual([
      'time_off.rejected',
      'time_off.requested',
    ]);
  });

  it('is for admins only', async () => {
    const response = await t.employee.request('GET', '/api/v1/audit-log');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it.each([
    ['?from=yesterday', 'from'],
    ['?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'to'],
    ['?limit=0', 'limit'],
    ['?limit=201', 'limit'],
    ['?limit=ten', 'limit'],
    ['?actor_id=42', 'actor_id'],
    ['?target_id=x', 'target_id'],
    ['?after=0193a1b2c3d47e8f9a0b1c2d3e4f5ad0', 'after'],
    ['?sort=asc', 'sort'],
  ])('answers 422 for %s', async (query, field) => {
    const response = await t.admin.request('GET', `/api/v1/audit-log${query}`);
    expect(response.statusCode, response.body).toBe(422);
    const body = response.json() as { error: { code: string; message: string } };
    expect(body.error.code).toBe('VALIDATION_FAILED');
    expect(body.error.message.startsWith(field)).toBe(true);
  });
});
