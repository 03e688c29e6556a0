import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { type Caller, uniqueName, useTestContext } from '../support/context.ts';
import { appDbHooks } from '../support/db-hooks.ts';
import { untilAnotherSessionWaitsOnALock } from '../support/held-racer.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * The order of locks: removing a seat locks the seat, then its offers (cancelling the
 * live one, then clearing their key to it, migration 0021), so an offer step must lock
 * the seat before the offer too; the other way round, the two deadlock on PostgreSQL and
 * one is answered the generic 409.
 */
const hooks = appDbHooks();
const t = useTestContext({ viewDb: hooks.viewDb });

const generic = 'the request conflicts with a change made at the same time; reload and try again';

describe("accept racing the seat's removal", runsIf(inject('testDb') === 'postgres', NEEDS_POSTGRES), () => {
  it('does not deadlock: neither answer is the generic conflict', async () => {
    const mine = await t.ctx.freshTenant();
    const role = await newRole(mine.admin, uniqueName('Cook'));
    await qualify(mine.admin, mine.employee, role);
    const bob: Caller = await t.ctx.caller('employee', tenantOf(mine.admin), uniqueName('bob'));
    await qualify(mine.admin, bob, role);
    const shift = await newShift(mine.admin, await newEvent(mine.admin), { roleId: role, capacities: [2] });
    const seat = (
      await created(mine.employee, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {})
    ).id;
    const offer = (await created(mine.employee, `/api/v1/assignments/${seat}/offer`, {})).id;

    let removal: Promise<LightMyRequestResponse> | undefined;
    // Once the accept holds the offer's row lock, the admin removes the seat: its DELETE
    // locks the seat and waits on the offer (its cancellation); the accept then waits on the seat.
    hooks.afterNext(
      (s) => s.kind === 'select' && s.tables[0] === 'offers',
      async () => {
        removal = mine.admin.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat}`);
        await untilAnotherSessionWaitsOnALock(t.ctx.db.owner, removal);
      },
    );
    const accept = await bob.request('POST', `/api/v1/offers/${offer}/accept`);
    const removed = await removal;
    const answers = [accept.json(), removed?.statusCode === 204 ? null : removed?.json()];
    expect(JSON.stringify(answers)).not.toContain(generic);
  });
});
