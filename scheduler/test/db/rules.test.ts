import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { MAX_SHIFT_MINUTES } from '../../src/time/window.ts';
import { MAX_OPEN_TIME_OFF } from '../../src/time-off/schemas.ts';
import { MAX_ENTRY_MINUTES } from '../../src/time-tracking/overtime.ts';
import { refusal, runSql, useTestDatabase } from '../support/database.ts';
import { bareTenant } from '../support/jobs.ts';
import { asLegacyRows } from '../support/legacy-rows.ts';
import { type EventTenant, layDownEventTenant } from '../support/shifts.ts';

/**
 * The scheduling rules hold in the database itself: each test writes the forbidden rows
 * with raw SQL, past every service, and expects the database to refuse them. Runs on
 * PGlite and, with TEST_DB=postgres, on PostgreSQL.
 */
const handle = useTestDatabase();
const run = (statement: string, ...values: unknown[]) => runSql(handle.owner, statement, ...values);

let w: EventTenant;

async function shift(startsAt: string, endsAt: string): Promise<string> {
  const id = randomUUID();
  await run(
    'INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at) VALUES (?, ?, ?, ?, ?, ?)',
    w.tenant,
    id,
    w.event,
    'S',
    startsAt,
    endsAt,
  );
  return id;
}

async function slot(shiftId: string, capacity: number): Promise<string> {
  const id = randomUUID();
  await run(
    'INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity) VALUES (?, ?, ?, ?, ?)',
    w.tenant,
    id,
    shiftId,
    w.role,
    capacity,
  );
  return id;
}

async function shiftTimes(shiftId: string): Promise<[string, string]> {
  const result = await run(
    'SELECT starts_at, ends_at FROM shifts WHERE tenant_id = ? AND id = ?',
    w.tenant,
    shiftId,
  );
  const row = result.rows[0] as { starts_at: string; ends_at: string };
  return [row.starts_at, row.ends_at];
}

async function assign(shiftId: string, slotId: string, userId: string, times?: [string, string]) {
  const id = randomUUID();
  const [startsAt, endsAt] = times ?? (await shiftTimes(shiftId));
  await run(
    `INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
     VALUES (?, ?, ?, ?, ?, 'assign', ?, ?)`,
    w.tenant,
    id,
    shiftId,
    slotId,
    userId,
    startsAt,
    endsAt,
  );
  return id;
}

async function filled(slotId: string): Promise<number> {
  const result = await run(
    'SELECT filled_count FROM shift_slots WHERE tenant_id = ? AND id = ?',
    w.tenant,
    slotId,
  );
  return (result.rows[0] as { filled_count: number }).filled_count;
}

/** A time entry from 10:00 on the first of January 2030, `worked` minutes long, planned 120. */
async function timeEntry(assignmentId: string, userId: string, worked = 120): Promise<string> {
  const id = randomUUID();
  await run(
    `INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
       worked_minutes, scheduled_minutes, overtime_minutes)
     VALUES (?, ?, ?, ?, '2030-01-01T10:00:00Z', timestamptz '2030-01-01T10:00:00Z' + make_interval(mins => ?),
       ?, 120, ? - 120)`,
    w.tenant,
    id,
    assignmentId,
    userId,
    worked,
    worked,
    worked,
  );
  return id;
}

beforeEach(async () => {
  w = await layDownEventTenant(handle.owner);
  // The entries below are recorded on shifts of 2030, before they end: the tenant allows
  // it (migration 0023), except where the rule that waits for the end is under test.
  await run('INSERT INTO tenant_settings (tenant_id, time_entries_before_end) VALUES (?, true)', w.tenant);
});

describe('an assignment and its slot', () => {
  it('refuses a slot of another shift', async () => {
    const first = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const second = await shift('2030-01-02T10:00:00Z', '2030-01-02T12:00:00Z');
    const otherSlot = await slot(second, 2);
    expect(await refusal(assign(first, otherSlot, w.alice))).toEqual({
      code: '23503',
      constraint: 'shift_assignments_slot_fkey',
    });
  });

  it("refuses times other than its shift's", async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const seat = await slot(s, 2);
    expect(await refusal(assign(s, seat, w.alice, ['2030-01-01T10:00:00Z', '2030-01-01T11:00:00Z']))).toEqual(
      { code: '23503', constraint: 'shift_assignments_shift_times_fkey' },
    );
  });

  it("refuses to move a shift's times under its assignments", async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    await assign(s, await slot(s, 2), w.alice);
    const moved = run(
      "UPDATE shifts SET ends_at = '2030-01-01T13:00:00Z' WHERE tenant_id = ? AND id = ?",
      w.tenant,
      s,
    );
    expect(await refusal(moved)).toEqual({ code: '23503', constraint: 'shift_assignments_shift_times_fkey' });
  });

  it('refuses to delete a shift or a slot that holds assignments, and allows it once empty', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const seat = await slot(s, 2);
    const assignment = await assign(s, seat, w.alice);
    const deleteSlot = () => run('DELETE FROM shift_slots WHERE tenant_id = ? AND id = ?', w.tenant, seat);
    const deleteShift = () => run('DELETE FROM shifts WHERE tenant_id = ? AND id = ?', w.tenant, s);
    const deleteEvent = () => run('DELETE FROM events WHERE tenant_id = ? AND id = ?', w.tenant, w.event);
    expect((await refusal(deleteSlot())).code).toBe('23503');
    expect((await refusal(deleteShift())).code).toBe('23503');
    expect((await refusal(deleteEvent())).code).toBe('23503');
    await run('DELETE FROM shift_assignments WHERE tenant_id = ? AND id = ?', w.tenant, assignment);
    await deleteEvent();
    const left = await run('SELECT count(*)::int AS n FROM shift_slots WHERE tenant_id = ?', w.tenant);
    expect(left.rows).toEqual([{ n: 0 }]);
  });
});

