/**
 * bench/tenant-export: GET /api/v1/tenant/export of a tenant with 10,000 shifts (each with
 * a slot and an assignment, 30,000 rows besides the audit of none: laid down as the owner),
 * against a baseline of 1,000 shifts in the same run. Each size runs in a process of its
 * own, on an embedded database in memory, and downloads the archive over real HTTP,
 * counting its bytes without keeping them. Printed per size: the time from request to the
 * last byte, the archive's size, the process's resident memory before the request and its
 * peak during it (sampled every 20 ms); then the ratios large/baseline. Bounded memory
 * shows as a growth ratio near 1 where the rows grew tenfold; the time is the issue's
 * bound (under a minute for 10,000 shifts).
 *
 *   npm run bench:tenant-export      (SHIFTS=10000 BASELINE=1000 to change)
 */
import { execFile } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { buildApp } from '../../scheduler/src/app.ts';
import { createVerifier } from '../../scheduler/src/auth/verifier.ts';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { AUDIENCE, canonicalId, createSigner, ISSUER, insertTenant } from '../support/setup.ts';

interface Measure {
  shifts: number;
  rows: number;
  seconds: number;
  bytes: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
}

const MiB = 1024 * 1024;

/** One size, in this process: seed, export over HTTP, print the measure as JSON. */
async function measure(shifts: number): Promise<Measure> {
  const database = await openDatabase({});
  await migrateToLatest(database.owner);
  const signer = await createSigner();
  const tenant = canonicalId();
  const admin = canonicalId();
  await insertTenant(database.owner, tenant.id);
  const users = 100;
  await sql`SET session_replication_role = replica`.execute(database.owner);
  await sql`
    INSERT INTO users (tenant_id, id, role, display_name)
    SELECT ${tenant.id}, gen_random_uuid(), 'employee', 'Person ' || i FROM generate_series(1, ${users}::int) i`.execute(
    database.owner,
  );
  await sql`INSERT INTO roles (tenant_id, id, name) VALUES (${tenant.id}, gen_random_uuid(), 'Bar')`.execute(
    database.owner,
  );
  await sql`
    INSERT INTO events (tenant_id, id, name, starts_at, ends_at)
    VALUES (${tenant.id}, gen_random_uuid(), 'Season', '2030-01-01Z', '2031-01-01Z')`.execute(database.owner);
  await sql`
    INSERT INTO shifts (tenant_id, id, event_id, name, starts_at, ends_at, published_at)
    SELECT ${tenant.id}, gen_random_uuid(), e.id, 'Shift ' || i,
           '2030-01-02Z'::timestamptz + i * interval '30 minutes',
           '2030-01-02Z'::timestamptz + i * interval '30 minutes' + interval '1 hour', now()
      FROM events e, generate_series(1, ${shifts}::int) i WHERE e.tenant_id = ${tenant.id}`.execute(
    database.owner,
  );
  await sql`
    INSERT INTO shift_slots (tenant_id, id, shift_id, role_id, capacity, filled_count)
    SELECT s.tenant_id, gen_random_uuid(), s.id, r.id, 1, 1
      FROM shifts s JOIN roles r ON r.tenant_id = s.tenant_id WHERE s.tenant_id = ${tenant.id}`.execute(
    database.owner,
  );
  await sql`
    INSERT INTO shift_assignments (tenant_id, id, shift_id, slot_id, user_id, starts_at, ends_at, source)
    SELECT s.tenant_id, gen_random_uuid(), s.id, sl.id, u.id, s.starts_at, s.ends_at, 'assign'
      FROM (SELECT s.*, row_number() OVER (ORDER BY s.starts_at) AS n FROM shifts s WHERE s.tenant_id = ${tenant.id}) s
      JOIN shift_slots sl ON sl.tenant_id = s.tenant_id AND sl.shift_id = s.id
      JOIN (SELECT u.id, row_number() OVER (ORDER BY u.id) - 1 AS k FROM users u WHERE u.tenant_id = ${tenant.id}) u
        ON u.k = s.n % ${users}`.execute(database.owner);
  await sql`RESET session_replication_role`.execute(database.owner);
  const verifier = createVerifier({
    issuer: ISSUER,
    audience: AUDIENCE,
    publicKey: createPublicKey(signer.publicKeyPem),
  });
  const app = await buildApp({ db: database.db, verifier, jobs: { concurrency: 0 } });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const token = await signer.sign({ tenant: tenant.claim, subject: admin.claim, role: 'admin' });
  // Provisioning and a warm route first, outside the measure.
  await fetch(`${address}/api/v1/tenant/settings`, { headers: { authorization: `Bearer ${token}` } });
  const { rows } = await sql<{ n: number }>`
    SELECT ((SELECT count(*) FROM shifts) + (SELECT count(*) FROM shift_slots)
          + (SELECT count(*) FROM shift_assignments) + (SELECT count(*) FROM users))::int AS n`.execute(
    database.owner,
  );
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const started = performance.now();
  const response = await fetch(`${address}/api/v1/tenant/export`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.status !== 200 || !response.body) throw new Error(`export answered ${response.status}`);
  let bytes = 0;
  const reader = response.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) bytes += read.value.length;
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  await app.close();
  await database.close();
  return {
    shifts,
    rows: rows[0]?.n ?? 0,
    seconds,
    bytes,
    rssBeforeMiB: rssBefore / MiB,
    rssPeakMiB: peak / MiB,
  };
}

async function main(): Promise<void> {
  const only = process.argv[2];
  if (only) {
    process.stdout.write(`${JSON.stringify(await measure(Number(only)))}\n`);
    return;
  }
  const run = promisify(execFile);
  const sizes = [Number(process.env.BASELINE ?? 1000), Number(process.env.SHIFTS ?? 10_000)];
  const results: Measure[] = [];
  for (const shifts of sizes) {
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', import.meta.filename, String(shifts)],
      {
        maxBuffer: MiB,
      },
    );
    results.push(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Measure);
  }
  console.log('| shifts | rows | seconds | archive KiB | RSS before MiB | RSS peak MiB | growth MiB |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.shifts} | ${r.rows} | ${r.seconds.toFixed(2)} | ${(r.bytes / 1024).toFixed(0)} | ${r.rssBeforeMiB.toFixed(0)} | ${r.rssPeakMiB.toFixed(0)} | ${(r.rssPeakMiB - r.rssBeforeMiB).toFixed(1)} |`,
    );
  }
  const [base, large] = results as [Measure, Measure];
  const growth = (r: Measure) => Math.max(r.rssPeakMiB - r.rssBeforeMiB, 0.1);
  console.log(
    `rows ${(large.rows / base.rows).toFixed(1)}x, time ${(large.seconds / base.seconds).toFixed(1)}x, peak RSS ${(large.rssPeakMiB / base.rssPeakMiB).toFixed(2)}x, RSS growth during the export ${(growth(large) / growth(base)).toFixed(2)}x`,
  );
  console.log(
    `10,000-shift export under a minute: ${large.seconds < 60 ? 'yes' : 'NO'} (${large.seconds.toFixed(1)} s)`,
  );
}

await main();
