import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { type Caller, createTestContext, type TestContext, uniqueName } from '../support/context.ts';
import { type DbHooks, type Statement, withDbHooks } from '../support/db-hooks.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Offers while their seat changes: a swap racing a withdrawal or an offer, a seat removed
 * under its offer, a draft shift's seat, paging while offers are taken, and what webhook
 * subscribers hear of a swap.
 */
let ctx: TestContext;
let hooks: DbHooks;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ctx = await createTestContext({
    outboundAllowedHosts: parseAllowedHosts(new URL(receiver.origin).host),
    jobs: { backoffMs: 10, pollMs: 20 },
    viewDb: (db) => {
      hooks = withDbHooks(db);
      return hooks.db;
    },
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
    await ctx.app.notificationsIdle();
    const events = receiver.received(name).map((r) => ({
      type: r.payload?.type,
      user: (r.payload?.data as { user_id?: string } | undefined)?.user_id,
    }));
    // Bob now holds a seat the subscriber last heard was the employee's: nothing says so.
    expect(events).toContainEqual({ type: 'assignment.created', user: w.bob.userId });
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
});

describe('an offer whose seat goes away', () => {
  it('is cancelled, telling its subscribers, and goes with the seat when the giver is deactivated', async () => {
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
    await ctx.app.notificationsIdle();
    const statuses = receiver
      .received(name)
      .map((r) => (r.payload?.data as { id?: string; status?: string } | undefined) ?? {})
      .filter((d) => d.id === offer)
      .map((d) => d.status);
    // The offer goes with its seat; its subscribers heard it cancelled first, by the admin.
    const listed = (await w.admin.request('GET', '/api/v1/offers')).json() as { id: string }[];
    expect({ listed: listed.map((o) => o.id), statuses }).toEqual({
      listed: [],
      statuses: ['open', 'cancelled'],
    });
    const log = (await w.admin.request('GET', `/api/v1/audit-log?target_id=${offer}`)).json() as {
      action: string;
      actor_user_id: string;
    }[];
    expect(log.map((e) => [e.action, e.actor_user_id]).reverse()).toEqual([
      ['offer.created', w.employee.userId],
      ['offer.updated', w.admin.userId],
      ['offer.deleted', w.admin.userId],
    ]);
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
      expect(log.map((e) => e.action).reverse()).toEqual(['offer.created', 'offer.updated', 'offer.deleted']);
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
