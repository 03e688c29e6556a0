import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import type { Db } from '../../src/db/database.ts';
import { refusal, runSql, useTestDatabase } from '../support/database.ts';
import { type EventTenant, layDownEventTenant } from '../support/shifts.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * Approved time off and assignments never overlap, by the database's own rule (migration
 * 0016): each test writes the forbidden rows with raw SQL, past every service, and
 * expects the refusal. Runs on PGlite and, with TEST_DB=postgres, on PostgreSQL, where
 * two sessions also interleave a claim and an approval at the lock.
 */
const handle = useTestDatabase();
const run = (statement: string, ...values: unknown[]) => runSql(handle.owner, statement, ...values);

const unavailable = { code: '23514', constraint: 'shift_assignments_time_off' };
const overlaps = { code: '23514', constraint: 'time_off_overlaps_assignments' };

interface World extends Omit<EventTenant, 'role' | 'event'> {
  shift: string;
  slot: string;
}
let w: World;

/** The shift is 10:00-12:00 on 1 January 2030, one slot of two seats. */
const SHIFT = ['2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z'] as const;

beforeEach(async () => {
  const { role, event, ...people } = await layDownEventTenant(handle.owner);
  w = { ...people, shift: randomUUID(), slot: randomUUID() };
  await run(
    "INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at) VALUES (?, ?, ?, 'S', ?, ?)",
    w.tenant,
    w.shift,
    event,
    ...SHIFT,
  );
  await run(
    'INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity) VALUES (?, ?, ?, ?, 2)',
    w.tenant,
    w.slot,
    w.shift,
    role,
  );
});

function assign(userId: string, on: Db = handle.owner) {
  const id = randomUUID();
  return runSql(
    on,
    `INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
     VALUES (?, ?, ?, ?, ?, 'assign', ?, ?)`,
    w.tenant,
    id,
    w.shift,
    w.slot,
    userId,
    ...SHIFT,
  ).then(() => id);
}

async function timeOff(
  userId: string,
  span: readonly [string, string],
  status: 'requested' | 'approved' | 'rejected' = 'approved',
): Promise<string> {
  const id = randomUUID();
  await run(
    `INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at, status, decided_at)
     VALUES (?, ?, ?, ?, ?, ?, CASE WHEN ? = 'requested' THEN NULL ELSE now() END)`,
    w.tenant,
    id,
    userId,
    span[0],
    span[1],
    status,
    status,
  );
  return id;
}

const approve = (id: string, on: Db = handle.owner) =>
  runSql(
    on,
    "UPDATE time_off SET status = 'approved', decided_at = now() WHERE tenant_id = ? AND id = ?",
    w.tenant,
    id,
  );

const day = ['2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z'] as const;

describe('an assignment and approved time off', () => {
  it('refuses an assignment overlapping approved time off of its user', async () => {
    await timeOff(w.alice, day);
    expect(await refusal(assign(w.alice))).toEqual(unavailable);
    // Bob has none: his seat goes in.
    await assign(w.bob);
  });

  it('takes an assignment beside it (touching ends) and over requested or rejected time off', async () => {
    await timeOff(w.alice, ['2030-01-01T12:00:00Z', '2030-01-02T00:00:00Z']);
    await timeOff(w.alice, ['2030-01-01T00:00:00Z', '2030-01-01T10:00:00Z']);
    await timeOff(w.alice, day, 'rejected');
    // Requested time off may not overlap approved time off of the same user (0020).
    await timeOff(w.alice, SHIFT, 'requested');
    await assign(w.alice);
  });

  it('refuses an assignment partly overlapping approved time off, however long ago it began', async () => {
    await timeOff(w.alice, ['2029-01-01T11:00:00Z', '2030-01-01T11:00:00Z']);
    expect(await refusal(assign(w.alice))).toEqual(unavailable);
  });

  it('refuses moving an assignment to a user who is away', async () => {
    const seat = await assign(w.bob);
    await timeOff(w.alice, day);
    const moved = run(
      'UPDATE shift_assignments SET user_id = ? WHERE tenant_id = ? AND id = ?',
      w.alice,
      w.tenant,
      seat,
    );
    expect(await refusal(moved)).toEqual(unavailable);
  });

  it('refuses approved time off over an assignment: inserted, approved later, or moved onto it', async () => {
    await assign(w.alice);
    expect(await refusal(timeOff(w.alice, day))).toEqual(overlaps);
    const requested = await timeOff(w.alice, day, 'requested');
    expect(await refusal(approve(requested))).toEqual(overlaps);
    const elsewhere = await timeOff(w.alice, ['2030-02-01T00:00:00Z', '2030-02-02T00:00:00Z']);
    const moved = run(
      "UPDATE time_off SET starts_at = '2030-01-01T11:00:00Z' WHERE tenant_id = ? AND id = ?",
      w.tenant,
      elsewhere,
    );
    expect(await refusal(moved)).toEqual(overlaps);
    const handedOver = await timeOff(w.bob, day);
    const toAlice = run(
      'UPDATE time_off SET user_id = ? WHERE tenant_id = ? AND id = ?',
      w.alice,
      w.tenant,
      handedOver,
    );
    expect(await refusal(toAlice)).toEqual(overlaps);
  });

  it('lets an approved time off change what does not move it, and be rejected or removed', async () => {
    const off = await timeOff(w.alice, day);
    await run("UPDATE time_off SET reason = 'Ill' WHERE tenant_id = ? AND id = ?", w.tenant, off);
    await run('DELETE FROM time_off WHERE tenant_id = ? AND id = ?', w.tenant, off);
    await assign(w.alice);
  });
});

