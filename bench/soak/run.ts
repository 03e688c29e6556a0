/**
 * bench/soak: the scheduler under a steady mixed workload for a long while, on a
 * throwaway PostgreSQL 15 cluster: reads (roles, shifts, my assignments, notifications),
 * claims and withdrawals, time entries and their corrections, form submissions, and
 * shift renames that notify the people on them. Requests go out at a fixed rate (open
 * loop: a slow answer does not slow the sending), and every minute is reported on its own.
 *
 * The baseline is the run itself after its warm-up minute: each later minute's p99 is
 * printed as a ratio to the first measured minute's, and the server's resident memory at
 * the end as a ratio to its size after warm-up. The run fails (exit 1) on any 5xx or
 * unanswered request, and on memory growth of 10 % or more.
 *
 *   npm run bench:soak     (DURATION_MINUTES=10 RATE=150 to change)
 */
import { readFileSync } from 'node:fs';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { apiClient, startServer, stopServer } from '../support/harness.ts';
import { canonicalId, createSigner, serverEnv } from '../support/setup.ts';

const minutes = Number(process.env.DURATION_MINUTES ?? 10);
const rate = Number(process.env.RATE ?? 150);
const maxInFlight = 512;

interface Sample {
  kind: string;
  status: number;
  ms: number;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const cluster = await startPgCluster();
let failed = false;
try {
  const handle = await openDatabase({ url: cluster.url, poolSize: 2 });
  await migrateToLatest(handle.owner);
  await handle.close();
  const signer = await createSigner();
  const server = await startServer('app', {
    ...serverEnv(cluster.url, signer),
    POOL_SIZE: '10',
    FORM_SUBMIT_LIMIT: '100000000',
  });
  process.on('exit', () => server.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${server.port}`;
  const tenant = canonicalId();
  const token = (subject: string, role: string) => signer.sign({ tenant: tenant.claim, subject, role });

  const { call, must } = apiClient(base);

  // The tenant: 200 employees with the role, 60 days of claimable shifts (5 seats each),
  // 20 shifts of 10 seats each that the admin fills for time entries, a form.
  const admin = await token('soak-admin', 'admin');
  // Time is recorded on the admin's shifts of 2031, before they end (migration 0023).
  await must('PATCH', '/api/v1/tenant/settings', admin, {
    time_tracking_enabled: true,
    notify_on_assignment: true,
    time_entries_before_end: true,
  });
  const role = (await must('POST', '/api/v1/roles', admin, { name: 'Crew' })).id;
  const event = (
    await must('POST', '/api/v1/events', admin, {
      name: 'Season',
      starts_at: '2031-01-01T00:00:00Z',
      ends_at: '2031-12-31T00:00:00Z',
    })
  ).id;
  await must('POST', `/api/v1/events/${event}/publish`, admin);
  const employees: { id: string; token: string }[] = [];
  for (let i = 0; i < 200; i++) {
    const who = canonicalId();
    const bearer = await token(who.claim, 'employee');
    await must('GET', '/api/v1/me/qualifications', bearer);
    await must('POST', `/api/v1/users/${who.id}/qualifications/${role}`, admin);
    employees.push({ id: who.id, token: bearer });
  }
  const shiftOn = async (day: number, capacity: number) => {
    const date = new Date(Date.UTC(2031, 0, 1 + day, 9)).toISOString();
    const ends = new Date(Date.UTC(2031, 0, 1 + day, 17)).toISOString();
    const shift = await must('POST', '/api/v1/shifts', admin, {
      event_id: event,
      name: `Day ${day}`,
      starts_at: date,
      ends_at: ends,
      slots: [{ role_id: role, capacity }],
    });
    await must('POST', `/api/v1/shifts/${shift.id}/publish`, admin);
    const [slot] = await must('GET', `/api/v1/shifts/${shift.id}/slots`, admin);
    return { id: shift.id as string, slot: slot.id as string };
  };
  const claimable: { id: string; slot: string }[] = [];
  for (let day = 0; day < 60; day++) claimable.push(await shiftOn(day, 5));
  const assignments: string[] = [];
  for (let day = 100; day < 120; day++) {
    const shift = await shiftOn(day, 10);
    for (let k = 0; k < 10; k++) {
      const employee = employees[(day - 100) * 10 + k] as { id: string };
      assignments.push(
        (
          await must('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slot}/assign`, admin, {
            user_id: employee.id,
          })
        ).id,
      );
    }
  }
  const form = await must('POST', '/api/v1/forms', admin, {
    title: 'Requests',
    fields: [
      { name: 'contact', label: 'Name', type: 'text', required: true },
      { name: 'notes', label: 'Notes', type: 'textarea' },
    ],
  });
  const customer = await token('soak-customer', 'customer');

  const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;
  const claimed = new Map<string, { shift: string; employee: { token: string } }>();
  let renames = 0;

  /** One request of the mix, chosen at random with these weights. */
  const mix: [number, string, () => Promise<number>][] = [
    [15, 'read roles', async () => (await call('GET', '/api/v1/roles', pick(employees).token)).status],
    [15, 'read shifts', async () => (await call('GET', '/api/v1/shifts', pick(employees).token)).status],
    [
      10,
      'my assignments',
      async () => (await call('GET', '/api/v1/me/assignments', pick(employees).token)).status,
    ],
    [
      10,
      'notifications',
      async () => (await call('GET', '/api/v1/notifications', pick(employees).token)).status,
    ],
    [
      12,
      'claim',
      async () => {
        const employee = pick(employees);
        const shift = pick(claimable);
        const answer = await call(
          'POST',
          `/api/v1/shifts/${shift.id}/slots/${shift.slot}/claim`,
          employee.token,
        );
        if (answer.status === 201) claimed.set(answer.json().id, { shift: shift.id, employee });
        return answer.status;
      },
    ],
    [
      4,
      'withdraw',
      async () => {
        const [id, seat] = [...claimed.entries()][Math.floor(Math.random() * claimed.size)] ?? [];
        if (!id || !seat) return 204;
        claimed.delete(id);
        return (await call('DELETE', `/api/v1/shifts/${seat.shift}/assignments/${id}`, seat.employee.token))
          .status;
      },
    ],
    [
      15,
      'time entry',
      async () =>
        (
          await call('POST', '/api/v1/time-tracking/entries', admin, {
            shift_assignment_id: pick(assignments),
            started_at: '2031-04-11T09:00:00Z',
            ended_at: `2031-04-11T${16 + Math.floor(Math.random() * 3)}:${String(Math.floor(Math.random() * 60)).padStart(2, '0')}:00Z`,
            break_minutes: 30,
          })
        ).status,
    ],
    [
      10,
      'submission',
      async () =>
        (
          await call('POST', `/api/v1/f/${form.slug}/submit`, customer, {
            data: { contact: `Guest ${Math.random()}`, notes: 'Two tables\nnear the stage' },
          })
        ).status,
    ],
    [
      5,
      'rename (notifies)',
      async () =>
        (await call('PATCH', `/api/v1/shifts/${pick(claimable).id}`, admin, { name: `Day, v${++renames}` }))
          .status,
    ],
    [
      4,
      'read all',
      async () => (await call('POST', '/api/v1/notifications/read-all', pick(employees).token)).status,
    ],
  ];
  const totalWeight = mix.reduce((sum, [weight]) => sum + weight, 0);
  const choose = () => {
    let roll = Math.random() * totalWeight;
    for (const entry of mix) {
      roll -= entry[0];
      if (roll < 0) return entry;
    }
    return mix[0] as (typeof mix)[number];
  };

  // The run: one minute of warm-up, then `minutes` measured, each on its own.
  const perMinute: { samples: Sample[]; dropped: number; rss: number }[] = [];
  let inFlight = 0;
  for (let minute = 0; minute <= minutes; minute++) {
    const samples: Sample[] = [];
    let dropped = 0;
    const started = performance.now();
    let sent = 0;
    while (performance.now() - started < 60_000) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate);
      while (sent < due) {
        sent++;
        if (inFlight >= maxInFlight) {
          dropped++;
          continue;
        }
        const [, kind, send] = choose();
        const t0 = performance.now();
        inFlight++;
        send()
          .then(
            (status) => samples.push({ kind, status, ms: performance.now() - t0 }),
            () => samples.push({ kind, status: 0, ms: performance.now() - t0 }),
          )
          .finally(() => {
            inFlight--;
          });
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    perMinute.push({ samples, dropped, rss: rssMiB(server.child.pid) });
  }
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  await stopServer(server);

  const [warmup, ...measured] = perMinute;
  const first = measured[0];
  if (!warmup || !first) throw new Error('no minute measured');
  const p99Of = (samples: Sample[]) =>
    percentile(
      samples.map((s) => s.ms),
      99,
    );
  console.log(
    `\nsoak: ${rate} requests/s for ${minutes} min after 1 min of warm-up, mixed workload, 1 tenant of 200 employees`,
  );
  console.log(
    '| minute | requests | 2xx | 4xx | 5xx | unanswered | p50 ms | p99 ms | p99 / minute 1 | RSS MiB |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  let fivexx = 0;
  let unanswered = 0;
  measured.forEach((row, i) => {
    const count = (test: (status: number) => boolean) => row.samples.filter((s) => test(s.status)).length;
    const five = count((s) => s >= 500);
    const lost = count((s) => s === 0) + row.dropped;
    fivexx += five;
    unanswered += lost;
    console.log(
      `| ${i + 1} | ${row.samples.length} | ${count((s) => s >= 200 && s < 300)} | ${count((s) => s >= 400 && s < 500)} | ${five} | ${lost} | ${percentile(
        row.samples.map((s) => s.ms),
        50,
      ).toFixed(
        1,
      )} | ${p99Of(row.samples).toFixed(1)} | ${(p99Of(row.samples) / p99Of(first.samples)).toFixed(2)} | ${row.rss.toFixed(0)} |`,
    );
  });
  const last = measured.at(-1) ?? first;
  const growth = last.rss / warmup.rss;
  console.log(
    `\nRSS after warm-up ${warmup.rss.toFixed(0)} MiB, at the end ${last.rss.toFixed(0)} MiB: ratio ${growth.toFixed(3)} (target < 1.10)`,
  );
  console.log(`5xx: ${fivexx}, unanswered: ${unanswered} (target 0 and 0)`);
  const kinds = [...new Set(measured.flatMap((m) => m.samples.map((s) => s.kind)))].sort();
  console.log('\n| request | count | p99 ms | statuses |');
  console.log('|---|---:|---:|---|');
  for (const kind of kinds) {
    const all = measured.flatMap((m) => m.samples.filter((s) => s.kind === kind));
    const statuses = [...new Set(all.map((s) => s.status))].sort().join(', ');
    console.log(`| ${kind} | ${all.length} | ${p99Of(all).toFixed(1)} | ${statuses} |`);
  }
  failed = fivexx > 0 || unanswered > 0 || growth >= 1.1;
} finally {
  cluster.stop();
}
process.exit(failed ? 1 : 0);