describe('one user, one place at a time', () => {
  it('refuses two overlapping assignments of one user, on different shifts', async () => {
    const morning = await shift('2030-01-01T08:00:00Z', '2030-01-01T12:00:00Z');
    const noon = await shift('2030-01-01T11:59:00Z', '2030-01-01T14:00:00Z');
    await assign(morning, await slot(morning, 2), w.alice);
    const noonSlot = await slot(noon, 2);
    expect(await refusal(assign(noon, noonSlot, w.alice))).toEqual({
      code: '23P01',
      constraint: 'shift_assignments_no_overlap',
    });
    // Another user may take it, and a shift that starts as the first ends touches, not overlaps.
    await assign(noon, noonSlot, w.bob);
    const after = await shift('2030-01-01T12:00:00Z', '2030-01-01T13:00:00Z');
    await assign(after, await slot(after, 1), w.alice);
  });

  it('refuses a second seat for one user on one shift', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    await assign(s, await slot(s, 2), w.alice);
    const second = await slot(s, 2);
    expect((await refusal(assign(s, second, w.alice))).constraint).toBe(
      'shift_assignments_tenant_id_shift_id_user_id_key',
    );
  });
});

describe('a deactivated user', () => {
  it('takes no new seat, whatever writes it; their seats stay and they may come back', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const seats = await slot(s, 3);
    await assign(s, seats, w.bob);
    await run(
      'UPDATE users SET active = false WHERE tenant_id = ? AND id IN (?, ?)',
      w.tenant,
      w.alice,
      w.bob,
    );
    expect(await refusal(assign(s, seats, w.alice))).toEqual({
      code: '23514',
      constraint: 'shift_assignments_user_active',
    });
    // Nor can an existing seat be handed to them.
    const other = await shift('2030-01-02T10:00:00Z', '2030-01-02T12:00:00Z');
    const carl = randomUUID();
    await run("INSERT INTO users (tenant_id, id, role) VALUES (?, ?, 'employee')", w.tenant, carl);
    const carlSeat = await assign(other, await slot(other, 1), carl);
    expect(
      await refusal(
        run(
          'UPDATE shift_assignments SET user_id = ? WHERE tenant_id = ? AND id = ?',
          w.alice,
          w.tenant,
          carlSeat,
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'shift_assignments_user_active' });
    expect(await filled(seats)).toBe(1);
    await run('UPDATE users SET active = true WHERE tenant_id = ? AND id = ?', w.tenant, w.alice);
    await assign(s, seats, w.alice);
    expect(await filled(seats)).toBe(2);
  });

  it('is active unless told otherwise, and never null', async () => {
    const rows = await run('SELECT active FROM users WHERE tenant_id = ? ORDER BY id', w.tenant);
    expect(rows.rows).toEqual([{ active: true }, { active: true }]);
    expect((await refusal(run('UPDATE users SET active = NULL WHERE tenant_id = ?', w.tenant))).code).toBe(
      '23502',
    );
  });
});

describe('filled_count', () => {
  it('follows inserts, deletes and moves, and refuses an overfill', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const one = await slot(s, 1);
    const two = await slot(s, 2);
    const a = await assign(s, one, w.alice);
    expect(await filled(one)).toBe(1);
    expect(await refusal(assign(s, one, w.bob))).toEqual({
      code: '23514',
      constraint: 'shift_slots_within_capacity',
    });
    await run('UPDATE shift_assignments SET slot_id = ? WHERE tenant_id = ? AND id = ?', two, w.tenant, a);
    expect([await filled(one), await filled(two)]).toEqual([0, 1]);
    await run('DELETE FROM shift_assignments WHERE tenant_id = ? AND id = ?', w.tenant, a);
    expect(await filled(two)).toBe(0);
  });

  it('counts assignments removed by a cascade', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const seat = await slot(s, 2);
    await assign(s, seat, w.alice);
    await assign(s, seat, w.bob);
    await run('DELETE FROM users WHERE tenant_id = ? AND id = ?', w.tenant, w.bob);
    expect(await filled(seat)).toBe(1);
  });

  it('refuses any other write of it', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const seat = await slot(s, 3);
    const expected = { code: '23514', constraint: 'shift_slots_filled_count_derived' };
    expect(
      await refusal(
        run('UPDATE shift_slots SET filled_count = 2 WHERE tenant_id = ? AND id = ?', w.tenant, seat),
      ),
    ).toEqual(expected);
    expect(
      await refusal(
        run(
          'INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity, filled_count) VALUES (?, ?, ?, ?, 3, 3)',
          w.tenant,
          randomUUID(),
          s,
          w.role,
        ),
      ),
    ).toEqual(expected);
    // Capacity may still change, as long as it stays at or above the fill.
    await assign(s, seat, w.alice);
    await run('UPDATE shift_slots SET capacity = 1 WHERE tenant_id = ? AND id = ?', w.tenant, seat);
    expect(
      (
        await refusal(
          run('UPDATE shift_slots SET capacity = 0 WHERE tenant_id = ? AND id = ?', w.tenant, seat),
        )
      ).code,
    ).toBe('23514');
  });
});

describe('recorded minutes', () => {
  it('refuses a time entry credited to a user who does not hold the assignment', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const assignment = await assign(s, await slot(s, 2), w.alice);
    expect(await refusal(timeEntry(assignment, w.bob))).toEqual({
      code: '23503',
      constraint: 'time_entries_assignment_fkey',
    });
    await timeEntry(assignment, w.alice);
  });

  it('never lets a cascade or a delete take a time entry or a payout away', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const assignment = await assign(s, await slot(s, 2), w.alice);
    await timeEntry(assignment, w.alice, 180);
    await run(
      'INSERT INTO payouts (tenant_id, id, user_id, minutes) VALUES (?, ?, ?, 30)',
      w.tenant,
      randomUUID(),
      w.alice,
    );
    // RESTRICT answers 23001 on PostgreSQL 17+ and PGlite, 23503 on PostgreSQL 15.
    const refused = ['23001', '23503'];
    for (const attempt of [
      () => run('DELETE FROM shift_assignments WHERE tenant_id = ? AND id = ?', w.tenant, assignment),
      () => run('DELETE FROM users WHERE tenant_id = ? AND id = ?', w.tenant, w.alice),
      () => run('DELETE FROM tenants WHERE id = ?', w.tenant),
    ]) {
      expect(refused).toContain((await refusal(attempt())).code);
    }
    const kept = await run(
      'SELECT (SELECT count(*) FROM time_entries WHERE tenant_id = ?)::int AS entries, (SELECT count(*) FROM payouts WHERE tenant_id = ?)::int AS payouts',
      w.tenant,
      w.tenant,
    );
    expect(kept.rows).toEqual([{ entries: 1, payouts: 1 }]);
  });
});

