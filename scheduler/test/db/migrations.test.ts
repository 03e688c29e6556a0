import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';

/**
 * A data folder written by an earlier release upgrades in place: each migration is run
 * on a database that holds rows of the schema before it.
 */
let handle: DatabaseHandle;
const cleanups: (() => Promise<void>)[] = [];

/** An empty database of its own (on PostgreSQL a database created for it, dropped after). */
async function emptyDatabase(): Promise<DatabaseHandle> {
  if (inject('testDb') !== 'postgres') {
    const opened = await openDatabase({});
    cleanups.push(() => opened.close());
    return opened;
  }
  const name = `sched_m_${randomBytes(6).toString('hex')}`;
  const adminUrl = inject('pgAdminUrl');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const opened = await openDatabase({ url: url.toString(), poolSize: 2 });
  cleanups.push(async () => {
    await opened.close();
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await cleanup.end();
  });
  return opened;
}

beforeAll(async () => {
  handle = await emptyDatabase();
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * Each test opens an empty database and takes it through the migrations: its time grows
 * with their number. 5 s a migration is room for a loaded machine (the default 30 s was
 * nearly used up by one such test there).
 */
const THROUGH_THE_MIGRATIONS = { timeout: Object.keys(migrations).length * 5_000 };

describe('each migration on a database written under the one before', THROUGH_THE_MIGRATIONS, () => {
  it('0002 keeps what the status columns said and recounts filled_count; 0003 books earlier minutes into the ledger', async () => {
    const migrator = new Migrator({ db: handle.owner, provider: { getMigrations: async () => migrations } });
    const first = await migrator.migrateTo('0001_schema');
    expect(first.error).toBeUndefined();
    const db = handle.owner;
    const [tenant, user, role, draftEvent, liveEvent, shift, slot] = Array.from({ length: 7 }, () =>
      randomUUID(),
    );
    await sql`INSERT INTO tenants (id, vapid_public_key, vapid_private_key) VALUES (${tenant}, 'p', 'k')`.execute(
      db,
    );
    await sql`INSERT INTO users (tenant_id, id, role) VALUES (${tenant}, ${user}, 'employee')`.execute(db);
    await sql`INSERT INTO roles (tenant_id, id, name) VALUES (${tenant}, ${role}, 'Cook')`.execute(db);
    await sql`INSERT INTO events (tenant_id, id, name, starts_at, ends_at, status, created_at) VALUES
      (${tenant}, ${draftEvent}, 'Draft', '2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z', 'draft', '2029-06-01T00:00:00Z'),
      (${tenant}, ${liveEvent}, 'Live', '2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z', 'published', '2029-06-01T00:00:00Z')`.execute(
      db,
    );
    await sql`INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at, status, published_at) VALUES
      (${tenant}, ${shift}, ${liveEvent}, 'S', '2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z', 'filled', '2029-07-01T00:00:00Z')`.execute(
      db,
    );
    // Under 0001 the counter could drift: it says 0 while one assignment exists.
    await sql`INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity) VALUES (${tenant}, ${slot}, ${shift}, ${role}, 1)`.execute(
      db,
    );
    await sql`INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
      VALUES (${tenant}, ${randomUUID()}, ${shift}, ${slot}, ${user}, 'claim', '2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z')`.execute(
      db,
    );

    expect((await migrator.migrateTo('0002_scheduling_rules')).error).toBeUndefined();

    const events = await sql<{ name: string; published_at: string | null }>`
      SELECT name, published_at FROM events WHERE tenant_id = ${tenant} ORDER BY name`.execute(db);
    expect(events.rows).toEqual([
      { name: 'Draft', published_at: null },
      { name: 'Live', published_at: '2029-06-01T00:00:00.000Z' },
    ]);
    const shifts = await sql<{
      published_at: string;
    }>`SELECT published_at FROM shifts WHERE id = ${shift}`.execute(db);
    expect(shifts.rows).toEqual([{ published_at: '2029-07-01T00:00:00.000Z' }]);
    const slots = await sql<{
      filled_count: number;
    }>`SELECT filled_count FROM shift_slots WHERE id = ${slot}`.execute(db);
    expect(slots.rows).toEqual([{ filled_count: 1 }]);
    const overfill =
      sql`INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
      VALUES (${tenant}, ${randomUUID()}, ${shift}, ${slot}, ${user}, 'claim', '2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z')`.execute(
        db,
      );
    await expect(overfill).rejects.toMatchObject({ code: expect.stringMatching(/^23/) });

    // 0003_overtime_ledger: minutes recorded before the ledger existed, and a stored
    // balance that drifted from them, become ledger rows and a recomputed balance.
    const assignment = (
      await sql<{ id: string }>`SELECT id FROM shift_assignments WHERE slot_id = ${slot}`.execute(db)
    ).rows[0]?.id;
    await sql`INSERT INTO time_entries (tenant_id, id, shift_assignment_id, user_id, started_at, ended_at,
        worked_minutes, scheduled_minutes, overtime_minutes, created_at)
      VALUES (${tenant}, ${randomUUID()}, ${assignment}, ${user}, '2030-01-01T10:00:00Z', '2030-01-01T13:30:00Z',
        210, 120, 90, '2030-01-02T00:00:00Z')`.execute(db);
    await sql`INSERT INTO payouts (tenant_id, id, user_id, minutes, created_at)
      VALUES (${tenant}, ${randomUUID()}, ${user}, 60, '2030-01-03T00:00:00Z')`.execute(db);
    await sql`INSERT INTO overtime_balances (tenant_id, user_id, balance_minutes) VALUES (${tenant}, ${user}, 999)`.execute(
      db,
    );
    // 0013_length_checks: a shift longer than 7 days, written before shifts were bounded.
    const ages = randomUUID();
    await sql`INSERT INTO events (tenant_id, id, name, starts_at, ends_at) VALUES
      (${tenant}, ${ages}, 'Ages', '2000-01-01T00:00:00Z', '6000-01-01T00:00:00Z')`.execute(db);
    await sql`INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at) VALUES
      (${tenant}, ${ages}, ${ages}, 'Watch', '2000-01-01T00:00:00Z', '6000-01-01T00:00:00Z')`.execute(db);

    expect(await migrateToLatest(db)).toEqual(Object.keys(migrations).slice(2));

    // The long shift stays; written again, it is checked.
    const long = await sql`SELECT name FROM shifts WHERE id = ${ages}`.execute(db);
    expect(long.rows).toEqual([{ name: 'Watch' }]);
    await expect(
      sql`UPDATE shifts SET name = 'Watch 2' WHERE id = ${ages}`.execute(db),
    ).rejects.toMatchObject({ code: '23514', constraint: 'shifts_at_most_7_days' });

    const ledger = await sql<{ kind: string; delta_minutes: number }>`
      SELECT kind, delta_minutes FROM overtime_ledger WHERE tenant_id = ${tenant} ORDER BY seq`.execute(db);
    expect(ledger.rows).toEqual([
      { kind: 'entry', delta_minutes: 90 },
      { kind: 'payout', delta_minutes: -60 },
    ]);
    const balances = await sql<{ balance_minutes: number; updated_at: string }>`
      SELECT balance_minutes, updated_at FROM overtime_balances WHERE tenant_id = ${tenant}`.execute(db);
    expect(balances.rows).toEqual([{ balance_minutes: 30, updated_at: '2030-01-03T00:00:00.000Z' }]);
    const drift = sql`UPDATE overtime_balances SET balance_minutes = 999 WHERE tenant_id = ${tenant}`.execute(
      db,
    );
    await expect(drift).rejects.toMatchObject({ code: '23514' });
  });

  it('0019 gives the open deliveries of each webhook one job of the hook, due now', async () => {
    const db = (await emptyDatabase()).owner;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('0018_webhooks')).error).toBeUndefined();
    const [tenant, hook, quiet] = [randomUUID(), randomUUID(), randomUUID()];
    await sql`INSERT INTO tenants (id, vapid_public_key, vapid_private_key) VALUES (${tenant}, 'p', 'k')`.execute(
      db,
    );
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    for (const id of [hook, quiet]) {
      await sql`INSERT INTO webhooks (tenant_id, id, url, events, secret)
        VALUES (${tenant}, ${id}, 'https://hooks.example.org/', ARRAY['form.submitted'], ${secret})`.execute(
        db,
      );
    }
    // Deliveries of 0018, each with its own job: one delivered, one failed and waiting, one pending.
    const deliveries: [hookId: string, seq: number, status: string, job: string][] = [
      [hook, 1, 'delivered', 'done'],
      [hook, 2, 'failed', 'pending'],
      [hook, 3, 'pending', 'pending'],
      [quiet, 1, 'delivered', 'done'],
    ];
    for (const [hookId, seq, status, job] of deliveries) {
      const id = randomUUID();
      await sql`INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, seq, event_type, payload, status, delivered_at)
        VALUES (${tenant}, ${id}, ${hookId}, ${seq}, 'form.submitted', '{}', ${status},
                CASE WHEN ${status} = 'delivered' THEN now() END)`.execute(db);
      await sql`INSERT INTO jobs (tenant_id, id, kind, key, payload, max_attempts, status, finished_at, run_at)
        VALUES (${tenant}, ${randomUUID()}, 'webhook', ${id.replaceAll('-', '')},
                jsonb_build_object('delivery_id', ${id.replaceAll('-', '')}::text), 12, ${job},
                CASE WHEN ${job} = 'done' THEN now() END, now() + interval '1 hour')`.execute(db);
    }
    expect((await migrator.migrateTo('0019_job_wakeups')).error).toBeUndefined();
    const { rows } = await sql<{ key: string; status: string; payload: unknown; due: boolean }>`
      SELECT key, status, payload, run_at <= now() AS due FROM jobs WHERE tenant_id = ${tenant}
       ORDER BY status, key`.execute(db);
    const hex = hook.replaceAll('-', '');
    // The finished jobs stay for the admins' list; the pending ones became one job of the hook.
    expect(rows.filter((r) => r.status === 'done')).toHaveLength(2);
    expect(rows.filter((r) => r.status === 'pending')).toEqual([
      { key: `hook:${hex}`, status: 'pending', payload: { webhook_id: hex }, due: true },
    ]);
  });

  it('0020 settles overlapping time off, keeping what approval blocked; 0021 keeps offers past their seat', async () => {
    const db = (await emptyDatabase()).owner;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('0018_webhooks')).error).toBeUndefined();
    const [tenant, alice, bob] = [randomUUID(), randomUUID(), randomUUID()];
    await sql`INSERT INTO tenants (id, vapid_public_key, vapid_private_key) VALUES (${tenant}, 'p', 'k')`.execute(
      db,
    );
    for (const user of [alice, bob]) {
      await sql`INSERT INTO users (tenant_id, id, role) VALUES (${tenant}, ${user}, 'employee')`.execute(db);
    }
    const rows: [name: string, user: string, status: string, starts: string, ends: string][] = [
      ['holiday', alice, 'approved', '2030-01-01', '2030-01-10'],
      ['reaching past it', alice, 'approved', '2030-01-05', '2030-01-15'],
      ['inside it', alice, 'approved', '2030-01-02', '2030-01-04'],
      ['over an approved one', alice, 'requested', '2030-01-12', '2030-01-13'],
      ['first request', alice, 'requested', '2030-02-01', '2030-02-10'],
      ['same days again', alice, 'requested', '2030-02-05', '2030-02-06'],
      ['touching it', alice, 'requested', '2030-02-10', '2030-02-11'],
      ['declined', alice, 'rejected', '2030-02-01', '2030-02-10'],
      ['a colleague', bob, 'requested', '2030-01-01', '2030-01-10'],
    ];
    const ids = new Map<string, string>();
    for (const [i, [name, user, status, starts, ends]] of rows.entries()) {
      const id = randomUUID();
      ids.set(name, id);
      await sql`INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at, reason, status, decided_at, created_at)
        VALUES (${tenant}, ${id}, ${user}, ${starts}::timestamptz, ${ends}::timestamptz, ${name}, ${status},
                CASE WHEN ${status} = 'requested' THEN NULL ELSE now() END,
                timestamptz '2029-06-01T00:00:00Z' + make_interval(mins => ${i}))`.execute(db);
    }

    // Offers of 0017: a swap's approved one and a live one, of one seat.
    const [role, event, shift, slot, seat] = Array.from({ length: 5 }, () => randomUUID());
    await sql`INSERT INTO roles (tenant_id, id, name) VALUES (${tenant}, ${role}, 'Cook')`.execute(db);
    await sql`INSERT INTO events (tenant_id, id, name, starts_at, ends_at)
      VALUES (${tenant}, ${event}, 'E', '2030-03-01T00:00:00Z', '2030-03-02T00:00:00Z')`.execute(db);
    await sql`INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at)
      VALUES (${tenant}, ${shift}, ${event}, 'S', '2030-03-01T10:00:00Z', '2030-03-01T12:00:00Z')`.execute(
      db,
    );
    await sql`INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity)
      VALUES (${tenant}, ${slot}, ${shift}, ${role}, 1)`.execute(db);
    await sql`INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, starts_at, ends_at)
      VALUES (${tenant}, ${seat}, ${shift}, ${slot}, ${bob}, 'claim', '2030-03-01T10:00:00Z', '2030-03-01T12:00:00Z')`.execute(
      db,
    );
    const [swap, live] = [randomUUID(), randomUUID()];
    await sql`INSERT INTO offers (tenant_id, id, assignment_id, shift_id, from_user_id, status, accepted_by, decided_at, expires_at)
      VALUES (${tenant}, ${swap}, ${seat}, ${shift}, ${alice}, 'approved', ${bob}, now(), '2030-03-01T10:00:00Z'),
             (${tenant}, ${live}, ${seat}, ${shift}, ${bob}, 'open', NULL, NULL, '2030-03-01T10:00:00Z')`.execute(
      db,
    );

    expect((await migrator.migrateTo('0020_time_off_bounds')).error).toBeUndefined();

    const after = await sql<{ reason: string; status: string; starts_at: string; ends_at: string }>`
      SELECT reason, status, starts_at, ends_at FROM time_off WHERE tenant_id = ${tenant}
       ORDER BY created_at`.execute(db);
    const day = (d: string) => `${d}T00:00:00.000Z`;
    expect(after.rows.map((r) => [r.reason, r.status, r.starts_at, r.ends_at])).toEqual([
      ['holiday', 'approved', day('2030-01-01'), day('2030-01-10')],
      ['reaching past it', 'approved', day('2030-01-10'), day('2030-01-15')],
      ['over an approved one', 'rejected', day('2030-01-12'), day('2030-01-13')],
      ['first request', 'requested', day('2030-02-01'), day('2030-02-10')],
      ['same days again', 'rejected', day('2030-02-05'), day('2030-02-06')],
      ['touching it', 'requested', day('2030-02-10'), day('2030-02-11')],
      ['declined', 'rejected', day('2030-02-01'), day('2030-02-10')],
      ['a colleague', 'requested', day('2030-01-01'), day('2030-01-10')],
    ]);
    // Settled without an actor, each change in the audit log.
    const log = await sql<{ action: string; target_id: string; actor_user_id: string | null }>`
      SELECT action, target_id, actor_user_id FROM audit_log
       WHERE tenant_id = ${tenant} AND target_type = 'time_off' AND action <> 'time_off.created' ORDER BY seq`.execute(
      db,
    );
    const hex = (name: string) => ids.get(name)?.replaceAll('-', '');
    expect(log.rows).toEqual([
      { action: 'time_off.deleted', target_id: hex('inside it'), actor_user_id: null },
      { action: 'time_off.updated', target_id: hex('reaching past it'), actor_user_id: null },
      { action: 'time_off.updated', target_id: hex('over an approved one'), actor_user_id: null },
      { action: 'time_off.updated', target_id: hex('same days again'), actor_user_id: null },
    ]);
    // From now on the database refuses the overlap.
    const again = sql`INSERT INTO time_off (tenant_id, id, user_id, starts_at, ends_at)
      VALUES (${tenant}, ${randomUUID()}, ${alice}, '2030-02-09T00:00:00Z', '2030-02-12T00:00:00Z')`.execute(
      db,
    );
    await expect(again).rejects.toMatchObject({ code: '23P01', constraint: 'time_off_no_overlap' });

    expect((await migrator.migrateTo('0021_offers_outlive_seats')).error).toBeUndefined();
    const removeSeat = () => sql`DELETE FROM shift_assignments WHERE id = ${seat}`.execute(db);
    // The live offer is settled before its seat goes; the swap's record outlives it.
    await expect(removeSeat()).rejects.toMatchObject({ code: '23514', constraint: 'offers_live_has_seat' });
    await sql`UPDATE offers SET status = 'cancelled', decided_at = now() WHERE id = ${live}`.execute(db);
    await removeSeat();
    const offers = await sql<{ id: string; status: string; assignment_id: string | null }>`
      SELECT id, status, assignment_id FROM offers WHERE tenant_id = ${tenant} ORDER BY status`.execute(db);
    expect(offers.rows).toEqual([
      { id: swap.replaceAll('-', ''), status: 'approved', assignment_id: null },
      { id: live.replaceAll('-', ''), status: 'cancelled', assignment_id: null },
    ]);
  });
});
