/**
 * bench/embedded-fairness, the deliveries scenario: on the embedded database (PGlite, in
 * the API's own process), one tenant's admin publishes an event of 541 bulk-generated
 * shifts to 20 webhooks subscribed to `shift.published` (10,820 deliveries), and another
 * tenant's admin keeps reading `GET /api/v1/roles` while the backlog drains. Then the
 * server is killed (-9) with the backlog half sent and started again on the same data
 * folder: how long until `/health` answers, and the other tenant's reads while the rest
 * drains.
 *
 * The server is the production bundle (scheduler/dist/main.mjs, as `npm start` runs it)
 * in its own process; this process is the clients and the receiver (it answers 204 at
 * once), so what is measured is what a client of the server sees. The baseline is the
 * same read in the same run with nothing else going on. Target (issue: p99 under 1 s on
 * a quiet 2-core machine).
 *
 *   npm run build -w scheduler && npm run bench:embedded-fairness -- deliveries
 *   (HOOKS=20 DAYS=541 to change the size; READ_TIMEOUT_MS=30000 caps one read)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { apiClient, median } from '../support/harness.ts';
import { AUDIENCE, canonicalId, createSigner, ISSUER } from '../support/setup.ts';

const hooks = Number(process.env.HOOKS ?? 20);
const days = Number(process.env.DAYS ?? 541);
const readTimeoutMs = Number(process.env.READ_TIMEOUT_MS ?? 30_000);
const maxDrainMs = Number(process.env.MAX_DRAIN_S ?? 1200) * 1000;
const expected = hooks * days;
const schedulerDir = path.resolve(import.meta.dirname, '../../scheduler');

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
};

// The receiver: counts what arrives, answers 204 at once.
let received = 0;
const receiver: Server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    received++;
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverPort = (receiver.address() as AddressInfo).port;

const work = mkdtempSync(path.join(tmpdir(), 'fairness-'));
const signer = await createSigner();
const keyFile = path.join(work, 'issuer.pem');
writeFileSync(keyFile, signer.publicKeyPem);
const port = 20_000 + Math.floor(Math.random() * 20_000);
const base = `http://127.0.0.1:${port}`;

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
}

/** The production bundle on the data folder; resolves once /health answers, with how long that took. */
async function startServer(): Promise<Running & { healthyAfterMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/main.mjs'], {
    cwd: schedulerDir,
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: path.join(work, 'data'),
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      AUTH_PUBLIC_KEY_FILE: keyFile,
      GEOCODER_URL: 'http://127.0.0.1:9/',
      OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${receiverPort}`,
      LOG_LEVEL: 'warn',
      // Its readers poll as fast as they can, beyond the API's rate limits (bench/rate-limits measures those).
      RATE_LIMIT_STORE: 'off',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    const ok = await fetch(`${base}/health`, { signal: AbortSignal.timeout(readTimeoutMs) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, exited, healthyAfterMs: performance.now() - started };
    await new Promise((r) => setTimeout(r, 50));
  }
}

const { must } = apiClient(base);
const [busy, other] = [canonicalId(), canonicalId()];
const busyAdmin = await signer.sign({ tenant: busy.claim, subject: canonicalId().claim, role: 'admin' });
const otherAdmin = await signer.sign({ tenant: other.claim, subject: canonicalId().claim, role: 'admin' });

/** Reads that did not succeed (an error status, a refused connection), and reads cut at the cap. */
const failures: string[] = [];

/** One read of the other tenant; a read that takes longer than the cap counts as the cap. */
async function read(): Promise<number> {
  const started = performance.now();
  await fetch(`${base}/api/v1/roles`, {
    headers: { authorization: `Bearer ${otherAdmin}` },
    signal: AbortSignal.timeout(readTimeoutMs),
  }).then(
    async (r) => {
      await r.arrayBuffer();
      if (!r.ok) failures.push(`HTTP ${r.status}`);
    },
    (error: Error) =>
      failures.push(error.name === 'TimeoutError' ? `over ${readTimeoutMs} ms` : error.message),
  );
  return performance.now() - started;
}

/** Reads until `until()` or `maxMs`, one after another. */
async function readWhile(until: () => boolean, maxMs: number): Promise<number[]> {
  const times: number[] = [];
  const started = performance.now();
  let reported = started;
  while (!until() && performance.now() - started < maxMs) {
    times.push(await read());
    if (performance.now() - reported > 10_000) {
      reported = performance.now();
      console.error(
        `  ${((reported - started) / 1000).toFixed(0)} s: ${received} received, ${times.length} reads, longest ${Math.max(...times).toFixed(0)} ms`,
      );
    }
  }
  return times;
}

function row(label: string, times: number[]): string {
  if (times.length === 0) return `| ${label} | 0 | | | |`;
  return `| ${label} | ${times.length} | ${median(times).toFixed(1)} | ${percentile(times, 99).toFixed(1)} | ${Math.max(...times).toFixed(1)} |`;
}

let server = await startServer();
try {
  for (let i = 0; i < 20; i++) await must('POST', '/api/v1/roles', otherAdmin, { name: `Role ${i}` });
  const role = (await must('POST', '/api/v1/roles', busyAdmin, { name: 'Usher' })).id;
  for (let i = 0; i < hooks; i++) {
    await must('POST', '/api/v1/webhooks', busyAdmin, {
      url: `http://127.0.0.1:${receiverPort}/hook-${i}`,
      events: ['shift.published'],
    });
  }
  const lastDay = new Date(Date.UTC(2031, 0, 1) + (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const event = await must('POST', '/api/v1/events', busyAdmin, {
    name: 'Season',
    starts_at: '2031-01-01T00:00:00Z',
    ends_at: `${lastDay}T23:00:00Z`,
  });
  const shifts = await must('POST', `/api/v1/events/${event.id}/shifts/bulk`, busyAdmin, {
    start_time: '09:00',
    end_time: '17:00',
    slots: [{ role_id: role, capacity: 2 }],
  });
  if (shifts.length !== days) throw new Error(`bulk made ${shifts.length} shifts`);

  for (let i = 0; i < 50; i++) await read();
  const alone: number[] = [];
  for (let i = 0; i < 200; i++) alone.push(await read());

  const publishStarted = performance.now();
  const published = await must('POST', '/api/v1/shifts/publish', busyAdmin, { event_id: event.id });
  const publishMs = performance.now() - publishStarted;
  const drainStarted = performance.now();
  // Half the backlog, read all the while; then kill -9 and start again.
  const half = await readWhile(() => received >= expected / 2, maxDrainMs);
  const halfMs = performance.now() - drainStarted;
  const receivedBeforeKill = received;
  server.child.kill('SIGKILL');
  await server.exited;
  server = await startServer();
  const afterRestart = await readWhile(() => received >= expected, maxDrainMs);
  const drainMs = performance.now() - drainStarted;

  console.log(
    `\nembedded database: another tenant's GET /roles while ${hooks} webhooks x ${days} published shifts (${expected.toLocaleString('en')} deliveries) drain; the receiver answers 204 at once`,
  );
  console.log(`publish call: ${publishMs.toFixed(0)} ms (${published.published} shifts)`);
  console.log('| reads of the other tenant | reads | median ms | p99 ms | longest ms |');
  console.log('|---|---:|---:|---:|---:|');
  console.log(row('alone (baseline)', alone));
  console.log(row(`while the first half drains (${(halfMs / 1000).toFixed(0)} s)`, half));
  console.log(row('after kill -9 and a restart, while the rest drains', afterRestart));
  console.log(
    `\nrestart on the backlog: /health answered ${server.healthyAfterMs.toFixed(0)} ms after the start (${(expected - receivedBeforeKill).toLocaleString('en')} deliveries left)`,
  );
  const during = [...half, ...afterRestart];
  if (failures.length > 0)
    console.log(`reads that failed: ${failures.length} (${[...new Set(failures)].join(', ')})`);
  console.log(
    `received ${received.toLocaleString('en')} of ${expected.toLocaleString('en')} (repeats after the kill count again) in ${(drainMs / 1000).toFixed(1)} s; other tenant's p99 ${percentile(during, 99).toFixed(0)} ms = ${(percentile(during, 99) / median(alone)).toFixed(0)}x its median alone (target: p99 under 1000 ms)`,
  );
} finally {
  server.child.kill('SIGKILL');
  await server.exited;
  receiver.close();
  rmSync(work, { recursive: true, force: true });
}