describe('the longest shift and time entry', () => {
  /** An instant `minutes` (and `seconds`) after 10:00 on the first of January 2030. */
  const after = (minutes: number, seconds = 0) =>
    new Date(Date.parse('2030-01-01T10:00:00Z') + (minutes * 60 + seconds) * 1000).toISOString();

  it(`refuses a shift longer than ${MAX_SHIFT_MINUTES} minutes (7 days), inserted or stretched`, async () => {
    const start = after(0);
    expect((await refusal(shift(start, after(MAX_SHIFT_MINUTES, 0.001)))).constraint).toBe(
      'shifts_at_most_7_days',
    );
    const s = await shift(start, after(MAX_SHIFT_MINUTES));
    expect(
      await refusal(
        run(
          'UPDATE shifts SET ends_at = ? WHERE tenant_id = ? AND id = ?',
          after(MAX_SHIFT_MINUTES, 1),
          w.tenant,
          s,
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'shifts_at_most_7_days' });
    expect(
      (
        await refusal(
          run('UPDATE shifts SET starts_at = ? WHERE tenant_id = ? AND id = ?', after(-1), w.tenant, s),
        )
      ).constraint,
    ).toBe('shifts_at_most_7_days');
  });

  it(`refuses a time entry of more than ${MAX_ENTRY_MINUTES} whole minutes, inserted or stretched`, async () => {
    const s = await shift(after(0), after(MAX_SHIFT_MINUTES));
    const assignment = await assign(s, await slot(s, 1), w.alice);
    /** An entry `minutes` and `seconds` long, no break, its arithmetic right. */
    const entry = (id: string, minutes: number, seconds: number) =>
      run(
        `INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
           worked_minutes, scheduled_minutes, overtime_minutes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        w.tenant,
        id,
        assignment,
        w.alice,
        after(0),
        after(minutes, seconds),
        minutes,
        MAX_SHIFT_MINUTES,
        minutes - MAX_SHIFT_MINUTES,
      );
    expect(await refusal(entry(randomUUID(), MAX_ENTRY_MINUTES + 1, 0))).toEqual({
      code: '23514',
      constraint: 'time_entries_at_most_10080_minutes',
    });
    // A started minute is not counted, by the service or the database.
    const kept = randomUUID();
    await entry(kept, MAX_ENTRY_MINUTES, 59);
    expect(
      (
        await refusal(
          run(
            `UPDATE time_entries SET ended_at = ?, worked_minutes = ?, overtime_minutes = ?
              WHERE tenant_id = ? AND id = ?`,
            after(MAX_ENTRY_MINUTES + 1),
            MAX_ENTRY_MINUTES + 1,
            MAX_ENTRY_MINUTES + 1 - MAX_SHIFT_MINUTES,
            w.tenant,
            kept,
          ),
        )
      ).constraint,
    ).toBe('time_entries_at_most_10080_minutes');
  });

  it('keeps a longer shift stored before the rule, and checks it again once it is written', async () => {
    const owner = handle.owner;
    const forever = await asLegacyRows(owner, () => shift('2000-01-01T00:00:00Z', '6000-01-01T00:00:00Z'));
    const rename = () =>
      run("UPDATE shifts SET name = 'Watch' WHERE tenant_id = ? AND id = ?", w.tenant, forever);
    expect((await refusal(rename())).constraint).toBe('shifts_at_most_7_days');
    await run(
      'UPDATE shifts SET ends_at = ? WHERE tenant_id = ? AND id = ?',
      '2000-01-02T00:00:00Z',
      w.tenant,
      forever,
    );
    await rename();
  });
});

describe('the overtime ledger', () => {
  /** The user's balance, and the sum and kinds of the ledger rows the database wrote. */
  async function books(userId: string) {
    const balance = await run(
      'SELECT balance_minutes FROM overtime_balances WHERE tenant_id = ? AND user_id = ?',
      w.tenant,
      userId,
    );
    const ledger = await run(
      'SELECT kind, delta_minutes FROM overtime_ledger WHERE tenant_id = ? AND user_id = ? ORDER BY seq',
      w.tenant,
      userId,
    );
    return {
      balance: (balance.rows[0] as { balance_minutes: number } | undefined)?.balance_minutes ?? 0,
      rows: ledger.rows as { kind: string; delta_minutes: number }[],
    };
  }

  async function entryFor(user: string, worked: number): Promise<string> {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    return timeEntry(await assign(s, await slot(s, 1), user), user, worked);
  }

  const payout = (user: string, minutes: number, id = randomUUID()) =>
    run(
      'INSERT INTO payouts (tenant_id, id, user_id, minutes) VALUES (?, ?, ?, ?)',
      w.tenant,
      id,
      user,
      minutes,
    );

  it('books an entry, a change of its overtime and a payout, and the balance is their sum', async () => {
    const entry = await entryFor(w.alice, 150);
    expect(await books(w.alice)).toEqual({ balance: 30, rows: [{ kind: 'entry', delta_minutes: 30 }] });
    await run(
      `UPDATE time_entries SET ended_at = timestamptz '2030-01-01T13:00:00Z', worked_minutes = 180, overtime_minutes = 60
        WHERE tenant_id = ? AND id = ?`,
      w.tenant,
      entry,
    );
    // A write that leaves the overtime as it was books nothing.
    await run(
      'UPDATE time_entries SET recorded_by = ? WHERE tenant_id = ? AND id = ?',
      w.bob,
      w.tenant,
      entry,
    );
    await payout(w.alice, 45);
    expect(await books(w.alice)).toEqual({
      balance: 15,
      rows: [
        { kind: 'entry', delta_minutes: 30 },
        { kind: 'correction', delta_minutes: 30 },
        { kind: 'payout', delta_minutes: -45 },
      ],
    });
    expect((await books(w.bob)).rows).toEqual([]);
  });

  it('keeps negative overtime and refuses a payout beyond the balance, writing nothing', async () => {
    await entryFor(w.alice, 90);
    expect((await books(w.alice)).balance).toBe(-30);
    expect(await refusal(payout(w.alice, 1))).toEqual({
      code: '23514',
      constraint: 'overtime_payout_within_balance',
    });
    await entryFor(w.bob, 160);
    expect(await refusal(payout(w.bob, 41))).toEqual({
      code: '23514',
      constraint: 'overtime_payout_within_balance',
    });
    await payout(w.bob, 40);
    expect(await books(w.bob)).toEqual({
      balance: 0,
      rows: [
        { kind: 'entry', delta_minutes: 40 },
        { kind: 'payout', delta_minutes: -40 },
      ],
    });
    const payouts = await run('SELECT minutes FROM payouts WHERE tenant_id = ? ORDER BY minutes', w.tenant);
    expect(payouts.rows).toEqual([{ minutes: 40 }]);
  });

  it('refuses any write of a balance that does not come from a ledger row', async () => {
    await entryFor(w.alice, 150);
    const derived = { code: '23514', constraint: 'overtime_balances_derived' };
    expect(
      await refusal(
        run(
          'UPDATE overtime_balances SET balance_minutes = 999 WHERE tenant_id = ? AND user_id = ?',
          w.tenant,
          w.alice,
        ),
      ),
    ).toEqual(derived);
    expect(
      await refusal(
        run(
          'INSERT INTO overtime_balances (tenant_id, user_id, balance_minutes) VALUES (?, ?, 5)',
          w.tenant,
          w.bob,
        ),
      ),
    ).toEqual(derived);
    expect(
      await refusal(
        run('DELETE FROM overtime_balances WHERE tenant_id = ? AND user_id = ?', w.tenant, w.alice),
      ),
    ).toEqual(derived);
    expect((await refusal(run('TRUNCATE overtime_balances'))).code).toBe('23514');
    expect((await books(w.alice)).balance).toBe(30);
  });

  it('refuses ledger rows written by hand, and any change or removal of one', async () => {
    const entry = await entryFor(w.alice, 150);
    expect(
      await refusal(
        run(
          "INSERT INTO overtime_ledger (tenant_id, user_id, kind, delta_minutes, time_entry_id) VALUES (?, ?, 'correction', 500, ?)",
          w.tenant,
          w.alice,
          entry,
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'overtime_ledger_derived' });
    const appendOnly = { code: '23514', constraint: 'overtime_ledger_append_only' };
    expect(
      await refusal(run('UPDATE overtime_ledger SET delta_minutes = 500 WHERE tenant_id = ?', w.tenant)),
    ).toEqual(appendOnly);
    expect(await refusal(run('DELETE FROM overtime_ledger WHERE tenant_id = ?', w.tenant))).toEqual(
      appendOnly,
    );
    expect((await refusal(run('TRUNCATE overtime_ledger CASCADE'))).code).toBe('23514');
    expect(await books(w.alice)).toEqual({ balance: 30, rows: [{ kind: 'entry', delta_minutes: 30 }] });
  });

  it('never removes or rewrites a booked entry or payout', async () => {
    const entry = await entryFor(w.alice, 150);
    const paid = randomUUID();
    await payout(w.alice, 10, paid);
    const restricted = ['23001', '23503'];
    expect(restricted).toContain(
      (await refusal(run('DELETE FROM time_entries WHERE tenant_id = ? AND id = ?', w.tenant, entry))).code,
    );
    expect(restricted).toContain(
      (await refusal(run('DELETE FROM payouts WHERE tenant_id = ? AND id = ?', w.tenant, paid))).code,
    );
    expect(
      await refusal(run('UPDATE payouts SET minutes = 1 WHERE tenant_id = ? AND id = ?', w.tenant, paid)),
    ).toEqual({ code: '23514', constraint: 'payouts_append_only' });
    // Another assignment of another user: the entry's minutes would stay on Alice's books.
    const s = await shift('2030-02-01T10:00:00Z', '2030-02-01T12:00:00Z');
    const bobs = await assign(s, await slot(s, 1), w.bob);
    expect(
      await refusal(
        run(
          'UPDATE time_entries SET user_id = ?, shift_assignment_id = ? WHERE tenant_id = ? AND id = ?',
          w.bob,
          bobs,
          w.tenant,
          entry,
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'time_entries_owner_fixed' });
    expect((await books(w.alice)).balance).toBe(20);
  });

  it('refuses an entry whose arithmetic does not add up', async () => {
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const assignment = await assign(s, await slot(s, 1), w.alice);
    const entry = (worked: number, breakMinutes: number, overtime: number) =>
      run(
        `INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
           break_minutes, worked_minutes, scheduled_minutes, overtime_minutes)
         VALUES (?, ?, ?, ?, '2030-01-01T10:00:00Z', '2030-01-01T12:00:59.999Z', ?, ?, 120, ?)`,
        w.tenant,
        randomUUID(),
        assignment,
        w.alice,
        breakMinutes,
        worked,
        overtime,
      );
    // 120 whole minutes elapsed (the started 121st does not count).
    expect((await refusal(entry(121, 0, 1))).constraint).toBe('time_entries_worked_minutes');
    expect((await refusal(entry(100, 30, -20))).constraint).toBe('time_entries_worked_minutes');
    expect((await refusal(entry(-10, 130, -130))).constraint).toBe('time_entries_break_within_span');
    expect((await refusal(entry(90, 30, 0))).constraint).toBe('time_entries_overtime_minutes');
    await entry(90, 30, -30);
    expect((await books(w.alice)).balance).toBe(-30);
  });
});

describe('clocked time, proposed until confirmed (migration 0028)', () => {
  /** Raw SQL as the application's role, in the tenant's scope: past every service, not past the wall. */
  const asApp = (statement: string, ...values: unknown[]) =>
    asTenant(w.tenant, () => runSql(handle.db, statement, ...values));
  const books = async () => {
    const ledger = await run(
      'SELECT kind, delta_minutes FROM overtime_ledger WHERE tenant_id = ? AND user_id = ? ORDER BY seq',
      w.tenant,
      w.alice,
    );
    const balance = await run(
      'SELECT balance_minutes FROM overtime_balances WHERE tenant_id = ? AND user_id = ?',
      w.tenant,
      w.alice,
    );
    return { ledger: ledger.rows, balance: balance.rows };
  };
  /** A seat of Alice's on a shift still ahead (2030, 10:00 to 12:00), and its clock-in: open and proposed. */
  async function clockedIn(): Promise<string> {
    await run('UPDATE tenant_settings SET time_entries_before_end = false WHERE tenant_id = ?', w.tenant);
    const s = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const seat = await assign(s, await slot(s, 1), w.alice);
    const id = randomUUID();
    // Before the shift ends, whatever the tenant allows: the rule of 0023 judges confirmed entries.
    await asApp(
      `INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, scheduled_minutes, status)
       VALUES (?, ?, ?, ?, '2030-01-01T09:55:00Z', 120, 'proposed')`,
      w.tenant,
      id,
      seat,
      w.alice,
    );
    return id;
  }
  const clockOut = (id: string) =>
    asApp(
      `UPDATE time_entries SET ended_at = '2030-01-01T12:30:00Z', worked_minutes = 155, overtime_minutes = 35
        WHERE tenant_id = ? AND id = ?`,
      w.tenant,
      id,
    );

  it('books nothing for a proposed entry, whatever is written to it, and its whole overtime once confirmed', async () => {
    const id = await clockedIn();
    await clockOut(id);
    // A proposed entry corrected again: still nothing in the books.
    await asApp(
      `UPDATE time_entries SET ended_at = '2030-01-01T12:45:00Z', worked_minutes = 170, overtime_minutes = 50
        WHERE tenant_id = ? AND id = ?`,
      w.tenant,
      id,
    );
    expect(await books()).toEqual({ ledger: [], balance: [] });
    await asApp(
      `UPDATE time_entries SET status = 'confirmed', confirmed_at = now(), confirmed_by = ?
        WHERE tenant_id = ? AND id = ?`,
      w.bob,
      w.tenant,
      id,
    );
    expect(await books()).toEqual({
      ledger: [{ kind: 'entry', delta_minutes: 50 }],
      balance: [{ balance_minutes: 50 }],
    });
    // Confirmed, it books corrections as any entry does.
    await asApp(
      `UPDATE time_entries SET ended_at = '2030-01-01T12:00:00Z', worked_minutes = 125, overtime_minutes = 5
        WHERE tenant_id = ? AND id = ?`,
      w.tenant,
      id,
    );
    expect((await books()).ledger).toEqual([
      { kind: 'entry', delta_minutes: 50 },
      { kind: 'correction', delta_minutes: -45 },
    ]);
  });

  it('refuses a confirmed entry going back to proposed, a confirmed or unworked open entry, and a proposed one marked confirmed by', async () => {
    const id = await clockedIn();
    // Open: no end, no worked or overtime minutes; only while proposed.
    expect(
      await refusal(
        asApp(`UPDATE time_entries SET worked_minutes = 0 WHERE tenant_id = ? AND id = ?`, w.tenant, id),
      ),
    ).toEqual({ code: '23514', constraint: 'time_entries_open_unworked' });
    expect(
      await refusal(
        asApp(
          `UPDATE time_entries SET status = 'confirmed', confirmed_at = now() WHERE tenant_id = ? AND id = ?`,
          w.tenant,
          id,
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'time_entries_open_proposed' });
    expect(
      await refusal(
        asApp(`UPDATE time_entries SET confirmed_by = ? WHERE tenant_id = ? AND id = ?`, w.bob, w.tenant, id),
      ),
    ).toEqual({ code: '23514', constraint: 'time_entries_proposed_unconfirmed' });
    await clockOut(id);
    expect(
      await refusal(
        asApp(`UPDATE time_entries SET status = 'maybe' WHERE tenant_id = ? AND id = ?`, w.tenant, id),
      ),
    ).toEqual({ code: '23514', constraint: 'time_entries_status' });
    await asApp(
      `UPDATE time_entries SET status = 'confirmed', confirmed_at = now() WHERE tenant_id = ? AND id = ?`,
      w.tenant,
      id,
    );
    expect(
      await refusal(
        asApp(
          `UPDATE time_entries SET status = 'proposed', confirmed_at = NULL WHERE tenant_id = ? AND id = ?`,
          w.tenant,
          id,
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'time_entries_confirmed_final' });
    // Nothing of those refusals reached the books: one credit, of the confirmation.
    expect(await books()).toEqual({
      ledger: [{ kind: 'entry', delta_minutes: 35 }],
      balance: [{ balance_minutes: 35 }],
    });
  });

  it('still refuses a confirmed first entry before the shift ends, and confirms a proposed one then', async () => {
    const id = await clockedIn();
    const s = await shift('2030-01-02T10:00:00Z', '2030-01-02T12:00:00Z');
    const seat = await assign(s, await slot(s, 1), w.alice);
    expect(
      await refusal(
        asApp(
          `INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
             worked_minutes, scheduled_minutes, overtime_minutes)
           VALUES (?, ?, ?, ?, '2030-01-02T10:00:00Z', '2030-01-02T12:00:00Z', 120, 120, 0)`,
          w.tenant,
          randomUUID(),
          seat,
          w.alice,
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'time_entries_shift_ended' });
    await clockOut(id);
    await asApp(
      `UPDATE time_entries SET status = 'confirmed', confirmed_at = now() WHERE tenant_id = ? AND id = ?`,
      w.tenant,
      id,
    );
    expect((await books()).ledger).toEqual([{ kind: 'entry', delta_minutes: 35 }]);
  });
});

describe('a time entry before its shift ends (migration 0023)', () => {
  const beforeEnd = (allowed: boolean) =>
    run('UPDATE tenant_settings SET time_entries_before_end = ? WHERE tenant_id = ?', allowed, w.tenant);
  const ended = { code: '23514', constraint: 'time_entries_shift_ended' };

  it('refuses the first entry of a shift that ends after now(), whatever writes it, unless the tenant allows it', async () => {
    await beforeEnd(false);
    const future = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const seat = await assign(future, await slot(future, 2), w.alice);
    expect(await refusal(timeEntry(seat, w.alice))).toEqual(ended);
    // As the application's role, in the tenant's scope, too.
    const asApp = asTenant(w.tenant, () =>
      sql`INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
            worked_minutes, scheduled_minutes, overtime_minutes)
          VALUES (${w.tenant}, ${randomUUID()}, ${seat}, ${w.alice}, '2030-01-01T10:00:00Z',
            '2030-01-01T12:00:00Z', 120, 120, 0)`.execute(handle.db),
    );
    expect(await refusal(asApp)).toEqual(ended);
    // A shift that has ended takes its entry.
    const past = await shift('2020-01-01T10:00:00Z', '2020-01-01T12:00:00Z');
    await timeEntry(await assign(past, await slot(past, 1), w.alice), w.alice);
    await beforeEnd(true);
    await timeEntry(seat, w.alice);
  });

  it('refuses it for a tenant without settings', async () => {
    await run('DELETE FROM tenant_settings WHERE tenant_id = ?', w.tenant);
    const future = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    expect(await refusal(timeEntry(await assign(future, await slot(future, 1), w.alice), w.alice))).toEqual(
      ended,
    );
  });

  it('lets an entry recorded early be corrected once the tenant no longer allows early ones', async () => {
    const future = await shift('2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z');
    const seat = await assign(future, await slot(future, 1), w.alice);
    const id = await timeEntry(seat, w.alice);
    await beforeEnd(false);
    // The service's re-post: an insert that meets the entry and does nothing, then an update.
    const again = await run(
      `INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
         worked_minutes, scheduled_minutes, overtime_minutes)
       VALUES (?, ?, ?, ?, '2030-01-01T10:00:00Z', '2030-01-01T13:00:00Z', 180, 120, 60)
       ON CONFLICT (tenant_id, shift_assignment_id) DO NOTHING`,
      w.tenant,
      randomUUID(),
      seat,
      w.alice,
    );
    expect(again.rows).toEqual([]);
    await run(
      `UPDATE time_entries SET ended_at = timestamptz '2030-01-01T13:00:00Z', worked_minutes = 180,
         overtime_minutes = 60 WHERE tenant_id = ? AND id = ?`,
      w.tenant,
      id,
    );
    const { rows } = await run(
      'SELECT worked_minutes FROM time_entries WHERE tenant_id = ? AND id = ?',
      w.tenant,
      id,
    );
    expect(rows).toEqual([{ worked_minutes: 180 }]);
  });
});

describe('a user’s language (migration 0023)', () => {
  const setLocale = (locale: string | null) =>
    run('UPDATE users SET locale = ? WHERE tenant_id = ? AND id = ?', locale, w.tenant, w.alice);

  it('holds a BCP 47 shape of 2 to 35 characters, or null', async () => {
    for (const locale of ['de', 'de-DE', 'pt-BR', 'en-US-u-ca-buddhist', 'x'.repeat(2), null])
      await setLocale(locale);
    const shape = { code: '23514', constraint: 'users_locale_shape' };
    for (const locale of [
      'd',
      'en_US',
      'de-',
      '-de',
      'de DE',
      '1a-DE',
      `de-${'abcdefgh-'.repeat(4)}`,
      'de-abcdefghi',
      '',
    ]) {
      expect(await refusal(setLocale(locale)), locale).toEqual(shape);
    }
    // As the application's role, in the tenant's scope, too.
    const asApp = asTenant(w.tenant, () =>
      sql`UPDATE users SET locale = 'en_US' WHERE tenant_id = ${w.tenant} AND id = ${w.alice}`.execute(
        handle.db,
      ),
    );
    expect(await refusal(asApp)).toEqual(shape);
  });
});

describe('the reason of an admin’s decision (migration 0029)', () => {
  /** A decided time off of Alice's and a rejected offer of her seat, to write reasons on. */
  async function decided() {
    const timeOff = randomUUID();
    await run(
      `INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at, status, decided_at)
       VALUES (?, ?, ?, '2030-03-01T00:00:00Z', '2030-03-02T00:00:00Z', 'approved', now())`,
      w.tenant,
      timeOff,
      w.alice,
    );
    const s = await shift('2030-01-02T10:00:00Z', '2030-01-02T14:00:00Z');
    const seat = await assign(s, await slot(s, 1), w.alice);
    const offer = randomUUID();
    await run(
      `INSERT INTO offers (tenant_id, id, assignment_id, shift_id, from_user_id, status, expires_at, decided_at)
       VALUES (?, ?, ?, ?, ?, 'rejected', '2030-01-02T10:00:00Z', now())`,
      w.tenant,
      offer,
      seat,
      s,
      w.alice,
    );
    return { timeOff, offer };
  }

  it('holds one line of 1 to 500 characters, or null, on time off and offers alike', async () => {
    const { timeOff, offer } = await decided();
    for (const [table, id] of [
      ['time_off', timeOff],
      ['offers', offer],
    ] as const) {
      const set = (reason: string | null) =>
        run(`UPDATE ${table} SET decision_reason = ? WHERE tenant_id = ? AND id = ?`, reason, w.tenant, id);
      for (const reason of ['x', 'x'.repeat(500), `${'x'.repeat(499)}🏖`, 'Tab\there', null])
        await set(reason);
      const shape = { code: '23514', constraint: `${table}_decision_reason_shape` };
      for (const reason of ['', 'x'.repeat(501), 'Two\nlines', 'Two\r\nlines', 'Line\u2028separator']) {
        expect(await refusal(set(reason)), `${table}: ${JSON.stringify(reason)}`).toEqual(shape);
      }
      // As the application's role, in the tenant's scope, too.
      const asApp = asTenant(w.tenant, () =>
        sql`UPDATE ${sql.table(table)} SET decision_reason = ${'x'.repeat(501)}
             WHERE tenant_id = ${w.tenant} AND id = ${id}`.execute(handle.db),
      );
      expect(await refusal(asApp), table).toEqual(shape);
    }
  });

  it('is only on a decision: approved or rejected, never requested, open, taken or cancelled', async () => {
    const { timeOff, offer } = await decided();
    await run(
      "UPDATE time_off SET decision_reason = 'Enjoy' WHERE tenant_id = ? AND id = ?",
      w.tenant,
      timeOff,
    );
    await run("UPDATE offers SET decision_reason = 'No' WHERE tenant_id = ? AND id = ?", w.tenant, offer);
    expect(
      await refusal(
        run(
          "UPDATE time_off SET status = 'requested', decided_at = NULL WHERE tenant_id = ? AND id = ?",
          w.tenant,
          timeOff,
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'time_off_decision_reason_decided' });
    expect(
      await refusal(
        run("UPDATE offers SET status = 'cancelled' WHERE tenant_id = ? AND id = ?", w.tenant, offer),
      ),
    ).toEqual({ code: '23514', constraint: 'offers_decision_reason_decided' });
  });
});

describe('push subscriptions', () => {
  it('keeps at most 10 per user, the newest, whatever writes them', async () => {
    for (let i = 0; i < 12; i++) {
      await run(
        `INSERT INTO push_subscriptions (tenant_id, id, user_id, endpoint, p256dh, auth, updated_at)
         VALUES (?, ?, ?, ?, 'k', 'a', ?)`,
        w.tenant,
        randomUUID(),
        w.alice,
        `https://push.example/${i}`,
        `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
      );
    }
    const { rows } = await run(
      'SELECT endpoint FROM push_subscriptions WHERE tenant_id = ? AND user_id = ? ORDER BY updated_at',
      w.tenant,
      w.alice,
    );
    expect((rows as { endpoint: string }[]).map((r) => r.endpoint)).toEqual(
      Array.from({ length: 10 }, (_, i) => `https://push.example/${i + 2}`),
    );
  });
});

