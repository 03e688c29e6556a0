import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { triggerOrder } from '../../src/cli/schema-reference.ts';
import type { Db } from '../../src/db/database.ts';
import { MAX_OPEN_TIME_OFF } from '../../src/time-off/schemas.ts';
import { openTestDatabase, refusal, type TestDatabase } from '../support/database.ts';

/**
 * PostgreSQL fires the triggers of one table that share a timing, a level and an event in
 * the order of their names. Where that order decides something, migration 0025 spells it
 * with step numbers; this file holds, from the catalogue, the order of every set of
 * triggers that fire on one event, so a migration that adds a trigger to one (or makes a
 * new one) fails here until its place is chosen, and shows with raw SQL that the first to
 * refuse a row names the refusal. PGlite, and PostgreSQL with TEST_DB=postgres.
 */
let handle: TestDatabase;
let db: Db;

beforeAll(async () => {
  handle = await openTestDatabase();
  db = handle.owner;
});
afterAll(async () => handle?.dispose());

/** The triggers that fire on each event, in firing order, where more than one does. */
const intended: Nested = {
  payouts: {
    'AFTER ROW INSERT': ['audit', 'payouts_ledger'],
  },
  shift_assignments: {
    'BEFORE ROW INSERT': ['shift_assignments_10_time_off', 'shift_assignments_20_user_active'],
    'BEFORE ROW UPDATE': [
      'shift_assignments_10_time_off',
      'shift_assignments_20_user_active',
      'shift_assignments_30_user_qualified',
    ],
    'AFTER ROW INSERT': ['audit', 'shift_assignments_count'],
    'AFTER ROW UPDATE': ['audit', 'shift_assignments_count', 'shift_assignments_new_holder_reminded'],
    'AFTER ROW DELETE': ['audit', 'shift_assignments_count'],
  },
  time_entries: {
    'AFTER ROW INSERT': ['audit', 'time_entries_ledger'],
    'AFTER ROW UPDATE': ['audit', 'time_entries_ledger'],
  },
  time_off: {
    'BEFORE ROW INSERT': ['time_off_10_open_per_user', 'time_off_20_overlaps_assignments'],
    'BEFORE ROW UPDATE': ['time_off_10_open_per_user', 'time_off_20_overlaps_assignments'],
  },
};

/** From the catalogue: per table, `<timing> <level> <event>` and the triggers firing on it, in name order. */
async function firing(): Promise<Nested> {
  const { rows } = await sql<{ table: string; name: string; when: string; event: string }>`
    SELECT c.relname AS table, t.tgname AS name,
           CASE WHEN t.tgtype & 64 <> 0 THEN 'INSTEAD OF' WHEN t.tgtype & 2 <> 0 THEN 'BEFORE' ELSE 'AFTER' END
             || CASE WHEN t.tgtype & 1 <> 0 THEN ' ROW' ELSE ' STATEMENT' END AS when,
           e.event
      FROM pg_trigger t
      JOIN pg_class c ON c.oid = t.tgrelid AND c.relnamespace = 'public'::regnamespace
      JOIN (VALUES (4, 'INSERT'), (16, 'UPDATE'), (8, 'DELETE'), (32, 'TRUNCATE')) AS e(bit, event)
        ON t.tgtype & e.bit <> 0
     WHERE NOT t.tgisinternal
     ORDER BY c.relname, t.tgname COLLATE "C"`.execute(db);
  const all: Nested = {};
  for (const row of rows) listIn(all, row.table, `${row.when} ${row.event}`).push(row.name);
  const shared: Nested = {};
  for (const [table, events] of Object.entries(all)) {
    for (const [event, names] of Object.entries(events)) {
      if (names.length > 1) listIn(shared, table, event).push(...names);
    }
  }
  return shared;
}

type Nested = Record<string, Record<string, string[]>>;

/** The list at `outer`, `inner` of `nested`, made empty where there is none yet. */
function listIn(nested: Nested, outer: string, inner: string): string[] {
  const level = nested[outer] ?? {};
  nested[outer] = level;
  const list = level[inner] ?? [];
  level[inner] = list;
  return list;
}

describe('the order triggers fire in', () => {
  it('is the intended one wherever two or more fire on one event', async () => {
    expect(await firing()).toEqual(intended);
  });

  it('is explained in docs/scheduler/schema.md for each of those, and trigger by trigger where it decides something', async () => {
    // Per table and timing: the triggers that share an event with another, in firing order.
    const sharing: Nested = {};
    for (const [table, events] of Object.entries(await firing())) {
      for (const [event, names] of Object.entries(events)) {
        const list = listIn(sharing, table, event.slice(0, event.lastIndexOf(' ')));
        list.push(...names.filter((name) => !list.includes(name)));
        list.sort();
      }
    }
    const explained = Object.fromEntries(
      Object.entries(triggerOrder).map(([table, groups]) => [
        table,
        Object.fromEntries(
          Object.entries(groups).map(([group, shared]) => [
            group,
            shared.steps ? Object.keys(shared.steps) : (sharing[table]?.[group] ?? 'no two share an event'),
          ]),
        ),
      ]),
    );
    expect(explained).toEqual(sharing);
  });
});

