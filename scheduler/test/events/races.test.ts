import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { appDbHooks, on } from '../support/db-hooks.ts';
import { newEvent, newRole, qualify } from '../support/scheduling.ts';
import { layDownShifts } from '../support/shifts.ts';

/**
 * A change of an event's times acts on the event as it is when it writes (see
 * shifts/races); a delete, in batches, meets a seat taken or a failure halfway.
 */
const hooks = appDbHooks();
const t = useRouteTests({ viewDb: hooks.viewDb });

describe('changing an event’s times', () => {
  it('answers 409 when its times change between the read and the write, and writes nothing', async () => {
    const event = await newEvent(t.admin);
    hooks.afterNext(on('select', 'events'), async () => {
      await t.ctx.db.owner
        .updateTable('events')
        .set({ starts_at: '2030-07-05T00:00:00Z' })
        .where('id', '=', event)
        .execute();
    });
    // Valid against what it read (starts 07-01), not against what is there (starts 07-05).
    const response = await t.admin.request('PATCH', `/api/v1/events/${event}`, {
      ends_at: '2030-07-03T00:00:00Z',
    });
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toEqual({
      error: {
        code: 'INVALID_STATE',
        message: 'the event changed while this request was handled; reload it and try again',
      },
    });
    const now = (await t.admin.request('GET', `/api/v1/events/${event}`)).json();
    expect([now.starts_at, now.ends_at]).toEqual(['2030-07-05T00:00:00.000Z', '2030-07-08T00:00:00.000Z']);
  });

  it('fired together, two changes of one side each never answer 500 nor leave the event ending before it starts', async () => {
    const event = await newEvent(t.admin);
    const answers = await Promise.all([
      t.admin.request('PATCH', `/api/v1/events/${event}`, { ends_at: '2030-07-02T00:00:00Z' }),
      t.admin.request('PATCH', `/api/v1/events/${event}`, { starts_at: '2030-07-05T00:00:00Z' }),
    ]);
    expect(answers.map((a) => a.statusCode)).toContain(200);
    for (const answer of answers) expect([200, 409, 422], answer.body).toContain(answer.statusCode);
    const now = (await t.admin.request('GET', `/api/v1/events/${event}`)).json();
    expect(Date.parse(now.ends_at)).toBeGreaterThan(Date.parse(now.starts_at));
  });

  it('renames it whatever happened to its times meanwhile', async () => {
    const event = await newEvent(t.admin);
    hooks.afterNext(on('select', 'events'), async () => {
      await t.ctx.db.owner
        .updateTable('events')
        .set({ ends_at: '2030-07-09T00:00:00Z' })
        .where('id', '=', event)
        .execute();
    });
    const response = await t.admin.request('PATCH', `/api/v1/events/${event}`, { name: 'Renamed' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ name: 'Renamed', ends_at: '2030-07-09T00:00:00.000Z' });
  });
});

