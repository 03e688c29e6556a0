import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { parseAllowedHosts } from '../../src/outbound/destinations.ts';
import { type Caller, uniqueName, useTestContextWith } from '../support/context.ts';
import { appDbHooks } from '../support/db-hooks.ts';
import { untilAnotherSessionWaitsOnALock } from '../support/held-racer.ts';
import { created, newEvent, newRole, newShift, qualify, tenantOf } from '../support/scheduling.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * A removal and a claim of the same slot never wait on each other in a cycle. A claim
 * takes the slot (its count) and then the webhooks it announces to; a removal holds the
 * slot before anything else it locks (its offers, the webhooks it announces to), so the
 * two queue one behind the other, whatever the tenant's webhooks subscribe to. Without
 * that, a hook on `assignment.created` and `assignment.removed` (or `offer.updated`, for a
 * seat with a live offer) made a withdrawal and a claim deadlock: one of them answered 409.
 * PostgreSQL only: the embedded database runs one transaction at a time.
 */
const hooks = appDbHooks();
const t = useTestContextWith(startWebhookReceiver, (receiver) => ({
  outboundAllowedHosts: parseAllowedHosts(new URL(receiver.origin).host),
  // Nothing is delivered: the hooks' rows are what the two transactions lock.
  jobs: { concurrency: 0 },
  viewDb: hooks.viewDb,
}));

/** How the seat goes: its holder withdraws it, or an admin deactivates the holder. */
const cases = [
  { removal: 'withdrawal', events: ['assignment.created', 'assignment.removed'], offered: false },
  { removal: 'withdrawal', events: ['assignment.created', 'offer.updated'], offered: true },
  { removal: 'deactivation', events: ['assignment.created', 'assignment.removed'], offered: false },
  { removal: 'deactivation', events: ['assignment.created', 'offer.updated'], offered: true },
] as const;

describe(
  'a removal racing a claim of the same slot',
  runsIf(inject('testDb') === 'postgres', NEEDS_POSTGRES),
  () => {
    for (const { removal, events, offered } of cases) {
      const what = `a webhook on ${events.join(' and ')}${offered ? ', the seat offered' : ''}`;
      it(`lets a ${removal} and a claim both go through, ${what}`, async () => {
        const { admin, employee } = await t.ctx.freshTenant();
        const hook = await admin.request('POST', '/api/v1/webhooks', {
          url: t.server.url(uniqueName('h')),
          events,
        });
        expect(hook.statusCode, hook.body).toBe(201);
        const role = await newRole(admin, uniqueName('Cook'));
        await qualify(admin, employee, role);
        const bob: Caller = await t.ctx.caller('employee', tenantOf(admin), uniqueName('bob'));
        await qualify(admin, bob, role);
        const shift = await newShift(admin, await newEvent(admin), { roleId: role, capacities: [3] });
        const slot = shift.slots[0] as string;
        const seat = (await created(employee, `/api/v1/shifts/${shift.id}/slots/${slot}/claim`, {})).id;
        if (offered) await created(employee, `/api/v1/assignments/${seat}/offer`, {});
        // The claim starts once the removal has locked the hooks it announces to, and the
        // removal goes on once the claim waits.
        let claim: Promise<LightMyRequestResponse> | undefined;
        hooks.afterNext(
          (statement) =>
            statement.kind === 'select' &&
            statement.tables.length === 1 &&
            statement.tables[0] === 'webhooks',
          async () => {
            claim = bob.request('POST', `/api/v1/shifts/${shift.id}/slots/${slot}/claim`, {});
            await untilAnotherSessionWaitsOnALock(t.ctx.db.owner, claim);
          },
        );
        const removed =
          removal === 'withdrawal'
            ? await employee.request('DELETE', `/api/v1/shifts/${shift.id}/assignments/${seat}`)
            : await admin.request('PATCH', `/api/v1/users/${employee.userId}`, { active: false });
        expect(claim, 'the removal locked the hooks').toBeDefined();
        const claimed = await claim;
        expect([removed.statusCode, claimed?.statusCode]).toEqual([
          removal === 'withdrawal' ? 204 : 200,
          201,
        ]);
      });
    }
  },
);
