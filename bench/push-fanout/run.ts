/**
 * bench/push-fanout: one notification to each of 1,000 users with 2 push subscriptions
 * each (2,000 Web Push messages) against a local push service that verifies every VAPID
 * JWT and decrypts every aes128gcm payload, on a throwaway PostgreSQL 15 cluster, four
 * ways, alternating in every round (side.ts):
 *   floor    the least code doing the job (the ceiling any design can reach here);
 *   memory   the scheduler's fan-out before the job queue (rows, then sends from this
 *            process's memory), rebuilt from today's parts: the baseline;
 *   queue x1 the scheduler now: notifications and delivery jobs committed together, one
 *            API process staging them and working the shared queue;
 *   queue x3 the same spread over three processes, each staging a third and working the
 *            one queue.
 * It reports notifications per second (first write to last delivery), the p99 delay from
 * a notification's commit to each of its messages' arrival, and the ratios to memory.
 * Each fan-out runs in fresh processes, so their peak RSS is their own; the push service
 * runs in a process of its own. Every run must deliver exactly 2,000 messages, none refused.
 *
 *   npm run bench:push-fanout     (USERS=1000 ROUNDS=5 to change)
 */
import { type ChildProcess, execFile, fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import webpush from 'web-push';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import type { TestSubscription } from '../../scheduler/test/support/push-service.ts';
import { median } from '../support/harness.ts';
import { canonicalId, insertRows } from '../support/setup.ts';
import type { Targets } from './side.ts';

const users = Number(process.env.USERS ?? 1000);
const rounds = Number(process.env.ROUNDS ?? 5);
const run = promisify(execFile);

interface SideResult {
  startedAt: number;
  finishedAt: number;
  commits: [string, number][];
  startRssMb: number;
  maxRssMb: number;
  cpuMs: number;
}

interface Measure {
  notificationsPerSecond: number;
  p99DelayMs: number;
  maxRssMb: number;
  /** CPU time of the sending processes, all together. */
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
  await insertRows(
    handle.owner,
    'users',
    targets.users.map((user) => ({ tenant_id: tenant, id: user.id, role: 'employee' as const })),
  );
  await insertRows(
    handle.owner,
    'push_subscriptions',
    targets.users.flatMap((user) =>
      user.subscriptions.map((s) => ({ tenant_id: tenant, id: canonicalId().id, user_id: user.id, ...s })),
    ),
  );
  const owner = handle.owner;
  const targetsFile = path.join(scratch, 'targets.json');
  writeFileSync(targetsFile, JSON.stringify(targets));

  async function sideRun(mode: string, share?: string): Promise<SideResult> {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, 'side.ts'), mode],
      {
        env: {
          ...process.env,
          DATABASE_URL: cluster.url,
          TARGETS_FILE: targetsFile,
          ...(share ? { SHARE: share } : {}),
        },
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) as string) as SideResult;
  }

  /** One fan-out in `processes` processes at once; every message must arrive, none refused. */
  async function side(mode: string, processes = 1): Promise<Measure> {
    await sql`TRUNCATE jobs`.execute(owner);
    const parts = await Promise.all(
      Array.from({ length: processes }, (_, i) =>
        sideRun(mode, mode === 'queue' ? `${i}/${processes}` : undefined),
      ),
    );
    const count = await ask<{ received: number; refused: number; arrivals: [string, number][] }>(
      peer,
      'count',
    );
    if (count.received !== users * 2 || count.refused !== 0) {
      throw new Error(
        `${mode} x${processes}: ${count.received} messages delivered, ${count.refused} refused`,
      );
    }
    const committed = new Map(parts.flatMap((p) => p.commits));
    const delays = count.arrivals
      .map(([id, at]) => at - (committed.get(id) ?? Number.NaN))
      .sort((a, b) => a - b);
    const last = Math.max(...parts.map((p) => p.finishedAt), ...count.arrivals.map(([, at]) => at));
    const first = Math.min(...parts.map((p) => p.startedAt));
    return {
      notificationsPerSecond: users / ((last - first) / 1000),
      p99DelayMs: delays[Math.floor(delays.length * 0.99)] ?? Number.NaN,
      maxRssMb: Math.max(...parts.map((p) => p.maxRssMb)),
      cpuMs: parts.reduce((sum, p) => sum + p.cpuMs, 0),
    };
  }

  const ways = [
    ['floor', 'floor', 1],
    ['memory', 'memory', 1],
    ['queue x1', 'queue', 1],
    ['queue x3', 'queue', 3],
  ] as const;
  for (const [, mode, processes] of ways) await side(mode, processes); // warm-up
  const results = new Map<string, Measure[]>(ways.map(([name]) => [name, []]));
  console.log(`\npush fan-out: ${users} users x 2 subscriptions, ${rounds} rounds`);
  console.log(`| round | ${ways.map(([name]) => `${name} notif/s | ${name} p99 ms`).join(' | ')} |`);
  console.log(`|---:|${ways.map(() => '---:|---:').join('|')}|`);
  for (let round = 1; round <= rounds; round++) {
    const row: string[] = [];
    for (const [name, mode, processes] of ways) {
      const measure = await side(mode, processes);
      results.get(name)?.push(measure);
      row.push(measure.notificationsPerSecond.toFixed(0), measure.p99DelayMs.toFixed(0));
    }
    console.log(`| ${round} | ${row.join(' | ')} |`);
  }
  const of = (name: string) => results.get(name) ?? [];
  const ratio = (name: string) =>
    median(
      of(name).map((m, i) => m.notificationsPerSecond / (of('memory')[i] as Measure).notificationsPerSecond),
    );
  console.log(
    '\n| way | notifications/s | p99 commit -> delivery | peak RSS MB | sender CPU s | throughput / memory |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [name] of ways) {
    console.log(
      `| ${name} | ${median(of(name).map((m) => m.notificationsPerSecond)).toFixed(0)} | ${median(of(name).map((m) => m.p99DelayMs)).toFixed(0)} ms | ${median(of(name).map((m) => m.maxRssMb)).toFixed(0)} | ${(median(of(name).map((m) => m.cpuMs)) / 1000).toFixed(1)} | ${ratio(name).toFixed(2)} |`,
    );
  }
  await handle.close();
} finally {
  peer.send('stop');
  cluster.stop();
  rmSync(scratch, { recursive: true, force: true });
}