describe('a browser’s label and User-Agent (migration 0023)', () => {
  it('keeps each one line, the label 1 to 100 characters and the User-Agent at most 512, or null', async () => {
    const id = randomUUID();
    await run(
      `INSERT INTO push_subscriptions (tenant_id, id, user_id, endpoint, p256dh, auth, label, user_agent)
       VALUES (?, ?, ?, 'https://push.example/label', 'k', 'a', 'Work phone', 'Mozilla/5.0')`,
      w.tenant,
      id,
      w.alice,
    );
    const set = (column: 'label' | 'user_agent', value: string | null) =>
      run(`UPDATE push_subscriptions SET ${column} = ? WHERE tenant_id = ? AND id = ?`, value, w.tenant, id);
    await set('label', null);
    await set('user_agent', null);
    await set('label', 'x'.repeat(100));
    await set('user_agent', 'x'.repeat(512));
    for (const label of ['', 'x'.repeat(101), 'Work\nphone', 'Tab\there']) {
      expect(await refusal(set('label', label)), label).toEqual({
        code: '23514',
        constraint: 'push_subscriptions_label_shape',
      });
    }
    for (const agent of ['', 'x'.repeat(513), 'Mozilla\r\nX-Injected: 1']) {
      expect(await refusal(set('user_agent', agent)), agent).toEqual({
        code: '23514',
        constraint: 'push_subscriptions_user_agent_shape',
      });
    }
  });
});

