/**
 * bench/push-fanout: one notification to each of 1,000 users with 2 push subscriptions
 * each (2,000 Web Push messages) through the scheduler's fan-out, against a local push
 * service that verifies every VAPID JWT and decrypts every aes128gcm payload, on a
 * throwaway PostgreSQL 15 cluster. The floor, measured in the same run, does the same job
 * with the least code (side.ts). Each fan-out runs in a fresh process, so its peak RSS
 * is its own; rounds alternate floor and notifier; the push service runs in a third
 * process. Every round must deliver exactly 2,000 messages, none refused.
 *
 *   npm run bench:push-fanout     (USERS=1000 ROUNDS=5 to change)
 */
import { type ChildProcess, execFile, fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import webpush from 'web-push';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import type { TestSubscription } from '../../scheduler/test/support/push-service.ts';
import { median } from '../support/harness.ts';
import { canonicalId } from '../support/setup.ts';
import type { Targets } from './side.ts';

const users = Number(process.env.USERS ?? 1000);
const rounds = Number(process.env.ROUNDS ?? 5);
const run = promisify(execFile);

interface Measure {
  ms: number;
  startRssMb: number;
  maxRssMb: number;
  cpuMs: number;
}

function ask<T>(child: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (answer) => resolve(answer as T));
    child.send(message);
  });
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'push-fanout-'));
const cluster = await startPgCluster();
const peer = fork(path.join(import.meta.dirname, 'peer.ts'), [String(users * 2)], {
  execArgv: ['--import', 'tsx'],
});
try {
  const started = await new Promise<{ origin: string; ca: string; subscriptions: TestSubscription[] }>(
    (resolve) => peer.once('message', (message) => resolve(message as never)),
  );

  const handle = await openDatabase({ url: cluster.url, poolSize: 2 });
  await migrateToLatest(handle.owner);
  const tenant = canonicalId().id;
  const vapid = webpush.generateVAPIDKeys();
  await handle.owner
    .insertInto('tenants')
    .values({ id: tenant, vapid_public_key: vapid.publicKey, vapid_private_key: vapid.privateKey })
    .execute();
  await handle.owner.insertInto('tenant_settings').values({ tenant_id: tenant }).execute();
  const targets: Targets = { tenantId: tenant, vapid, ca: started.ca, users: [] };
  for (let i = 0; i < users; i++) {
    const subscriptions = started.subscriptions.slice(2 * i, 2 * i + 2).map((s) => ({
      endpoint: s.body.endpoint,
      p256dh: s.body.keys.p256dh,
      auth: s.body.keys.auth,
    }));
    targets.users.push({ id: canonicalId().id, subscriptions });
  }
  await handle.owner
    .insertInto('users')
    .values(targets.users.map((user) => ({ tenant_id: tenant, id: user.id, role: 'employee' as const })))
    .execute();
  await handle.owner
    .insertInto('push_subscriptions')
    .values(
      targets.users.flatMap((user) =>
        user.subscriptions.map((s) => ({ tenant_id: tenant, id: canonicalId().id, user_id: user.id, ...s })),
      ),
    )
    .execute();
  await handle.close();
  const targetsFile = path.join(scratch, 'targets.json');
  writeFileSync(targetsFile, JSON.stringify(targets));

  async function side(mode: 'floor' | 'notifier'): Promise<Measure> {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, 'side.ts'), mode],
      { env: { ...process.env, DATABASE_URL: cluster.url, TARGETS_FILE: targetsFile } },
    );
    const measure = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Measure;
    const count = await ask<{ received: number; refused: number }>(peer, 'count');
    if (count.received !== users * 2 || count.refused !== 0) {
      throw new Error(`${mode}: ${count.received} messages delivered, ${count.refused} refused`);
    }
    return measure;
  }

  await side('floor'); // warm-up: the cluster's caches, the push service's JIT
  await side('notifier');
  const results = { floor: [] as Measure[], notifier: [] as Measure[] };
  console.log(`\npush fan-out: ${users} users x 2 subscriptions, ${rounds} paired rounds`);
  console.log(
    '| round | floor notif/s | floor msg/s | floor RSS MB before/peak | notifier notif/s | notifier msg/s | notifier RSS MB before/peak | ratio |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  const rss = (m: Measure) => `${m.startRssMb.toFixed(0)} / ${m.maxRssMb.toFixed(0)}`;
  const perSecond = (m: Measure) => users / (m.ms / 1000);
  for (let round = 1; round <= rounds; round++) {
    const floor = await side('floor');
    const notifier = await side('notifier');
    results.floor.push(floor);
    results.notifier.push(notifier);
    console.log(
      `| ${round} | ${perSecond(floor).toFixed(0)} | ${(2 * perSecond(floor)).toFixed(0)} | ${rss(floor)} | ${perSecond(notifier).toFixed(0)} | ${(2 * perSecond(notifier)).toFixed(0)} | ${rss(notifier)} | ${(perSecond(notifier) / perSecond(floor)).toFixed(2)} |`,
    );
  }
  const ratios = results.notifier.map((n, i) => perSecond(n) / perSecond(results.floor[i] as Measure));
  console.log(
    `\nnotifier: median ${median(results.notifier.map(perSecond)).toFixed(0)} notifications/s, peak RSS median ${median(results.notifier.map((m) => m.maxRssMb)).toFixed(0)} MB (floor ${median(results.floor.map((m) => m.maxRssMb)).toFixed(0)} MB)`,
  );
  console.log(`throughput ratio notifier/floor, median of ${rounds} rounds: ${median(ratios).toFixed(2)}`);
} finally {
  peer.send('stop');
  cluster.stop();
  rmSync(scratch, { recursive: true, force: true });
}
