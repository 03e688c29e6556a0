import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { MAX_OPEN_TIME_OFF } from '../../src/time-off/schemas.ts';
import { useRouteTests } from '../support/context.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * A claim and the approval of time off over the same shift, sent at the same moment, many
 * times over: exactly one of them wins each round, never both, never a 5xx. Requests of
 * one user sent at once: of overlapping ones exactly one is stored, and together they
 * never pass the cap of open time off. On PostgreSQL (TEST_DB=postgres) they run in
 * separate sessions and meet at the user's row lock (migrations 0016, 0020); on the
 * embedded database they take turns.
 */
const t = useRouteTests();

const ROUNDS = 20;

describe('a claim and an approval at once', () => {
  // Each round makes a shift and a time off, then races a claim and an approval: 5 s a round
  // is room for a loaded machine.
  it(`never both succeed (${ROUNDS} rounds)`, async () => {
    const roleId = await newRole(t.admin);
    await qualify(t.admin, t.employee, roleId);
    const eventId = await newEvent(t.admin);
    const rounds = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const hh = String(round).padStart(2, '0');
      const span = { starts_at: `2030-07-03T${hh}:00:00Z`, ends_at: `2030-07-03T${hh}:30:00Z` };
      const shift = await newShift(t.admin, eventId, { roleId, ...span });
      const off = await created(t.employee, '/api/v1/me/time-off', span);
      rounds.push({ shift, off: off.id });
    }
    const outcomes = new Set<string>();
    for (const { shift, off } of rounds) {
      const [claim, approval] = await Promise.all([
        t.employee.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {}),
        t.admin.request('POST', `/api/v1/time-off/${off}/approve`),
      ]);
      if (claim.statusCode === 201) {
        expect(approval.statusCode, approval.body).toBe(409);
        expect(approval.json().error).toEqual({
          code: 'OVERLAPPING_ASSIGNMENT',
          message: `the time off overlaps assignments of the user: ${claim.json().id} (shift "Bar", ${shift.id})`,
        });
        outcomes.add('claim');
      } else {
        expect(approval.statusCode, approval.body).toBe(200);
        expect(claim.statusCode, claim.body).toBe(409);
        expect(claim.json().error).toEqual({
          code: 'UNAVAILABLE',
          message: 'the user has approved time off then',
        });
        outcomes.add('approval');
      }
    }
    // Whatever the answers said, the database holds no approved time off over a seat.
    const { rows } = await sql<{ clashes: number }>`
      SELECT count(*)::int AS clashes FROM time_off o JOIN shift_assignments a
          ON a.tenant_id = o.tenant_id AND a.user_id = o.user_id
         AND a.starts_at < o.ends_at AND a.ends_at > o.starts_at
       WHERE o.tenant_id = ${t.admin.tenantId}::uuid AND o.status = 'approved'`.execute(t.ctx.db.owner);
    expect(rows[0]?.clashes).toBe(0);
    expect(outcomes.size).toBeGreaterThan(0);
  }, 100_000);
});

describe('requests of one user at once', () => {
  const stored = async (tenantId: string) => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM time_off WHERE tenant_id = ${tenantId}::uuid`.execute(t.ctx.db.owner);
    return rows[0]?.n;
  };

  it('stores exactly one of 10 overlapping requests; the others are 409 DUPLICATE naming it', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.employee.request('POST', '/api/v1/me/time-off', {
          starts_at: `2030-08-01T${String(i).padStart(2, '0')}:00:00Z`,
          ends_at: '2030-08-20T00:00:00Z',
        }),
      ),
    );
    const won = answers.filter((a) => a.statusCode === 201);
    expect(won.length, answers.map((a) => a.body).join('\n')).toBe(1);
    const id = won[0]?.json().id as string;
    for (const lost of answers.filter((a) => a.statusCode !== 201)) {
      expect(lost.statusCode, lost.body).toBe(409);
      expect(lost.json().error).toEqual({
        code: 'DUPLICATE',
        message: `the time off overlaps time off of the user: ${id} (requested)`,
      });
    }
    expect(await stored(t.employee.tenantId)).toBe(1);
  });

  it(`lets one of 5 requests sent at once take the last of ${MAX_OPEN_TIME_OFF} open places`, async () => {
    const day = (n: number) => new Date(Date.UTC(2031, 0, 1 + n)).toISOString();
    for (let n = 0; n < MAX_OPEN_TIME_OFF - 1; n += 1) {
      const response = await t.employee.request('POST', '/api/v1/me/time-off', {
        starts_at: day(n),
        ends_at: day(n + 1),
      });
      expect(response.statusCode, response.body).toBe(201);
    }
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        t.employee.request('POST', '/api/v1/me/time-off', {
          starts_at: day(100 + i),
          ends_at: day(101 + i),
        }),
      ),
    );
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    for (const lost of answers.filter((a) => a.statusCode !== 201)) {
      expect(lost.statusCode, lost.body).toBe(409);
      expect(lost.json().error.code).toBe('INVALID_STATE');
    }
    expect(await stored(t.employee.tenantId)).toBe(MAX_OPEN_TIME_OFF);
  });
});