describe('deleting an event while its shifts change', () => {
  const shifts = 600;

  /** An event of `shifts` shifts of 2 slots (several batches of a delete). */
  async function largeEvent() {
    const event = await newEvent(t.admin);
    const roleId = await newRole(t.admin);
    await layDownShifts(t.ctx.db.owner, { tenantId: t.admin.tenantId, eventId: event, roleId }, shifts, 2);
    return { event, roleId };
  }

  /** What is left of the event: itself, its shifts, and any shift not holding its 2 slots. */
  async function leftOf(event: string) {
    const { rows } = await sql<{ events: number; shifts: number; incomplete: number; drift: number }>`
      SELECT (SELECT count(*) FROM events WHERE id = ${event})::int AS events,
             (SELECT count(*) FROM shifts WHERE event_id = ${event})::int AS shifts,
             (SELECT count(*) FROM shifts s WHERE s.event_id = ${event} AND
                (SELECT count(*) FROM shift_slots sl WHERE sl.tenant_id = s.tenant_id AND sl.shift_id = s.id) <> 2)::int AS incomplete,
             (SELECT count(*) FROM shift_slots sl JOIN shifts s ON s.tenant_id = sl.tenant_id AND s.id = sl.shift_id
               WHERE s.event_id = ${event} AND sl.filled_count <>
                 (SELECT count(*) FROM shift_assignments a WHERE a.tenant_id = sl.tenant_id AND a.slot_id = sl.id))::int AS drift`.execute(
      t.ctx.db.owner,
    );
    return rows[0];
  }

  it('stops with 409 at a seat taken halfway, leaving whole shifts, and finishes when asked again once it is free', async () => {
    const { event, roleId } = await largeEvent();
    await qualify(t.admin, t.employee, roleId);
    const last = await t.ctx.db.owner
      .selectFrom('shifts as s')
      .innerJoin('shift_slots as sl', (join) =>
        join.onRef('sl.tenant_id', '=', 's.tenant_id').onRef('sl.shift_id', '=', 's.id'),
      )
      .select(['s.id as shift_id', 'sl.id as slot_id', 's.starts_at', 's.ends_at'])
      .where('s.event_id', '=', event)
      .orderBy('s.starts_at', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    const seat = randomUUID();
    // Once the first batch is gone (its step committed: the next step reads which shifts
    // come next), a seat is taken on the last shift.
    hooks.afterNext(on('delete', 'shifts'), async () => {
      hooks.afterNext(on('select', 'shifts'), async () => {
        await t.ctx.db.owner
          .insertInto('shift_assignments')
          .values({
            tenant_id: t.admin.tenantId,
            id: seat,
            shift_id: last.shift_id,
            slot_id: last.slot_id,
            user_id: t.employee.userId,
            source: 'assign',
            starts_at: last.starts_at,
            ends_at: last.ends_at,
          })
          .execute();
      });
    });
    const response = await t.admin.request('DELETE', `/api/v1/events/${event}`);
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'a shift of this event has assignments; unassign them first' },
    });
    // What the batches before removed stays removed; what is left is whole: the event,
    // every shift with both its slots, the seat and its count.
    const left = await leftOf(event);
    expect(left).toMatchObject({ events: 1, incomplete: 0, drift: 0 });
    expect(left?.shifts).toBeGreaterThan(0);
    expect(left?.shifts).toBeLessThan(shifts);
    expect((await t.admin.request('GET', `/api/v1/events/${event}`)).statusCode).toBe(200);
    expect((await t.admin.request('GET', `/api/v1/shifts/${last.shift_id}`)).statusCode).toBe(200);

    // The seat given up, the same request finishes the job.
    expect(
      (await t.admin.request('DELETE', `/api/v1/shifts/${last.shift_id}/assignments/${seat}`)).statusCode,
    ).toBe(204);
    expect((await t.admin.request('DELETE', `/api/v1/events/${event}`)).statusCode).toBe(204);
    expect(await leftOf(event)).toEqual({ events: 0, shifts: 0, incomplete: 0, drift: 0 });
  });

  it('deleted twice at once: both go on, one answers 204 and the other 404, nothing left', async () => {
    const { event } = await largeEvent();
    const answers = await Promise.all([
      t.admin.request('DELETE', `/api/v1/events/${event}`),
      t.admin.request('DELETE', `/api/v1/events/${event}`),
    ]);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([204, 404]);
    expect(await leftOf(event)).toEqual({ events: 0, shifts: 0, incomplete: 0, drift: 0 });
  });

  it('cut off halfway (the database gone for a moment), leaves whole shifts, and finishes when asked again', async () => {
    const { event } = await largeEvent();
    // The second batch fails, as when the connection drops.
    hooks.afterNext(on('delete', 'shifts'), async () => {
      hooks.failNext(on('delete', 'shifts'), new Error('Connection terminated unexpectedly'));
    });
    const response = await t.admin.request('DELETE', `/api/v1/events/${event}`);
    expect(response.statusCode, response.body).toBe(503);
    const left = await leftOf(event);
    expect(left).toMatchObject({ events: 1, incomplete: 0, drift: 0 });
    expect(left?.shifts).toBeGreaterThan(0);
    expect(left?.shifts).toBeLessThan(shifts);
    expect((await t.admin.request('DELETE', `/api/v1/events/${event}`)).statusCode).toBe(204);
    expect(await leftOf(event)).toEqual({ events: 0, shifts: 0, incomplete: 0, drift: 0 });
  });
});
