/**
 * One measured fan-out of bench/push-fanout, in a fresh process so that its peak memory
 * is its own: `side.ts floor|memory|queue`, with the targets in TARGETS_FILE.
 *
 * - floor: the least code doing the job: for each user one INSERT with pg, then web-push
 *   to the subscriptions it already knows, 32 at once, no retries, no reads.
 * - memory: the scheduler's fan-out before the job queue, rebuilt from today's parts: for
 *   each user the notification row, then (off the caller's path, in this process's
 *   memory) the user's subscriptions and the tenant's VAPID keys read and the messages
 *   sent, 32 at once.
 * - queue: the scheduler's fan-out now, as an API process runs it: for each user the
 *   notification and its delivery jobs in one transaction (notifications/outbox.ts), and
 *   this process's job worker (src/jobs/) delivering from the shared queue. With SHARE=i/n,
 *   this process stages the i-th of n parts of the users and works the queue with the
 *   other n - 1 processes until no job is pending.
 *
 * Prints one JSON line: { startedAt, finishedAt } (ms since the epoch, from the first
 * write to the last delivery this process knows of), commits ([notification id, ms since
 * the epoch] when each notification was committed), the peak RSS (maxRssMb), the RSS
 * just before the fan-out began (startRssMb) and the CPU time (cpuMs).
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { sql } from 'kysely';
import PQueue from 'p-queue';
import pg from 'pg';
import pino from 'pino';
import webpush from 'web-push';
import { unitOfWork } from '../../scheduler/src/changes/unit-of-work.ts';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { asTenant } from '../../scheduler/src/db/tenant-scope.ts';
import { newId } from '../../scheduler/src/ids.ts';
import { defaultWorkerOptions, JobWorker } from '../../scheduler/src/jobs/worker.ts';
import { stageNotifications } from '../../scheduler/src/notifications/outbox.ts';
import { insertNotifications } from '../../scheduler/src/notifications/repository.ts';
import { OutboundPolicy, parseAllowedHosts } from '../../scheduler/src/outbound/destinations.ts';
import { pushDelivery } from '../../scheduler/src/push/delivery.ts';
import { defaultPushOptions, PushSender } from '../../scheduler/src/push/sender.ts';
import { vapidKeys } from '../../scheduler/src/tenants/repository.ts';
import { depsOver } from '../../scheduler/test/support/units.ts';

export interface Targets {
  tenantId: string;
  vapid: { publicKey: string; privateKey: string };
  ca: string;
  users: { id: string; subscriptions: { endpoint: string; p256dh: string; auth: string }[] }[];
}

const mode = process.argv[2];
const url = process.env.DATABASE_URL as string;
const targets = JSON.parse(readFileSync(process.env.TARGETS_FILE as string, 'utf8')) as Targets;
const agent = new Agent({ ca: targets.ca, keepAlive: true });
const message = { type: 'assignment', title: 'You are on the bar shift on Saturday 2 July, 10:00' };
const log = pino({ level: 'warn' });
// The push service runs on this machine: admitted as an operator would with OUTBOUND_ALLOWED_HOSTS.
const policy = new OutboundPolicy(parseAllowedHosts('127.0.0.1'));
const commits: [string, number][] = [];

function sender(): PushSender {
  return new PushSender({ ...defaultPushOptions, subject: 'mailto:bench@example.com', agent, policy });
}

async function memory(): Promise<() => Promise<void>> {
  const handle = await openDatabase({ url, poolSize: 10 });
  const push = sender();
  const { tenantId } = targets;
  return async () => {
    const deliveries: Promise<unknown>[] = [];
    await Promise.all(
      targets.users.map((user) =>
        asTenant(tenantId, async () => {
          const [row] = await insertNotifications(handle.db, [
            { tenant_id: tenantId, id: newId(), user_id: user.id, ...message, body: null, data: null },
          ]);
          if (!row) return;
          commits.push([row.id, Date.now()]);
          deliveries.push(
            asTenant(tenantId, async () => {
              const [browsers, keys] = await Promise.all([
                handle.db
                  .selectFrom('push_subscriptions')
                  .select(['id', 'endpoint', 'p256dh', 'auth'])
                  .where('tenant_id', '=', tenantId)
                  .where('user_id', '=', user.id)
                  .execute(),
                vapidKeys(handle.db, tenantId),
              ]);
              if (!keys) return;
              const vapid = { publicKey: keys.vapid_public_key, privateKey: keys.vapid_private_key };
              await Promise.all(browsers.map((b) => push.send(b, JSON.stringify(row), vapid)));
            }),
          );
        }),
      ),
    );
    await Promise.all(deliveries);
    await handle.close();
  };
}

async function queue(): Promise<() => Promise<void>> {
  const [part, parts] = (process.env.SHARE ?? '0/1').split('/').map(Number) as [number, number];
  const handle = await openDatabase({ url, poolSize: 10 });
  const worker = new JobWorker(
    handle.db,
    {
      push: pushDelivery(handle.db, sender(), log),
      // This bench queues no webhook deliveries.
      webhook: async () => ({ outcome: 'dead', error: 'no webhooks in this bench' }),
    },
    { ...defaultWorkerOptions },
    log,
  );
  // What a service is given: the unit of work needs the reactions (the push feature's
  // queues the deliveries) and the worker to wake.
  const deps = depsOver(handle.db, {
    log,
    jobs: { kick: () => worker.kick() },
    outbound: policy,
    pushAttempts: 5,
  });

  const mine = targets.users.filter((_, i) => i % parts === part);
  const { tenantId } = targets;
  return async () => {
    worker.start();
    await Promise.all(
      mine.map((user) =>
        asTenant(tenantId, async () => {
          const [row] = await unitOfWork(deps, { tenantId, userId: null }, 'notifications.staged', (tx) =>
            stageNotifications(tx, [user.id], message),
          );
          if (row) commits.push([row.id, Date.now()]);
        }),
      ),
    );
    // Until the shared queue is empty: the other processes may still be staging.
    for (;;) {
      const { rows } = await sql<{ open: number }>`
        SELECT count(*)::int AS open FROM jobs WHERE status = 'pending'`.execute(handle.owner);
      const { rows: all } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs`.execute(
        handle.owner,
      );
      if (rows[0]?.open === 0 && all[0]?.n === targets.users.length * 2) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await worker.stop();
    await handle.close();
  };
}

async function floor(): Promise<() => Promise<void>> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const queue = new PQueue({ concurrency: defaultPushOptions.concurrency });
  const send = (target: Targets['users'][number]['subscriptions'][number], payload: string) =>
    webpush.sendNotification(
      { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
      payload,
      {
        vapidDetails: { subject: 'mailto:bench@example.com', ...targets.vapid },
        contentEncoding: 'aes128gcm',
        TTL: 24 * 60 * 60,
        agent,
      },
    );
  return async () => {
    await Promise.all(
      targets.users.map(async (user) => {
        const id = newId();
        const { rows } = await pool.query(
          `INSERT INTO notifications (tenant_id, id, user_id, type, title)
           VALUES ($1, $2, $3, $4, $5)
           RETURNING id, tenant_id, user_id, type, title, body, data, read_at, created_at`,
          [targets.tenantId, id, user.id, message.type, message.title],
        );
        commits.push([rows[0].id, Date.now()]);
        const payload = JSON.stringify(rows[0]);
        await Promise.all(user.subscriptions.map((target) => queue.add(() => send(target, payload))));
      }),
    );
    await pool.end();
  };
}

const prepare = ({ floor, memory, queue } as Record<string, () => Promise<() => Promise<void>>>)[mode ?? ''];
if (!prepare) throw new Error('usage: side.ts floor|memory|queue');
const run = await prepare();
const startRssMb = process.memoryUsage().rss / 1024 / 1024;
const cpu = process.cpuUsage();
const startedAt = Date.now();
await run();
const finishedAt = Date.now();
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${JSON.stringify({ startedAt, finishedAt, commits, startRssMb, maxRssMb: process.resourceUsage().maxRSS / 1024, cpuMs: (used.user + used.system) / 1000 })}\n`,
);
