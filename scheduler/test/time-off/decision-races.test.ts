import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/** Decisions racing removals and admin assigns, many rounds: one wins, never a 5xx. */
const t = useRouteTests();
const ROUNDS = 15;

describe('time off races', () => {
  it('an owner’s removal and an approval at once: one wins, the other is 404/409, never 5xx', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const day = String(round + 1).padStart(2, '0');
      const off = await created(t.employee, '/api/v1/me/time-off', {
        starts_at: `2036-01-${day}T00:00:00Z`,
        ends_at: `2036-01-${day}T12:00:00Z`,
      });
      const [removal, approval] = await Promise.all([
        t.employee.request('DELETE', `/api/v1/time-off/${off.id}`),
        t.admin.request('POST', `/api/v1/time-off/${off.id}/approve`),
      ]);
      const pair = `${removal.statusCode}/${approval.statusCode}`;
      expect(['204/404', '409/200'], `${pair} ${removal.body} ${approval.body}`).toContain(pair);
    }
  });

  it('an admin assign and an approval at once: never both, never 5xx', async () => {
    const roleId = await newRole(t.admin, 'Racer');
    await qualify(t.admin, t.employee, roleId);
    const eventId = await newEvent(t.admin);
    for (let round = 0; round < ROUNDS; round++) {
      const hh = String(round).padStart(2, '0');
      const span = { starts_at: `2030-07-04T${hh}:00:00Z`, ends_at: `2030-07-04T${hh}:30:00Z` };
      const shift = await newShift(t.admin, eventId, { roleId, ...span });
      const off = await created(t.employee, '/api/v1/me/time-off', span);
      const [assign, approval] = await Promise.all([
        t.admin.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
          user_id: t.employee.userId,
        }),
        t.admin.request('POST', `/api/v1/time-off/${off.id}/approve`),
      ]);
      const pair = `${assign.statusCode}/${approval.statusCode}`;
      expect(['201/409', '409/200'], `${pair} ${assign.body} ${approval.body}`).toContain(pair);
    }
  });
});