describe('webhooks (migration 0018)', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const hook = (events: string, key = secret, tenant = w.tenant) =>
    run(
      'INSERT INTO webhooks (tenant_id, id, url, events, secret) VALUES (?, ?, ?, ?::text[], ?)',
      tenant,
      randomUUID(),
      'https://hooks.example.org/x',
      events,
      key,
    );

  it('refuses an empty, unknown or repeated event set and a secret not in the whsec_ form', async () => {
    for (const events of ['{}', '{shift.deleted}', '{shift.published,shift.published}', '{NULL}']) {
      expect(await refusal(hook(events)), events).toEqual({ code: '23514', constraint: 'webhooks_events' });
    }
    for (const key of ['plain', 'whsec_short', `whsec_${'A'.repeat(60)}`]) {
      expect(await refusal(hook('{form.submitted}', key)), key).toEqual({
        code: '23514',
        constraint: 'webhooks_secret',
      });
    }
  });

  it('holds at most 20 hooks per tenant, whatever writes them', async () => {
    for (let i = 0; i < 20; i++) await hook('{form.submitted}');
    expect(await refusal(hook('{form.submitted}'))).toEqual({
      code: '23514',
      constraint: 'webhooks_per_tenant',
    });
  });

  it('takes webhook jobs, and a delivery is delivered exactly when it has a delivery time', async () => {
    await hook('{form.submitted}');
    const { rows } = await run('SELECT id FROM webhooks WHERE tenant_id = ?', w.tenant);
    const webhookId = (rows[0] as { id: string }).id;
    await run(
      `INSERT INTO jobs (tenant_id, id, kind, key, payload, max_attempts) VALUES (?, ?, 'webhook', 'k', '{}', 3)`,
      w.tenant,
      randomUUID(),
    );
    expect(
      await refusal(
        run(
          `INSERT INTO jobs (tenant_id, id, kind, key, payload, max_attempts) VALUES (?, ?, 'mail', 'k', '{}', 3)`,
          w.tenant,
          randomUUID(),
        ),
      ),
    ).toEqual({ code: '23514', constraint: 'jobs_kind_check' });
    const delivery = (status: string, deliveredAt: string | null) =>
      run(
        `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, seq, event_type, payload, status, delivered_at)
         VALUES (?, ?, ?, 1, 'form.submitted', '{}', ?, ?)`,
        w.tenant,
        randomUUID(),
        webhookId,
        status,
        deliveredAt,
      );
    expect(await refusal(delivery('delivered', null))).toEqual({
      code: '23514',
      constraint: 'webhook_deliveries_delivered_at',
    });
    expect(await refusal(delivery('pending', '2030-01-01T00:00:00Z'))).toEqual({
      code: '23514',
      constraint: 'webhook_deliveries_delivered_at',
    });
  });
});

