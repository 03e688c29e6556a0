import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import { uniqueName, useRouteTests } from '../support/context.ts';
import { refusal } from '../support/database.ts';
import { created, newColleague, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';
import { recordTimeOn } from '../support/time-tracking.ts';

/**
 * Moving a seat is an UPDATE of the assignment's user, and every rule of a claim holds
 * for it in the database (migrations 0002, 0010, 0017): each test sets the scene through
 * the API, then moves the seat with raw SQL, past every service, and expects the refusal.
 * At most one live offer per seat holds there too. PGlite, and PostgreSQL with
 * TEST_DB=postgres.
 */
const t = useRouteTests();
const owner = (): Db => t.ctx.db.owner;

async function scene() {
  const role = await newRole(t.admin, uniqueName('Cook'));
  await qualify(t.admin, t.employee, role);
  const event = await newEvent(t.admin);
  const shift = await newShift(t.admin, event, { roleId: role, capacities: [3] });
  const slot = shift.slots[0] as string;
  const seat = (await created(t.employee, `/api/v1/shifts/${shift.id}/slots/${slot}/claim`, {})).id;
  const person = (qualified = true) => newColleague(t.ctx, t.admin, qualified ? role : undefined);
  const move = (to: string) =>
    sql`UPDATE shift_assignments SET user_id = ${to}::uuid WHERE id = ${seat}::uuid`.execute(owner());
  return { role, event, shift: shift.id, slot, seat, person, move };
}

describe('moving a seat (UPDATE of user_id)', () => {
  it('is accepted for a qualified, active, free colleague, leaving the slot’s count alone', async () => {
    const s = await scene();
    const bob = await s.person();
    await s.move(bob.userId);
    const { rows } = await sql<{ filled_count: number }>`
      SELECT filled_count FROM shift_slots WHERE id = ${s.slot}::uuid`.execute(owner());
    expect(rows[0]?.filled_count).toBe(1);
  });

  it('is refused for a user without the slot’s role', async () => {
    const s = await scene();
    const unqualified = await s.person(false);
    expect(await refusal(s.move(unqualified.userId))).toEqual({
      code: '23514',
      constraint: 'shift_assignments_user_qualified',
    });
  });

  it('is refused for a user holding an overlapping assignment', async () => {
    const s = await scene();
    const busy = await s.person();
    const other = await newShift(t.admin, s.event, {
      roleId: s.role,
      starts_at: '2030-07-02T12:00:00Z',
      ends_at: '2030-07-02T16:00:00Z',
    });
    await created(busy, `/api/v1/shifts/${other.id}/slots/${other.slots[0]}/claim`, {});
    expect(await refusal(s.move(busy.userId))).toEqual({
      code: '23P01',
      constraint: 'shift_assignments_no_overlap',
    });
  });

  it('is refused for a user already seated in the shift', async () => {
    const s = await scene();
    const seated = await s.person();
    await created(seated, `/api/v1/shifts/${s.shift}/slots/${s.slot}/claim`, {});
    expect(await refusal(s.move(seated.userId))).toEqual({
      code: '23505',
      constraint: 'shift_assignments_tenant_id_shift_id_user_id_key',
    });
  });

  it('is refused for a deactivated user', async () => {
    const s = await scene();
    const gone = await s.person();
    await sql`UPDATE users SET active = false WHERE id = ${gone.userId}::uuid`.execute(owner());
    expect(await refusal(s.move(gone.userId))).toEqual({
      code: '23514',
      constraint: 'shift_assignments_user_active',
    });
  });

  it('is refused once time was recorded on the seat', async () => {
    const s = await scene();
    const bob = await s.person();
    // A seat on offer lies ahead: its time is recorded before the shift ends.
    await recordTimeOn(t.admin, s.seat);
    const refused = await refusal(s.move(bob.userId));
    expect(['23503', '23001']).toContain(refused.code);
    expect(refused.constraint).toBe('time_entries_assignment_fkey');
  });
});

describe('offers', () => {
  const insertOffer = (s: Awaited<ReturnType<typeof scene>>, status: string, acceptedBy: string | null) =>
    sql`INSERT INTO offers (tenant_id, id, assignment_id, shift_id, from_user_id, status, accepted_by, expires_at)
        SELECT tenant_id, gen_random_uuid(), id, shift_id, user_id, ${status}, ${acceptedBy}::uuid, starts_at
          FROM shift_assignments WHERE id = ${s.seat}::uuid`.execute(owner());

  it('holds at most one live (open or accepted) offer per seat', async () => {
    const s = await scene();
    const bob = await s.person();
    await insertOffer(s, 'open', null);
    expect(await refusal(insertOffer(s, 'accepted', bob.userId))).toEqual({
      code: '23505',
      constraint: 'offers_one_live',
    });
    await sql`UPDATE offers SET status = 'cancelled', decided_at = now() WHERE assignment_id = ${s.seat}::uuid`.execute(
      owner(),
    );
    await insertOffer(s, 'accepted', bob.userId);
  });

  it('refuses an offer to its giver and an accepted offer without a taker', async () => {
    const s = await scene();
    expect(
      await refusal(
        sql`INSERT INTO offers (tenant_id, id, assignment_id, shift_id, from_user_id, to_user_id, expires_at)
            SELECT tenant_id, gen_random_uuid(), id, shift_id, user_id, user_id, starts_at
              FROM shift_assignments WHERE id = ${s.seat}::uuid`.execute(owner()),
      ),
    ).toEqual({ code: '23514', constraint: 'offers_not_to_self' });
    expect(await refusal(insertOffer(s, 'accepted', null))).toEqual({
      code: '23514',
      constraint: 'offers_taker_known',
    });
  });

  it('keeps a removed seat’s decided offers, without the seat; a live offer keeps its seat (0021)', async () => {
    const s = await scene();
    const bob = await s.person();
    const offer = (status: string, acceptedBy: string | null, decided: boolean) =>
      sql`INSERT INTO offers (tenant_id, id, assignment_id, shift_id, from_user_id, status, accepted_by,
            decided_at, expires_at)
          SELECT tenant_id, gen_random_uuid(), id, shift_id, user_id, ${status}, ${acceptedBy}::uuid,
                 CASE WHEN ${decided} THEN now() END, starts_at
            FROM shift_assignments WHERE id = ${s.seat}::uuid`.execute(owner());
    await offer('approved', bob.userId, true);
    await offer('rejected', null, true);
    await offer('cancelled', null, true);
    await offer('open', null, false);
    const removeSeat = () => sql`DELETE FROM shift_assignments WHERE id = ${s.seat}::uuid`.execute(owner());
    const liveHasSeat = { code: '23514', constraint: 'offers_live_has_seat' };
    expect(await refusal(removeSeat())).toEqual(liveHasSeat);
    await sql`UPDATE offers SET status = 'cancelled', decided_at = now()
               WHERE assignment_id = ${s.seat}::uuid AND status = 'open'`.execute(owner());
    await removeSeat();
    const { rows } = await sql<{ status: string; assignment_id: string | null; shift_id: string }>`
      SELECT status, assignment_id, shift_id FROM offers WHERE shift_id = ${s.shift}::uuid ORDER BY status`.execute(
      owner(),
    );
    expect(rows.map((r) => [r.status, r.assignment_id, r.shift_id.replaceAll('-', '')])).toEqual([
      ['approved', null, s.shift],
      ['cancelled', null, s.shift],
      ['cancelled', null, s.shift],
      ['rejected', null, s.shift],
    ]);
    // Without a seat, an offer is decided, or stored expired (undecided, as a derived one reads).
    const seatless = (status: string, decided: boolean, shift = s.shift) =>
      sql`INSERT INTO offers (tenant_id, id, shift_id, from_user_id, status, decided_at, expires_at)
          VALUES (${t.admin.tenantId}::uuid, gen_random_uuid(), ${shift}::uuid, ${t.employee.userId}::uuid,
                  ${status}, CASE WHEN ${decided} THEN now() END, now())`.execute(owner());
    expect(await refusal(seatless('open', false))).toEqual(liveHasSeat);
    expect(await refusal(seatless('expired', true))).toEqual({ code: '23514', constraint: 'offers_decided' });
    await seatless('expired', false);
    const nowhere = await refusal(seatless('cancelled', true, '0193a1b2c3d47e8f9a0b1c2d3e4f5aff'));
    expect(nowhere).toEqual({ code: '23503', constraint: 'offers_shift_fkey' });
    // The shift, once deleted, takes them along.
    await sql`DELETE FROM shifts WHERE id = ${s.shift}::uuid`.execute(owner());
    const left = await sql`SELECT 1 FROM offers WHERE shift_id = ${s.shift}::uuid`.execute(owner());
    expect(left.rows).toEqual([]);
  });

  it('keeps offers behind the tenant wall for the application’s role', async () => {
    const { rows } = await sql<{ secured: boolean }>`
      SELECT relrowsecurity AS secured FROM pg_class WHERE relname = 'offers'`.execute(owner());
    expect(rows[0]?.secured).toBe(true);
    const { rows: grants } = await sql<{ privilege_type: string }>`
      SELECT privilege_type FROM information_schema.role_table_grants
       WHERE table_name = 'offers' AND grantee = 'scheduler_app' ORDER BY 1`.execute(owner());
    expect(grants.map((g) => g.privilege_type)).toEqual(['DELETE', 'INSERT', 'SELECT', 'UPDATE']);
  });
});
