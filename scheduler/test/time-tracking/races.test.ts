import { describe, expect, it } from 'vitest';
import { useRouteTests } from '../support/context.ts';
import { raceAgainst } from '../support/held-racer.ts';
import { assignedShift, ledgerMismatches, setTimeTracking } from '../support/time-tracking.ts';

/**
 * A time entry whose assignment is removed while the entry is recorded: 404 (gone), never
 * the foreign-key violation as a 500, and no entry or ledger row left behind. On
 * PostgreSQL the request reads the assignment before the removal commits and meets the
 * database's refusal at its insert; on the embedded database it finds the assignment gone.
 */
const t = useRouteTests();

describe('a time entry racing the removal of its assignment', () => {
  it('answers 404 and writes nothing', async () => {
    await setTimeTracking(t.admin, true);
    const assignment = await assignedShift(t.admin, t.employee);
    const answer = await raceAgainst(
      t.ctx.db.owner,
      (trx) => trx.deleteFrom('shift_assignments').where('id', '=', assignment).execute(),
      () =>
        t.admin.request('POST', '/api/v1/time-tracking/entries', {
          shift_assignment_id: assignment,
          started_at: '2030-07-02T10:00:00Z',
          ended_at: '2030-07-02T15:00:00Z',
        }),
    );
    expect(answer.statusCode, answer.body).toBe(404);
    expect(answer.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'shift assignment not found' } });
    const left = await t.ctx.db.owner
      .selectFrom('time_entries')
      .select('id')
      .where('shift_assignment_id', '=', assignment)
      .execute();
    expect(left).toEqual([]);
    expect(await ledgerMismatches(t.ctx.db.owner)).toEqual([]);
    const balance = await t.admin.request('GET', `/api/v1/time-tracking/balance/${t.employee.userId}`);
    expect(balance.json().balance_minutes).toBe(0);
  });
});