describe('time off of one user (migration 0020)', () => {
  const timeOff = (startsAt: string, endsAt: string, status = 'requested', user = w.alice) =>
    run(
      `INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at, status, decided_at)
       VALUES (?, ?, ?, ?, ?, ?, CASE WHEN ? = 'requested' THEN NULL ELSE now() END)`,
      w.tenant,
      randomUUID(),
      user,
      startsAt,
      endsAt,
      status,
      status,
    );
  const noOverlap = { code: '23P01', constraint: 'time_off_no_overlap' };

  it('refuses overlapping requested or approved time off, past spans too; rejected, touching or another’s pass', async () => {
    await timeOff('2030-01-01T00:00:00Z', '2030-01-10T00:00:00Z');
    await timeOff('2020-01-01T00:00:00Z', '2020-01-10T00:00:00Z', 'approved');
    expect(await refusal(timeOff('2030-01-09T00:00:00Z', '2030-01-12T00:00:00Z'))).toEqual(noOverlap);
    expect(await refusal(timeOff('2030-01-05T00:00:00Z', '2030-01-06T00:00:00Z', 'approved'))).toEqual(
      noOverlap,
    );
    expect(await refusal(timeOff('2020-01-09T00:00:00Z', '2020-01-12T00:00:00Z', 'approved'))).toEqual(
      noOverlap,
    );
    await timeOff('2030-01-05T00:00:00Z', '2030-01-06T00:00:00Z', 'rejected');
    await timeOff('2030-01-10T00:00:00Z', '2030-01-11T00:00:00Z');
    await timeOff('2030-01-01T00:00:00Z', '2030-01-10T00:00:00Z', 'requested', w.bob);
    // A rejected one asked for again, by turning it back into a request: refused too.
    const rejectedAgain = run(
      `UPDATE time_off SET status = 'requested', decided_at = NULL
        WHERE tenant_id = ? AND user_id = ? AND status = 'rejected'`,
      w.tenant,
      w.alice,
    );
    expect(await refusal(rejectedAgain)).toEqual(noOverlap);
  });

  it(`holds at most ${MAX_OPEN_TIME_OFF} open (requested, or approved and not over) per user`, async () => {
    const day = (n: number) => new Date(Date.UTC(2040, 0, 1 + n)).toISOString();
    for (let n = 0; n < MAX_OPEN_TIME_OFF - 1; n++) await timeOff(day(n), day(n + 1));
    await timeOff(day(60), day(61), 'approved');
    const cap = { code: '23514', constraint: 'time_off_open_per_user' };
    expect(await refusal(timeOff(day(70), day(71)))).toEqual(cap);
    expect(await refusal(timeOff(day(70), day(71), 'approved'))).toEqual(cap);
    // A rejected request added or one over already is not open; neither is another user's.
    await timeOff(day(70), day(71), 'rejected');
    await timeOff('2020-01-01T00:00:00Z', '2020-01-02T00:00:00Z', 'approved');
    await timeOff(day(70), day(71), 'requested', w.bob);
    // Deciding or rewriting an open one adds nothing; turning a closed one back into a request does.
    await run(
      `UPDATE time_off SET status = 'approved', decided_at = now() WHERE tenant_id = ? AND user_id = ? AND starts_at = ?`,
      w.tenant,
      w.alice,
      day(0),
    );
    await run(
      `UPDATE time_off SET ends_at = ? WHERE tenant_id = ? AND user_id = ? AND starts_at = ?`,
      '2040-01-01T12:00:00Z',
      w.tenant,
      w.alice,
      day(0),
    );
    const reopened = run(
      `UPDATE time_off SET status = 'requested', decided_at = NULL WHERE tenant_id = ? AND user_id = ? AND status = 'rejected'`,
      w.tenant,
      w.alice,
    );
    expect(await refusal(reopened)).toEqual(cap);
    const moved = run(
      `UPDATE time_off SET user_id = ? WHERE tenant_id = ? AND user_id = ? AND starts_at = ?`,
      w.alice,
      w.tenant,
      w.bob,
      day(70),
    );
    expect(await refusal(moved)).toEqual(cap);
  });
});

