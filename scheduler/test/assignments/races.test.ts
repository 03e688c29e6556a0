import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { raceAgainst } from '../support/held-racer.ts';
import { newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * A claim or an assignment racing a change of what it takes a seat in: the slot, shift or
 * event deleted (404: gone), the shift's times changed or the shift split (409: changed,
 * try again). Never a 5xx, and the schedule stays whole.
 */
const t = useRouteTests();

const gone = (what: string) => ({ error: { code: 'NOT_FOUND', message: `${what} not found` } });
const changed = {
  error: {
    code: 'INVALID_STATE',
    message: 'the shift changed while this request was handled; reload it and try again',
  },
};

async function setup() {
  const roleId = await newRole(t.admin);
  await qualify(t.admin, t.employee, roleId);
  const eventId = await newEvent(t.admin);
  const shift = await newShift(t.admin, eventId, { roleId, capacities: [2] });
  const slotId = shift.slots[0] as string;
  return { eventId, shiftId: shift.id, slotId };
}

type Racer = (world: {
  eventId: string;
  shiftId: string;
  slotId: string;
}) => (trx: import('../../src/db/database.ts').Db) => Promise<unknown>;

const racers: [string, Racer, unknown][] = [
  [
    'slot is deleted',
    (w) => (trx) => trx.deleteFrom('shift_slots').where('id', '=', w.slotId).execute(),
    gone('slot'),
  ],
  [
    'shift is deleted',
    (w) => (trx) => trx.deleteFrom('shifts').where('id', '=', w.shiftId).execute(),
    gone('shift'),
  ],
  [
    'event is deleted',
    (w) => (trx) => trx.deleteFrom('events').where('id', '=', w.eventId).execute(),
    gone('shift'),
  ],
  [
    'shift’s times change',
    (w) => (trx) =>
      trx
        .updateTable('shifts')
        .set({ ends_at: '2030-07-02T13:00:00Z' })
        .where('id', '=', w.shiftId)
        .execute(),
    changed,
  ],
  [
    'shift is split',
    (w) => async (trx) => {
      await trx
        .updateTable('shifts')
        .set({ ends_at: '2030-07-02T12:00:00Z' })
        .where('id', '=', w.shiftId)
        .execute();
    },
    changed,
  ],
];

describe('taking a seat while the schedule changes under it', () => {
  it.each(racers)(
    'a claim whose %s meanwhile answers 404 or 409, never 500',
    async (_what, racer, expected) => {
      const world = await setup();
      const answer = await raceAgainst(t.ctx.db.owner, racer(world), () =>
        t.employee.request('POST', `/api/v1/shifts/${world.shiftId}/slots/${world.slotId}/claim`),
      );
      // On the embedded database the claim reads what the racer left: gone is 404; a shift
      // whose times moved is simply claimed at its new times.
      if (answer.statusCode === 201) {
        expect(expected).toBe(changed);
      } else {
        expect(answer.json(), answer.body).toEqual(expected);
      }
      const seats = await t.ctx.db.owner
        .selectFrom('shift_assignments')
        .select('id')
        .where('tenant_id', '=', t.employee.tenantId)
        .execute();
      expect(seats).toHaveLength(answer.statusCode === 201 ? 1 : 0);
    },
  );

  it.each(racers)(
    'an assignment whose %s meanwhile answers 404 or 409, never 500',
    async (_what, racer, expected) => {
      const world = await setup();
      const answer = await raceAgainst(t.ctx.db.owner, racer(world), () =>
        t.admin.request('POST', `/api/v1/shifts/${world.shiftId}/slots/${world.slotId}/assign`, {
          user_id: t.employee.userId,
        }),
      );
      if (answer.statusCode === 201) expect(expected).toBe(changed);
      else expect(answer.json(), answer.body).toEqual(expected);
    },
  );
});
