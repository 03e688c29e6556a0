/**
 * bench/embedded-fairness: on the embedded database (PGlite: one session, in the API's
 * own process), how long another tenant's read waits while one tenant makes the largest
 * bulk generation a call may (731 days with 5 slots each: 4,386 rows, under the 5,000-row
 * bound). The baseline is the same read, measured in the same run, with nothing else
 * going on; the figure is the longest read during the bulk calls, and its ratio to the
 * baseline's median. Target: well under a second.
 *
 *   npm run bench:embedded-fairness     (CALLS=5 to change)
 */

import { createPublicKey } from 'node:crypto';
import { buildApp } from '../../scheduler/src/app.ts';
import { createVerifier } from '../../scheduler/src/auth/verifier.ts';
import { defaultRateLimits } from '../../scheduler/src/config.ts';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { apiClient, median } from '../support/harness.ts';
import { canonicalId, createSigner } from '../support/setup.ts';

const calls = Number(process.env.CALLS ?? 5);
const handle = await openDatabase({ pglite: {} });
await migrateToLatest(handle.owner);
const signer = await createSigner();
const app = await buildApp({
  db: handle.db,
  verifier: createVerifier({
    issuer: 'https://idp.bench.example',
    audience: 'scheduler-api',
    publicKey: createPublicKey(signer.publicKeyPem),
  }),
  geocoder: { name: 'none', geocode: async () => null },
  // The reader below reads as fast as it can, beyond the API's rate limits: bench/rate-limits measures those.
  rateLimits: { store: 'off', limits: defaultRateLimits },
});
const [busy, other] = [canonicalId(), canonicalId()];
const busyAdmin = await signer.sign({ tenant: busy.claim, subject: canonicalId().claim, role: 'admin' });
const otherAdmin = await signer.sign({ tenant: other.claim, subject: canonicalId().claim, role: 'admin' });
// Over real HTTP, as clients reach it: an in-process inject loop of reads runs on
// microtasks alone and would starve the bulk request of the event loop's other phases.
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const { must } = apiClient(base);
for (let i = 0; i < 20; i++) await must('POST', '/api/v1/roles', otherAdmin, { name: `Role ${i}` });
const roles = await Promise.all(
  Array.from(
    { length: 5 },
    async (_, i) => (await must('POST', '/api/v1/roles', busyAdmin, { name: `Busy ${i}` })).id,
  ),
);

async function read(): Promise<number> {
  const started = performance.now();
  await must('GET', '/api/v1/roles', otherAdmin);
  return performance.now() - started;
}

// Baseline: the other tenant's read alone.
for (let i = 0; i < 50; i++) await read();
const alone: number[] = [];
for (let i = 0; i < 200; i++) alone.push(await read());

// During: the busy tenant's largest bulk call, the other tenant reading all the while.
const during: number[] = [];
const bulkTimes: number[] = [];
for (let i = 0; i < calls; i++) {
  const event = await must('POST', '/api/v1/events', busyAdmin, {
    name: 'Two years',
    // 2031 and the leap year 2032: 731 days, the most one call may generate.
    starts_at: '2031-01-01T00:00:00Z',
    ends_at: '2032-12-31T23:00:00Z',
  });
  let done = false;
  const reader = (async () => {
    while (!done) during.push(await read());
  })();
  const started = performance.now();
  const shifts = await must('POST', `/api/v1/events/${event.id}/shifts/bulk`, busyAdmin, {
    start_time: '09:00',
    end_time: '17:00',
    slots: roles.map((role) => ({ role_id: role, capacity: 2 })),
  });
  bulkTimes.push(performance.now() - started);
  done = true;
  await reader;
  if (shifts.length !== 731) throw new Error(`bulk made ${shifts.length} shifts`);
}
await app.close();
await handle.close();

const longest = Math.max(...during);
console.log(
  `\nembedded database: another tenant's GET /roles while one tenant generates 731 shifts x 5 slots (4,386 rows), ${calls} calls`,
);
console.log('| | reads | median ms | longest ms |');
console.log('|---|---:|---:|---:|');
console.log(
  `| read alone (baseline) | ${alone.length} | ${median(alone).toFixed(1)} | ${Math.max(...alone).toFixed(1)} |`,
);
console.log(
  `| read during the bulk calls | ${during.length} | ${median(during).toFixed(1)} | ${longest.toFixed(1)} |`,
);
console.log(
  `\nbulk call: median ${median(bulkTimes).toFixed(0)} ms; longest wait of the other tenant: ${longest.toFixed(0)} ms, ${(longest / median(alone)).toFixed(0)}x its median alone (target: well under 1000 ms)`,
);