describe('the time off row', () => {
  const insert = (values: {
    starts: string;
    ends: string;
    status?: string;
    decided?: boolean;
    reason?: string;
  }) =>
    run(
      `INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at, status, decided_at, reason)
       VALUES (?, ?, ?, ?, ?, ?, CASE WHEN ? THEN now() END, ?)`,
      w.tenant,
      randomUUID(),
      w.alice,
      values.starts,
      values.ends,
      values.status ?? 'requested',
      values.decided ?? false,
      values.reason ?? null,
    );

  it.each([
    ['an end before the start', { starts: day[1], ends: day[0] }, 'time_off_ends_after_start'],
    ['an empty span', { starts: day[0], ends: day[0] }, 'time_off_ends_after_start'],
    [
      '366 days and a second',
      { starts: '2030-01-01T00:00:00Z', ends: '2031-01-02T00:00:01Z' },
      'time_off_at_most_366_days',
    ],
    [
      'an unknown status',
      { starts: day[0], ends: day[1], status: 'pending', decided: true },
      'time_off_status',
    ],
    ['a decided request', { starts: day[0], ends: day[1], decided: true }, 'time_off_decided'],
    ['an undecided rejection', { starts: day[0], ends: day[1], status: 'rejected' }, 'time_off_decided'],
    [
      'a reason of 501 characters',
      { starts: day[0], ends: day[1], reason: 'x'.repeat(501) },
      'time_off_reason_length',
    ],
  ])('refuses %s', async (_what, values, constraint) => {
    expect(await refusal(insert(values))).toEqual({ code: '23514', constraint });
  });

  it('takes 366 days exactly and a reason of 500 characters', async () => {
    await insert({ starts: '2030-01-01T00:00:00Z', ends: '2031-01-02T00:00:00Z', reason: 'x'.repeat(500) });
  });

  it('refuses a user of another tenant', async () => {
    const other = randomUUID();
    await run("INSERT INTO tenants (id, vapid_public_key, vapid_private_key) VALUES (?, 'p', 'k')", other);
    const wrong = run(
      'INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at) VALUES (?, ?, ?, ?, ?)',
      other,
      randomUUID(),
      w.alice,
      ...day,
    );
    expect((await refusal(wrong)).code).toBe('23503');
  });
});

/**
 * Two sessions at once: one holds its write open while the other's starts. Whichever
 * locks the user's row first, the other waits for it and then sees its row, so the
 * second is refused. PGlite has one session: there the second would wait for the first
 * transaction whole, which a test cannot hold open and await at once.
 */
describe('a claim racing an approval', runsIf(inject('testDb') === 'postgres', NEEDS_POSTGRES), () => {
  /**
   * Resolves once a session of this database waits on a lock, or `pending` settled. Polls
   * on a connection of its own: the owner's pool of two holds the transaction and the
   * second write.
   */
  async function untilWaiting(pending: Promise<unknown>): Promise<void> {
    let settled = false;
    void pending.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    const watcher = new pg.Client({ connectionString: handle.url ?? '' });
    await watcher.connect();
    try {
      while (!settled) {
        const { rows } = await watcher.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if ((rows[0]?.waiting ?? 0) > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      await watcher.end();
    }
  }

  async function holding<T>(first: (trx: Db) => Promise<unknown>, second: () => Promise<T>): Promise<T> {
    let pending: Promise<T> | undefined;
    await handle.owner.transaction().execute(async (trx) => {
      await first(trx);
      pending = second();
      // Swallowed here, awaited below: the second must not settle unobserved.
      pending.catch(() => undefined);
      await untilWaiting(pending);
    });
    if (!pending) throw new Error('the second write never started');
    return pending;
  }

  it('an approval waiting on a seat being taken is refused once the seat commits', async () => {
    const requested = await timeOff(w.alice, day, 'requested');
    expect(
      await refusal(
        holding(
          (trx) => assign(w.alice, trx),
          () => approve(requested),
        ),
      ),
    ).toEqual(overlaps);
  });

  it('a seat waiting on an approval is refused once the approval commits', async () => {
    const requested = await timeOff(w.alice, day, 'requested');
    expect(
      await refusal(
        holding(
          (trx) => approve(requested, trx),
          () => assign(w.alice),
        ),
      ),
    ).toEqual(unavailable);
  });

  it('an approved time off inserted while a seat is taken is refused', async () => {
    expect(
      await refusal(
        holding(
          (trx) => assign(w.alice, trx),
          () => timeOff(w.alice, day),
        ),
      ),
    ).toEqual(overlaps);
  });
});
