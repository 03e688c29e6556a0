import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { type Caller, createTestContext, type TestContext, uniqueName } from '../support/context.ts';
import { appDbHooks, type Statement } from '../support/db-hooks.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Offers while their seat changes: a swap racing a withdrawal or an offer, a seat removed
 * under its offer, a draft shift's seat, paging while offers are taken, and what webhook
 * subscribers hear of a swap.
 */
let ctx: TestContext;
const hooks = appDbHooks();
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ctx = await createTestContext({
    outboundAllowedHosts: parseAllowedHosts(new URL(receiver.origin).host),
    jobs: { backoffMs: 10, pollMs: 20 },
    viewDb: hooks.viewDb,
  });
});
afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
});

async function world() {
  const t = await ctx.freshTenant();
  const role = await newRole(t.admin, uniqueName('Cook'));
  await qualify(t.admin, t.employee, role);
  const bob: Caller = await ctx.caller('employee', tenantOf(t.admin), uniqueName('bob'));
  await qualify(t.admin, bob, role);
  const event = await newEvent(t.admin);
  const shift = await newShift(t.admin, event, { roleId: role, capacities: [2] });
  const slot = shift.slots[0] as string;
  const seat = (await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${slot}/claim`, {})).id;
  return { ...t, role, event, shift: shift.id, slot, seat, bob };
}

const holders = async (admin: Caller, shift: string) =>
  ((await admin.request('GET', `/api/v1/shifts/${shift}/assignments`)).json() as { user_id: string }[]).map(
    (a) => a.user_id,
  );

describe('a giver withdrawing their seat while it is taken', () => {
  it('never removes the taker’s seat (the delete must be of the giver’s seat only)', async () => {
    const w = await world();
    const offer = (await created(w.employee, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    // The withdrawal reads the seat (still the giver's); the taker's accept commits before
    // the withdrawal's transaction deletes it by id alone.
    const isSeatRead = (s: Statement) =>
      s.kind === 'select' && s.tables.length === 1 && s.tables[0] === 'shift_assignments';
    hooks.afterNext(isSeatRead, async () => {
      await ctx.db.owner
        .updateTable('shift_assignments')
        .set({ user_id: w.bob.userId })
        .where('id', '=', w.seat)
        .execute();
      await ctx.db.owner
        .updateTable('offers')
        .set({ status: 'approved', accepted_by: w.bob.userId, decided_at: new Date().toISOString() })
        .where('id', '=', offer)
        .execute();
    });
    const response = await w.employee.request('DELETE', `/api/v1/shifts/${w.shift}/assignments/${w.seat}`);
    // Bob took it; the giver's withdrawal must not take it from him.
    expect(await holders(w.admin, w.shift)).toEqual([w.bob.userId]);
    expect(response.statusCode).toBe(404);
  });
});

describe('webhooks of a swap', () => {
  it('tells an assignment.* subscriber that the seat changed hands', async () => {
    const w = await world();
    const name = uniqueName('hook');
    const made = await w.admin.request('POST', '/api/v1/webhooks', {
      url: receiver.url(name),
      events: ['assignment.created', 'assignment.removed'],
    });
    expect(made.statusCode, made.body).toBe(201);
    receiver.trust(name, made.json().secret);
    const offer = (await created(w.employee, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    const accepted = await w.bob.request('POST', `/api/v1/offers/${offer}/accept`);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(await holders(w.admin, w.shift)).toEqual([w.bob.userId]);
    await ctx.app.jobsIdle();
    const events = receiver.received(name).map((r) => ({
      type: r.payload?.type,
      user: (r.payload?.data as { user_id?: string } | undefined)?.user_id,
    }));
    // Bob now holds a seat the subscriber last heard was the employee's: nothing says so.
    expect(events).toContainEqual({ type: 'assignment.created', user: w.bob.userId });
  });
});

describe('webhooks of every offer step', () => {
  it('tell a subscriber each step once, in order: offered, accepted, approved (the seat moving), rejected, cancelled', async () => {
    const w = await world();
    const settings = await w.admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      offers_need_approval: true,
    });
    expect(settings.statusCode, settings.body).toBe(200);
    const name = uniqueName('hook');
    const made = await w.admin.request('POST', '/api/v1/webhooks', {
      url: receiver.url(name),
      events: ['assignment.created', 'assignment.removed', 'offer.updated'],
    });
    expect(made.statusCode, made.body).toBe(201);
    receiver.trust(name, made.json().secret);
    const step = async (caller: Caller, method: 'POST' | 'DELETE', url: string, status: number) => {
      const response = await caller.request(method, url, method === 'POST' ? {} : undefined);
      expect(response.statusCode, response.body).toBe(status);
      return response;
    };
    // The employee's seat goes to Bob, with the admin's approval.
    const first = (await created(w.employee, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    await step(w.bob, 'POST', `/api/v1/offers/${first}/accept`, 200);
    await step(w.admin, 'POST', `/api/v1/offers/${first}/approve`, 200);
    // Bob offers it on; the employee takes it; the admin says no.
    const second = (await created(w.bob, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    await step(w.employee, 'POST', `/api/v1/offers/${second}/accept`, 200);
    await step(w.admin, 'POST', `/api/v1/offers/${second}/reject`, 200);
    // Bob offers it once more, and thinks better of it.
    const third = (await created(w.bob, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    await step(w.bob, 'DELETE', `/api/v1/offers/${third}`, 204);
    await ctx.app.jobsIdle();
    const heard = receiver.received(name).map((r) => {
      const data = r.payload?.data as { id?: string; status?: string; user_id?: string };
      return r.payload?.type === 'offer.updated'
        ? [r.payload.type, data.id, data.status]
        : [r.payload?.type, data.id, data.user_id];
    });
    expect(heard).toEqual([
      ['offer.updated', first, 'open'],
      ['offer.updated', first, 'accepted'],
      ['assignment.removed', w.seat, w.employee.userId],
      ['assignment.created', w.seat, w.bob.userId],
      ['offer.updated', first, 'approved'],
      ['offer.updated', second, 'open'],
      ['offer.updated', second, 'accepted'],
      ['offer.updated', second, 'rejected'],
      ['offer.updated', third, 'open'],
      ['offer.updated', third, 'cancelled'],
    ]);
  });
});

describe('an offer of a seat in a draft shift', () => {
  it('is not shown to the employee who cannot see the shift', async () => {
    const t = await ctx.freshTenant();
    const role = await newRole(t.admin, uniqueName('Cook'));
    await qualify(t.admin, t.employee, role);
    const event = await newEvent(t.admin);
    const shift = await newShift(t.admin, event, { roleId: role, publish: false });
    const seat = (
      await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: t.employee.userId,
      })
    ).id;
    // The employee does not see the draft, nor the seat in it.
    expect((await t.employee.request('GET', `/api/v1/shifts/${shift.id}`)).statusCode).toBe(404);
    expect((await t.employee.request('GET', '/api/v1/me/assignments')).json()).toEqual([]);
    await created(t.admin, `/api/v1/assignments/${seat}/offer`, {});
    const listed = (await t.employee.request('GET', '/api/v1/offers')).json() as { shift_id: string }[];
    expect(listed.map((o) => o.shift_id)).not.toContain(shift.id);
  });

  it('is as unknown as a missing offer to employees: neither withdrawn nor taken (404), it stays open', async () => {
    const t = await ctx.freshTenant();
    const role = await newRole(t.admin, uniqueName('Cook'));
    const bob: Caller = await ctx.caller('employee', tenantOf(t.admin), uniqueName('bob'));
    await qualify(t.admin, t.employee, role);
    await qualify(t.admin, bob, role);
    const shift = await newShift(t.admin, await newEvent(t.admin), { roleId: role, publish: false });
    const seat = (
      await created(t.admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: t.employee.userId,
      })
    ).id;
    const offer = (await created(t.admin, `/api/v1/assignments/${seat}/offer`, {})).id;
    const unknown = { error: { code: 'NOT_FOUND', message: 'offer not found' } };
    const withdrawal = await t.employee.request('DELETE', `/api/v1/offers/${offer}`);
    expect([withdrawal.statusCode, withdrawal.json()]).toEqual([404, unknown]);
    const take = await bob.request('POST', `/api/v1/offers/${offer}/accept`);
    expect([take.statusCode, take.json()]).toEqual([404, unknown]);
    const listed = (await t.admin.request('GET', '/api/v1/offers')).json() as {
      id: string;
      status: string;
    }[];
    expect(listed.map((o) => [o.id, o.status])).toEqual([[offer, 'open']]);
  });
});

describe('an offer whose seat goes away', () => {
  interface Listed {
    id: string;
    status: string;
    assignment_id: string | null;
    shift_id: string;
  }
  const listed = async (admin: Caller) => (await admin.request('GET', '/api/v1/offers')).json() as Listed[];
  const story = async (admin: Caller, offer: string) => {
    const log = (await admin.request('GET', `/api/v1/audit-log?target_id=${offer}`)).json() as {
      action: string;
      actor_user_id: string;
      changes: { before: Record<string, unknown>; after: Record<string, unknown> };
    }[];
    return log.reverse();
  };

  it('is cancelled (offer.cancelled, its subscribers told) and stays a record when the giver is deactivated', async () => {
    const w = await world();
    const name = uniqueName('hook');
    const made = await w.admin.request('POST', '/api/v1/webhooks', {
      url: receiver.url(name),
      events: ['offer.updated'],
    });
    expect(made.statusCode, made.body).toBe(201);
    receiver.trust(name, made.json().secret);
    const offer = (await created(w.employee, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    const off = await w.admin.request('PATCH', `/api/v1/users/${w.employee.userId}`, { active: false });
    expect(off.statusCode, off.body).toBe(200);
    await ctx.app.jobsIdle();
    const heard = receiver
      .received(name)
      .map((r) => (r.payload?.data as Partial<Listed> | undefined) ?? {})
      .filter((d) => d.id === offer)
      .map((d) => [d.status, d.assignment_id]);
    // Its subscribers heard it cancelled, by the admin, while it still named the seat.
    expect(heard).toEqual([
      ['open', w.seat],
      ['cancelled', w.seat],
    ]);
    // The seat is gone; the offer stays, cancelled, naming its shift.
    expect(await listed(w.admin)).toEqual([
      expect.objectContaining({ id: offer, status: 'cancelled', assignment_id: null, shift_id: w.shift }),
    ]);
    const log = await story(w.admin, offer);
    expect(log.map((e) => [e.action, e.actor_user_id])).toEqual([
      ['offer.created', w.employee.userId],
      ['offer.cancelled', w.admin.userId],
      ['offer.updated', w.admin.userId],
    ]);
    expect(log[2]?.changes).toEqual({ before: { assignment_id: w.seat }, after: { assignment_id: null } });
  });

  it('is cancelled when the giver is deactivated though the seat stays theirs (time recorded on it)', async () => {
    const w = await world();
    const on = { time_tracking_enabled: true, time_entries_before_end: true };
    expect((await w.admin.request('PATCH', '/api/v1/tenant/settings', on)).statusCode).toBe(200);
    const offer = (await created(w.employee, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    await created(w.admin, '/api/v1/time-tracking/entries', {
      shift_assignment_id: w.seat,
      started_at: '2030-07-02T10:00:00Z',
      ended_at: '2030-07-02T14:00:00Z',
    });
    const off = await w.admin.request('PATCH', `/api/v1/users/${w.employee.userId}`, { active: false });
    expect(off.statusCode, off.body).toBe(200);
    // The seat stays (its minutes would be lost); nobody can act on the gone giver's offer.
    expect(await listed(w.admin)).toEqual([
      expect.objectContaining({ id: offer, status: 'cancelled', assignment_id: w.seat }),
    ]);
    const take = await w.bob.request('POST', `/api/v1/offers/${offer}/accept`);
    expect([take.statusCode, take.json().error]).toEqual([
      409,
      { code: 'INVALID_STATE', message: 'the offer is cancelled' },
    ]);
  });

  it('is cancelled as offer.cancelled when the giver withdraws the seat, which is logged as withdrawn', async () => {
    const w = await world();
    const offer = (await created(w.employee, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    const withdrawn = await w.employee.request('DELETE', `/api/v1/shifts/${w.shift}/assignments/${w.seat}`);
    expect(withdrawn.statusCode, withdrawn.body).toBe(204);
    expect((await story(w.admin, offer)).map((e) => e.action)).toEqual([
      'offer.created',
      'offer.cancelled',
      'offer.updated',
    ]);
    expect((await story(w.admin, w.seat)).map((e) => e.action)).toEqual([
      'assignment.claimed',
      'assignment.withdrawn',
    ]);
    expect(await listed(w.admin)).toEqual([
      expect.objectContaining({ id: offer, status: 'cancelled', assignment_id: null }),
    ]);
  });

  it('keeps a swap’s approved offer, in the list and the audit log, when the taker’s seat is removed', async () => {
    const w = await world();
    const offer = (await created(w.employee, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    const taken = await w.bob.request('POST', `/api/v1/offers/${offer}/accept`);
    expect(taken.json()).toMatchObject({ status: 'approved', accepted_by: w.bob.userId });
    const removed = await w.admin.request('DELETE', `/api/v1/shifts/${w.shift}/assignments/${w.seat}`);
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await listed(w.admin)).toEqual([
      expect.objectContaining({
        id: offer,
        status: 'approved',
        assignment_id: null,
        shift_id: w.shift,
        from_user_id: w.employee.userId,
        accepted_by: w.bob.userId,
      }),
    ]);
    // Bob took it and the giver made it: both still read the swap.
    for (const person of [w.bob, w.employee]) {
      expect(((await person.request('GET', '/api/v1/offers')).json() as Listed[]).map((o) => o.id)).toEqual([
        offer,
      ]);
    }
    // Taken without an admin's approval: the taker's accept is the step that approved it.
    expect((await story(w.admin, offer)).map((e) => [e.action, e.changes.after.status])).toEqual([
      ['offer.created', 'open'],
      ['offer.accepted', 'approved'],
      ['offer.updated', undefined],
    ]);
    // The seat's own story ends with its removal, by that name.
    expect((await story(w.admin, w.seat)).map((e) => e.action).at(-1)).toBe('assignment.unassigned');
  });

  it('goes with its shift once the shift is deleted', async () => {
    const w = await world();
    const offer = (await created(w.employee, `/api/v1/assignments/${w.seat}/offer`, {})).id;
    await w.admin.request('DELETE', `/api/v1/offers/${offer}`);
    expect(
      (await w.admin.request('DELETE', `/api/v1/shifts/${w.shift}/assignments/${w.seat}`)).statusCode,
    ).toBe(204);
    expect((await listed(w.admin)).map((o) => o.id)).toEqual([offer]);
    const gone = await w.admin.request('DELETE', `/api/v1/shifts/${w.shift}`);
    expect(gone.statusCode, gone.body).toBe(204);
    expect(await listed(w.admin)).toEqual([]);
    expect((await story(w.admin, offer)).map((e) => e.action).at(-1)).toBe('offer.deleted');
  });
});

describe('a deactivation freeing many seats', () => {
  it('frees 1,200 upcoming seats at once and cancels the offers on them', async () => {
    const w = await world();
    const tenant = w.admin.tenantId;
    // 1,200 more upcoming seats of the employee, one-hour shifts two hours apart, past the API.
    await sql`
      WITH series AS (
        SELECT i, gen_random_uuid() AS shift, gen_random_uuid() AS slot,
               '2031-01-01Z'::timestamptz + i * interval '2 hours' AS starts
          FROM generate_series(1, 1200) i
      ), shifts AS (
        INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at, published_at)
        SELECT ${tenant}::uuid, shift, ${w.event}::uuid, 'Many ' || i, starts, starts + interval '1 hour', now()
          FROM series
      ), slots AS (
        INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity)
        SELECT ${tenant}::uuid, slot, shift, ${w.role}::uuid, 1 FROM series
      )
      INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
      SELECT ${tenant}::uuid, gen_random_uuid(), shift, slot, ${w.employee.userId}::uuid, 'claim',
             starts, starts + interval '1 hour'
        FROM series`.execute(ctx.db.owner);
    const seats = await ctx.db.owner
      .selectFrom('shift_assignments')
      .select('id')
      .where('tenant_id', '=', tenant)
      .where('user_id', '=', w.employee.userId)
      .orderBy('starts_at', 'desc')
      .limit(2)
      .execute();
    const offers = [];
    for (const seat of [w.seat, ...seats.map((s) => s.id)]) {
      offers.push((await created(w.employee, `/api/v1/assignments/${seat}/offer`, {})).id);
    }
    const off = await w.admin.request('PATCH', `/api/v1/users/${w.employee.userId}`, { active: false });
    expect(off.statusCode, off.body).toBe(200);
    const left = await ctx.db.owner
      .selectFrom('shift_assignments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenant)
      .where('user_id', '=', w.employee.userId)
      .executeTakeFirstOrThrow();
    expect(Number(left.n)).toBe(0);
    for (const offer of offers) {
      const log = (await w.admin.request('GET', `/api/v1/audit-log?target_id=${offer}`)).json() as {
        action: string;
      }[];
      // Cancelled, then its seat link cleared as the seat goes; the record stays (migration 0021).
      expect(log.map((e) => e.action).reverse()).toEqual([
        'offer.created',
        'offer.cancelled',
        'offer.updated',
      ]);
    }
  });
});

describe('an offer made while the seat changes hands', () => {
  it('is never recorded as given by someone who no longer holds the seat', async () => {
    const w = await world();
    // The seat moves to Bob between the offer's read of it and its insert.
    hooks.afterNext(
      // The seat's read (`shift_assignments as a`; its time check is raw SQL).
      (s) => s.kind === 'select' && s.tables.join() === 'shift_assignments,a',
      async () => {
        await ctx.db.owner
          .updateTable('shift_assignments')
          .set({ user_id: w.bob.userId })
          .where('id', '=', w.seat)
          .execute();
      },
    );
    const response = await w.employee.request('POST', `/api/v1/assignments/${w.seat}/offer`, {});
    const offers = await ctx.db.owner
      .selectFrom('offers')
      .select(['from_user_id'])
      .where('assignment_id', '=', w.seat)
      .execute();
    // Otherwise Bob's seat carries a live offer by the employee: Bob cannot offer it (409
    // DUPLICATE) and nobody can take it (409 "changed hands") until it is cancelled.
    expect(offers.map((o) => o.from_user_id)).not.toContain(w.employee.userId);
    expect(response.statusCode).toBe(404);
  });
});

describe('paging GET /offers while offers are taken', () => {
  it('answers the next page after an offer that was taken meanwhile (not 422)', async () => {
    const w = await world();
    // Two more seats of the employee's, in shifts of their own, offered to everyone.
    const seats = [];
    for (const day of ['03', '04']) {
      const shift = await newShift(w.admin, w.event, {
        roleId: w.role,
        starts_at: `2030-07-${day}T10:00:00Z`,
        ends_at: `2030-07-${day}T14:00:00Z`,
      });
      seats.push(
        (await created(w.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {})).id,
      );
    }
    for (const seat of seats) await created(w.employee, `/api/v1/assignments/${seat}/offer`, {});
    const first = (await w.bob.request('GET', '/api/v1/offers?limit=1')).json() as { id: string }[];
    expect(first).toHaveLength(1);
    // Someone else takes the offer Bob's page ended on.
    const carol = await ctx.caller('employee', tenantOf(w.admin), uniqueName('carol'));
    await qualify(w.admin, carol, w.role);
    const taken = await carol.request('POST', `/api/v1/offers/${first[0]?.id}/accept`);
    expect(taken.statusCode, taken.body).toBe(200);
    const next = await w.bob.request('GET', `/api/v1/offers?limit=1&after=${first[0]?.id}`);
    expect(next.statusCode, next.body).toBe(200);
  });
});
