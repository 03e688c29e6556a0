/**
 * One measured fan-out of bench/push-fanout, in a fresh process so that its peak memory
 * is its own: `side.ts notifier|floor`, with the targets in TARGETS_FILE.
 *
 * - notifier: the scheduler's fan-out (notifications/fan-out.ts) as the app builds it:
 *   for each user, store the notification row, then read the user's subscriptions and the
 *   tenant's VAPID keys and send on the push queue (32 at once, retries on).
 * - floor: the least code doing the same job: for each user one INSERT with pg, then
 *   web-push to the subscriptions it already knows, 32 at once, no retries, no reads.
 *
 * Prints one JSON line: { ms, cpuMs } from the first call to the last answer, the peak
 * RSS of the process (maxRssMb) and its RSS just before the fan-out began (startRssMb).
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import PQueue from 'p-queue';
import pg from 'pg';
import pino from 'pino';
import webpush from 'web-push';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { newId } from '../../scheduler/src/ids.ts';
import { Notifier } from '../../scheduler/src/notifications/fan-out.ts';
import { OutboundPolicy, parseAllowedHosts } from '../../scheduler/src/outbound/destinations.ts';
import { defaultPushOptions, PushSender } from '../../scheduler/src/push/sender.ts';

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

async function notifier(): Promise<() => Promise<void>> {
  const handle = await openDatabase({ url, poolSize: 10 });
  // The push service runs on this machine: admitted as an operator would with OUTBOUND_ALLOWED_HOSTS.
  const policy = new OutboundPolicy(parseAllowedHosts('127.0.0.1'));
  const sender = new PushSender({
    ...defaultPushOptions,
    subject: 'mailto:bench@example.com',
    agent,
    policy,
  });
  const fanOut = new Notifier(handle.db, sender, pino({ level: 'warn' }));
  return async () => {
    await Promise.all(targets.users.map((user) => fanOut.notify(targets.tenantId, [user.id], message)));
    await fanOut.idle();
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
        const payload = JSON.stringify(rows[0]);
        await Promise.all(user.subscriptions.map((target) => queue.add(() => send(target, payload))));
      }),
    );
    await pool.end();
  };
}

const prepare = mode === 'notifier' ? notifier : mode === 'floor' ? floor : null;
if (!prepare) throw new Error('usage: side.ts notifier|floor');
const run = await prepare();
const startRssMb = process.memoryUsage().rss / 1024 / 1024;
const cpu = process.cpuUsage();
const started = performance.now();
await run();
const ms = performance.now() - started;
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${JSON.stringify({ ms, startRssMb, maxRssMb: process.resourceUsage().maxRSS / 1024, cpuMs: (used.user + used.system) / 1000 })}\n`,
);
