/**
 * bench/time-entries: POST /api/v1/time-tracking/entries, 10,000 entries (500 employees,
 * 20 assignments each) recorded by an admin over 32 connections, on a throwaway
 * PostgreSQL 15 cluster, against a floor measured in the same run: a bare Fastify route
 * that verifies the same JWT with jose and does the same database work with pg (the
 * tenant's time-tracking switch, the assignment, the INSERT ... ON CONFLICT DO NOTHING
 * whose triggers write the ledger row and move the balance).
 *
 * Ledger rows are append-only and the entries they name cannot be deleted, so a schedule
 * cannot be emptied between runs: every run gets its own database, a copy of one seeded
 * template (CREATE DATABASE ... TEMPLATE), and every measured request creates an entry.
 * A second, smaller tenant in the same template takes the warm-up. After each run the
 * run checks that exactly 10,000 entries and 10,000 credits exist, that every balance
 * equals the sum of its ledger, and that each employee's balance is the overtime the
 * posts add up to.
 *
 *   npm run bench:time-entries     (CONNECTIONS=32 ROUNDS=5 POOL_SIZE=10 WARMUP_USERS=100 to change)
 */
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { type Db, openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { cpuSeconds, median, startServer, stopServer } from '../support/harness.ts';
import { canonicalId, createSigner, insertRows, insertTenant, serverEnv } from '../support/setup.ts';

const connections = Number(process.env.CONNECTIONS ?? 32);
const rounds = Number(process.env.ROUNDS ?? 5);
const employees = 500;
const assignmentsPerEmployee = 20;
const entryCount = employees * assignmentsPerEmployee;
const warmupEmployees = Number(process.env.WARMUP_USERS ?? 100);
const path = '/api/v1/time-tracking/entries';

interface Post {
  body: string;
  userId: string;
  overtime: number;
}

interface SeededTenant {
  id: string;
  token: string;
  posts: Post[];
  /** Expected balance per employee once every post is recorded. */
  balances: Map<string, number>;
}

interface Run {
  rps: number;
  p99: number;
  cpuMicros: number;
  /** Transactions the database committed per request over the whole run (warm-up included). */
  xactsPerRequest: number;
}

/** The cluster's URL with another database. */
function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * One tenant with time tracking on, an admin, `count` employees and 20 shifts (one a day,
 * 08:00 to 16:00 UTC) each with a slot holding every employee: 20 assignments per
 * employee that never overlap. Laid down with INSERT ... SELECT, so the database's own
 * keys, counters and exclusion constraint check the data as they would the API's.
 */
async function seedTenant(
  db: Db,
  count: number,
  sign: (tenant: string, subject: string) => Promise<string>,
): Promise<SeededTenant> {
  const tenant = canonicalId();
  await insertTenant(db, tenant.id);
  await db
    .updateTable('tenant_settings')
    .set({ time_tracking_enabled: true, timezone: 'UTC' })
    .where('tenant_id', '=', tenant.id)
    .execute();
  const admin = canonicalId();
  const staff = Array.from({ length: count }, () => canonicalId());
  await insertRows(db, 'users', [
    { tenant_id: tenant.id, id: admin.id, role: 'admin' as const },
    ...staff.map((user) => ({ tenant_id: tenant.id, id: user.id, role: 'employee' as const })),
  ]);
  const role = canonicalId().id;
  await db.insertInto('roles').values({ tenant_id: tenant.id, id: role, name: 'Steward' }).execute();
  const event = canonicalId().id;
  await db
    .insertInto('events')
    .values({
      tenant_id: tenant.id,
      id: event,
      name: 'Season',
      // Past shifts: time is recorded once a shift has ended (migration 0023), as in use.
      starts_at: '2021-01-01T00:00:00Z',
      ends_at: '2021-02-01T00:00:00Z',
      published_at: new Date().toISOString(),
    })
    .execute();
  await sql`
    INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at, published_at)
    SELECT ${tenant.id}::uuid, gen_random_uuid(), ${event}::uuid, 'Day ' || (d + 1),
           timestamptz '2021-01-01 08:00Z' + d * interval '1 day',
           timestamptz '2021-01-01 16:00Z' + d * interval '1 day', now()
      FROM generate_series(0, ${assignmentsPerEmployee - 1}::int) AS d`.execute(db);
  await sql`
    INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity)
    SELECT tenant_id, gen_random_uuid(), id, ${role}::uuid, ${count}::int
      FROM shifts WHERE tenant_id = ${tenant.id}::uuid`.execute(db);
  await sql`
    INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, source, assigned_by, starts_at, ends_at)
    SELECT s.tenant_id, gen_random_uuid(), s.id, sl.id, u.id, 'assign', ${admin.id}::uuid, s.starts_at, s.ends_at
      FROM shifts s
      JOIN shift_slots sl ON sl.tenant_id = s.tenant_id AND sl.shift_id = s.id
      JOIN users u ON u.tenant_id = s.tenant_id AND u.role = 'employee'
     WHERE s.tenant_id = ${tenant.id}::uuid`.execute(db);
  // Day by day, employee by employee: consecutive posts are for different employees, as
  // when an admin records a day's shifts, so concurrent posts do not queue on one balance.
  const assignments = await sql<{ id: string; user_id: string; starts_at: string; ends_at: string }>`
    SELECT id, user_id, starts_at, ends_at FROM shift_assignments
     WHERE tenant_id = ${tenant.id}::uuid ORDER BY starts_at, user_id`.execute(db);
  if (assignments.rows.length !== count * assignmentsPerEmployee)
    throw new Error(`seeded ${assignments.rows.length} assignments, not ${count * assignmentsPerEmployee}`);

  const balances = new Map<string, number>();
  const posts = assignments.rows.map((assignment, i): Post => {
    const startsAt = Date.parse(assignment.starts_at);
    const endsAt = Date.parse(assignment.ends_at);
    // Started up to 15 min early, ended between 20 min early and 40 min late, with odd
    // seconds (a started minute is not a worked one); a 30 or 45 min break, or none sent.
    const startedAt = startsAt - (i % 4) * 5 * 60_000;
    const endedAt = endsAt + (((i * 7) % 13) * 5 - 20) * 60_000 + (i % 60) * 1000;
    const breakMinutes = i % 5 === 0 ? undefined : i % 3 === 0 ? 45 : 30;
    const worked = Math.floor((endedAt - startedAt) / 60_000) - (breakMinutes ?? 0);
    const overtime = worked - Math.floor((endsAt - startsAt) / 60_000);
    balances.set(assignment.user_id, (balances.get(assignment.user_id) ?? 0) + overtime);
    return {
      body: JSON.stringify({
        shift_assignment_id: assignment.id,
        started_at: new Date(startedAt).toISOString(),
        ended_at: new Date(endedAt).toISOString(),
        ...(breakMinutes === undefined ? {} : { break_minutes: breakMinutes }),
      }),
      userId: assignment.user_id,
      overtime,
    };
  });
  return { id: tenant.id, token: await sign(tenant.claim, admin.claim), posts, balances };
}

const cluster = await startPgCluster();
const admin = new pg.Client({ connectionString: cluster.url });
try {
  await admin.connect();
  const template = 'time_entries_seed';
  await admin.query(`CREATE DATABASE ${template}`);
  const signer = await createSigner();
  const sign = (tenant: string, subject: string) => signer.sign({ tenant, subject, role: 'admin' });
  const seeding = await openDatabase({ url: databaseUrl(cluster.url, template), poolSize: 2 });
  await migrateToLatest(seeding.owner);
  const measured = await seedTenant(seeding.owner, employees, sign);
  const warmup = await seedTenant(seeding.owner, warmupEmployees, sign);
  await sql`VACUUM ANALYZE`.execute(seeding.owner);
  await seeding.close();

  /**
   * Sends every post once over `connections` connections, timed to the last answer.
   * Each answer must be `expect` (201: every post creates its entry).
   */
  async function storm(port: number, tenant: SeededTenant, expect: number) {
    let sent = 0;
    const statuses = new Map<number, number>();
    const started = performance.now();
    let finished = started;
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: `http://127.0.0.1:${port}`,
          connections,
          amount: tenant.posts.length,
          requests: [
            {
              method: 'POST',
              path,
              setupRequest: (request) => {
                const post = tenant.posts[sent];
                sent += 1;
                if (!post) throw new Error(`more than ${tenant.posts.length} requests built`);
                return {
                  ...request,
                  headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
                  body: post.body,
                };
              },
            },
          ],
        },
        (error, done) => (error ? reject(error) : resolve(done)),
      );
      instance.on('response', (_client, statusCode) => {
        statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
        finished = performance.now();
      });
    });
    const answered = statuses.get(expect) ?? 0;
    if (result.errors || answered !== tenant.posts.length || sent !== tenant.posts.length) {
      throw new Error(
        `storm: ${result.errors} errors, ${sent} sent, answers ${JSON.stringify([...statuses])}; expected ${tenant.posts.length} × ${expect}`,
      );
    }
    return { seconds: (finished - started) / 1000, p99: result.latency.p99 };
  }

  /** Both servers answer the first post 201 with the overtime the bench expects, a re-post 200. */
  async function probe(port: number, mode: string): Promise<void> {
    const post = warmup.posts[0] as Post;
    for (const expected of [201, 200]) {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${warmup.token}`, 'content-type': 'application/json' },
        body: post.body,
      });
      const entry = (await response.json()) as { overtime_minutes?: number };
      if (response.status !== expected || entry.overtime_minutes !== post.overtime) {
        throw new Error(`${mode} answered ${response.status} ${JSON.stringify(entry)}; expected ${expected}`);
      }
    }
  }

  /** Exactly one entry and one credit per post; every balance its ledger's sum and the posts' overtime. */
  async function verify(url: string, mode: string): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const counts = await client.query<{ entries: number; credits: number; ledger: number; drift: number }>(
        `SELECT
           (SELECT count(*) FROM time_entries WHERE tenant_id = $1)::int AS entries,
           (SELECT count(*) FROM overtime_ledger WHERE tenant_id = $1 AND kind = 'entry')::int AS credits,
           (SELECT count(*) FROM overtime_ledger WHERE tenant_id = $1)::int AS ledger,
           (SELECT count(*) FROM (
              SELECT b.tenant_id, b.user_id, b.balance_minutes, l.total
                FROM overtime_balances b
                FULL JOIN (SELECT tenant_id, user_id, sum(delta_minutes) AS total
                             FROM overtime_ledger GROUP BY tenant_id, user_id) l
                  ON l.tenant_id = b.tenant_id AND l.user_id = b.user_id
               WHERE b.balance_minutes IS DISTINCT FROM l.total) AS off)::int AS drift`,
        [measured.id],
      );
      const { entries, credits, ledger, drift } = counts.rows[0] ?? {
        entries: -1,
        credits: -1,
        ledger: -1,
        drift: -1,
      };
      if (entries !== entryCount || credits !== entryCount || ledger !== entryCount || drift !== 0) {
        throw new Error(
          `${mode}: ${entries} entries, ${credits} credits, ${ledger} ledger rows (expected ${entryCount} each), ${drift} balances off their ledger`,
        );
      }
      const stored = await client.query<{ user_id: string; balance_minutes: string }>(
        'SELECT user_id, balance_minutes FROM overtime_balances WHERE tenant_id = $1',
        [measured.id],
      );
      const wrong = stored.rows.filter(
        (row) => Number(row.balance_minutes) !== measured.balances.get(row.user_id.replaceAll('-', '')),
      );
      if (stored.rows.length !== measured.balances.size || wrong.length > 0) {
        throw new Error(
          `${mode}: ${stored.rows.length} balances (expected ${measured.balances.size}), ${wrong.length} not the posts' overtime`,
        );
      }
    } finally {
      await client.end();
    }
  }

  async function measure(mode: 'app' | 'floor-time-entry', round: number): Promise<Run> {
    const name = `time_entries_${round}_${mode.replaceAll('-', '_')}`;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    const url = databaseUrl(cluster.url, name);
    try {
      const server = await startServer(mode, serverEnv(url, signer));
      let figures: { seconds: number; p99: number };
      let cpu: number;
      try {
        await probe(server.port, mode);
        // Warm-up on the other tenant: JIT, pool connections, the scheduler's memo.
        await storm(server.port, { ...warmup, posts: warmup.posts.slice(1) }, 201);
        const cpuBefore = cpuSeconds(server.child.pid);
        figures = await storm(server.port, measured, 201);
        cpu = cpuSeconds(server.child.pid) - cpuBefore;
      } finally {
        await stopServer(server);
      }
      // Backends flush their statistics as they exit; give the last one a moment.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const stats = await admin.query<{ xacts: string }>(
        'SELECT xact_commit + xact_rollback AS xacts FROM pg_stat_database WHERE datname = $1',
        [name],
      );
      const requests = warmup.posts.length + 1 + entryCount;
      await verify(url, mode);
      return {
        rps: entryCount / figures.seconds,
        p99: figures.p99,
        cpuMicros: (cpu * 1e6) / entryCount,
        xactsPerRequest: Number(stats.rows[0]?.xacts ?? Number.NaN) / requests,
      };
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    }
  }

  const rows: { round: number; floor: Run; app: Run }[] = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate who goes first, so neither always meets the machine as the other left it.
    const appFirst = round % 2 === 0;
    const app0 = appFirst ? await measure('app', round) : undefined;
    const floor = await measure('floor-time-entry', round);
    const app = app0 ?? (await measure('app', round));
    rows.push({ round, floor, app });
    console.log(`round ${round}: floor ${floor.rps.toFixed(0)}/s, scheduler ${app.rps.toFixed(0)}/s`);
  }

  console.log(
    `\nPOST ${path}: ${entryCount} entries (${employees} employees × ${assignmentsPerEmployee}), ${connections} connections, ${rounds} rounds`,
  );
  console.log(
    '| round | floor entries/s | floor p99 ms | floor CPU µs/entry | floor xacts/req | scheduler entries/s | scheduler p99 ms | scheduler CPU µs/entry | scheduler xacts/req | ratio |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { round, floor, app } of rows) {
    console.log(
      `| ${round} | ${floor.rps.toFixed(0)} | ${floor.p99} | ${floor.cpuMicros.toFixed(0)} | ${floor.xactsPerRequest.toFixed(2)} | ${app.rps.toFixed(0)} | ${app.p99} | ${app.cpuMicros.toFixed(0)} | ${app.xactsPerRequest.toFixed(2)} | ${(app.rps / floor.rps).toFixed(2)} |`,
    );
  }
  const ratio = median(rows.map((r) => r.app.rps / r.floor.rps));
  console.log(
    `\nafter every run: exactly ${entryCount} entries and credits, every balance equal to its ledger and to the posts' overtime`,
  );
  console.log(
    `throughput ratio scheduler/floor, median of ${rounds} paired rounds: ${ratio.toFixed(2)} (target >= 0.70)`,
  );
} finally {
  await admin.end().catch(() => {});
  cluster.stop();
}