describe('the rate limit buckets (migration 0030)', () => {
  /** A bucket written as the application's role, in the tenant's scope, as src/rate-limits/ writes it. */
  const write = (scope: string, subject: string, tokens: number, capacity: number, tenant = w.tenant) =>
    asTenant(w.tenant, () =>
      sql`INSERT INTO rate_limit_buckets (tenant_id, scope, subject, tokens, capacity, updated_at)
          VALUES (${tenant}, ${scope}, ${subject}, ${tokens}::float8, ${capacity}::float8, now())`.execute(
        handle.db,
      ),
    );

  it('holds a bucket between empty and full, of a size of 1 to 1,000,000, whatever writes it', async () => {
    await write('tenant', w.tenant, 0, 1);
    await write('user', w.alice, 200, 200);
    await write('user', w.bob, 0.5, 1_000_000);
    const tokens = { code: '23514', constraint: 'rate_limit_buckets_tokens' };
    const capacity = { code: '23514', constraint: 'rate_limit_buckets_capacity' };
    expect(await refusal(write('user', randomUUID(), -0.001, 10))).toEqual(tokens);
    expect(await refusal(write('user', randomUUID(), 10.5, 10))).toEqual(tokens);
    expect(await refusal(write('user', randomUUID(), Number.NaN, 10))).toEqual(tokens);
    expect(await refusal(write('user', randomUUID(), 0, 0.5))).toEqual(capacity);
    expect(await refusal(write('user', randomUUID(), 0, 1_000_001))).toEqual(capacity);
    // Taking below empty, or shrinking the bucket under its tokens, is refused the same.
    const take = asTenant(w.tenant, () =>
      sql`UPDATE rate_limit_buckets SET tokens = tokens - 1 WHERE tenant_id = ${w.tenant} AND subject = ${w.bob}`.execute(
        handle.db,
      ),
    );
    expect(await refusal(take)).toEqual(tokens);
    expect(
      await refusal(
        run(
          'UPDATE rate_limit_buckets SET capacity = 100 WHERE tenant_id = ? AND subject = ?',
          w.tenant,
          w.alice,
        ),
      ),
    ).toEqual(tokens);
  });

  it('knows two kinds of bucket, a tenant’s own one among them, and keeps them behind the tenant wall', async () => {
    expect(await refusal(write('robot', w.alice, 1, 1))).toEqual({
      code: '23514',
      constraint: 'rate_limit_buckets_scope',
    });
    expect(await refusal(write('tenant', w.alice, 1, 1))).toEqual({
      code: '23514',
      constraint: 'rate_limit_buckets_tenant_subject',
    });
    await write('user', w.alice, 1, 1);
    expect(await refusal(write('user', w.alice, 1, 1))).toEqual({
      code: '23505',
      constraint: 'rate_limit_buckets_pkey',
    });
    // Another tenant's bucket, from this tenant's scope: refused by the wall.
    const other = await layDownEventTenant(handle.owner);
    expect((await refusal(write('tenant', other.tenant, 1, 1, other.tenant))).code).toBe('42501');
    // The application takes and gives back tokens; it never removes a bucket.
    const remove = asTenant(w.tenant, () =>
      sql`DELETE FROM rate_limit_buckets WHERE tenant_id = ${w.tenant}`.execute(handle.db),
    );
    expect((await refusal(remove)).code).toBe('42501');
    // The buckets go with their tenant.
    const gone = await bareTenant(handle.owner);
    await run(
      "INSERT INTO rate_limit_buckets (tenant_id, scope, subject, tokens, capacity, updated_at) VALUES (?, 'tenant', ?, 1, 1, now())",
      gone,
      gone,
    );
    await run('DELETE FROM tenants WHERE id = ?', gone);
    expect((await run('SELECT 1 FROM rate_limit_buckets WHERE tenant_id = ?', gone)).rows).toEqual([]);
  });
});