describe('the first trigger to refuse a row names the refusal', () => {
  interface World {
    tenant: string;
    alice: string;
    bob: string;
    role: string;
    event: string;
    shift: string;
    slot: string;
  }
  let w: World;

  const seat = (user: string) =>
    sql`INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
        VALUES (${w.tenant}, ${randomUUID()}, ${w.shift}, ${w.slot}, ${user}, 'assign',
                '2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z')
        RETURNING id`.execute(db);
  const timeOff = (user: string, startsAt: string, endsAt: string, status: 'requested' | 'approved') =>
    sql`INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at, status, decided_at)
        VALUES (${w.tenant}, ${randomUUID()}, ${user}, ${startsAt}, ${endsAt}, ${status},
                CASE WHEN ${status} = 'approved' THEN now() END)`.execute(db);
  const deactivate = (user: string) =>
    sql`UPDATE users SET active = false WHERE tenant_id = ${w.tenant} AND id = ${user}`.execute(db);
  const awayOnTheShift = (user: string) =>
    timeOff(user, '2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z', 'approved');

  beforeEach(async () => {
    w = {
      tenant: randomUUID(),
      alice: randomUUID(),
      bob: randomUUID(),
      role: randomUUID(),
      event: randomUUID(),
      shift: randomUUID(),
      slot: randomUUID(),
    };
    await sql`INSERT INTO tenants (id, vapid_public_key, vapid_private_key) VALUES (${w.tenant}, 'p', 'k')`.execute(
      db,
    );
    for (const user of [w.alice, w.bob]) {
      await sql`INSERT INTO users (tenant_id, id, role) VALUES (${w.tenant}, ${user}, 'employee')`.execute(
        db,
      );
    }
    await sql`INSERT INTO roles (tenant_id, id, name) VALUES (${w.tenant}, ${w.role}, 'Cook')`.execute(db);
    await sql`INSERT INTO events (tenant_id, id, name, starts_at, ends_at)
              VALUES (${w.tenant}, ${w.event}, 'E', '2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z')`.execute(
      db,
    );
    await sql`INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at)
              VALUES (${w.tenant}, ${w.shift}, ${w.event}, 'S', '2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z')`.execute(
      db,
    );
    await sql`INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity)
              VALUES (${w.tenant}, ${w.slot}, ${w.shift}, ${w.role}, 2)`.execute(db);
  });

  it('a seat for someone away and deactivated: away (time off before the active user)', async () => {
    await awayOnTheShift(w.alice);
    await deactivate(w.alice);
    expect(await refusal(seat(w.alice))).toEqual({ code: '23514', constraint: 'shift_assignments_time_off' });
  });

  it('a seat moved to someone without the slot’s role: deactivated, or away, before unqualified', async () => {
    const { rows } = await seat(w.bob);
    const seatId = (rows[0] as { id: string }).id;
    const move = () =>
      sql`UPDATE shift_assignments SET user_id = ${w.alice} WHERE tenant_id = ${w.tenant} AND id = ${seatId}`.execute(
        db,
      );
    // Neither held by anything but the role: the last trigger refuses it.
    expect(await refusal(move())).toEqual({ code: '23514', constraint: 'shift_assignments_user_qualified' });
    await deactivate(w.alice);
    expect(await refusal(move())).toEqual({ code: '23514', constraint: 'shift_assignments_user_active' });
    await awayOnTheShift(w.alice);
    expect(await refusal(move())).toEqual({ code: '23514', constraint: 'shift_assignments_time_off' });
  });

  it(`approved time off overlapping a seat, with ${MAX_OPEN_TIME_OFF} open already: over the cap before overlapping`, async () => {
    await seat(w.alice);
    await sql`INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at)
              SELECT ${w.tenant}, gen_random_uuid(), ${w.alice},
                     timestamptz '2040-01-01T00:00:00Z' + make_interval(days => n),
                     timestamptz '2040-01-01T00:00:00Z' + make_interval(days => n, hours => 1)
                FROM generate_series(1, ${MAX_OPEN_TIME_OFF - 1}::integer) AS n`.execute(db);
    // Under the cap, the second trigger refuses it.
    expect(await refusal(awayOnTheShift(w.alice))).toEqual({
      code: '23514',
      constraint: 'time_off_overlaps_assignments',
    });
    await timeOff(w.alice, '2041-01-01T00:00:00Z', '2041-01-02T00:00:00Z', 'requested');
    expect(await refusal(awayOnTheShift(w.alice))).toEqual({
      code: '23514',
      constraint: 'time_off_open_per_user',
    });
  });
});
