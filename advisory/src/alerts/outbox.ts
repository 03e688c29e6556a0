import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { clearTemporaries, ensureDir, writeAtomic } from '../storage/durable-files.ts';
import type { Alert } from './alert.ts';

/**
 * The persistent outbox: one file per alert and channel, written before any delivery is
 * tried, removed once the channel took it. A restart finds what was not delivered and
 * goes on; each failure waits twice as long as the one before (from `retryBaseMs`, at
 * most six hours), and after `maxAttempts` the delivery is given up and kept apart, in
 * `failed/`, for the dashboard to show. A file that cannot be read as a delivery (damaged
 * outside the appliance: its own writes are whole) is moved to `damaged/` and counted,
 * never skipped in silence. Queuing is idempotent per alert id and channel: a recording
 * finished after a crash queues its alert again under the same name, which changes
 * nothing if it is still queued.
 */
export type Channel = 'webhook' | 'email';

export interface Delivery {
  file: string;
  channel: Channel;
  alert: Alert;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
}

export interface OutboxOptions {
  retryBaseMs: number;
  maxAttempts: number;
  now?: () => Date;
}

const MAX_WAIT_MS = 6 * 3_600_000;

const CHANNEL_SETTING: Record<Channel, string> = {
  webhook: 'ADVISORY_NOTIFY_WEBHOOK_URL',
  email: 'ADVISORY_SMTP_URL',
};

export class Outbox {
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => Date;

  constructor(
    readonly dir: string,
    private readonly senders: Partial<Record<Channel, (alert: Alert) => Promise<void>>>,
    private readonly options: OutboxOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  get channels(): Channel[] {
    return (Object.keys(this.senders) as Channel[]).filter((c) => this.senders[c]);
  }

  /** Removes what a kill left half-written (temporary files, never deliveries). */
  async recover(): Promise<void> {
    await clearTemporaries(this.dir);
  }

  /** One file per configured channel; nothing to do without channels. */
  async enqueue(alert: Alert): Promise<void> {
    await ensureDir(this.dir);
    for (const channel of this.channels) {
      const file = `${Date.parse(alert.at)}-${alert.id}-${channel}.json`;
      if (await this.queued(file)) continue;
      const delivery: Omit<Delivery, 'file'> = {
        channel,
        alert,
        attempts: 0,
        nextAttemptAt: alert.at,
        lastError: null,
      };
      await writeAtomic(path.join(this.dir, file), JSON.stringify(delivery));
    }
  }

  async pending(): Promise<Delivery[]> {
    return this.read(this.dir);
  }

  async failed(): Promise<Delivery[]> {
    return this.read(path.join(this.dir, 'failed'));
  }

  /** Files set aside because they could not be read as deliveries. */
  async damaged(): Promise<string[]> {
    return readdir(path.join(this.dir, 'damaged')).catch(() => []);
  }

  private async queued(name: string): Promise<boolean> {
    for (const dir of [this.dir, path.join(this.dir, 'failed')]) {
      if (
        await stat(path.join(dir, name)).then(
          () => true,
          () => false,
        )
      )
        return true;
    }
    return false;
  }

  /** Tries every delivery that is due, in the order they were queued; one flush at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.deliverDue().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Keeps flushing whenever the next delivery is due, until stop(). */
  start(): void {
    const tick = async () => {
      this.timer = null;
      await this.flush().catch(() => undefined);
      const next = (await this.pending().catch(() => []))
        .map((d) => Date.parse(d.nextAttemptAt))
        .reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
      const wait = Number.isFinite(next) ? Math.max(100, next - this.now().getTime()) : 60_000;
      if (this.timer === null && !this.stopped) this.timer = setTimeout(tick, Math.min(wait, 60_000));
    };
    this.stopped = false;
    void tick();
  }

  private stopped = true;

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
  }

  private async read(dir: string): Promise<Delivery[]> {
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const deliveries: Delivery[] = [];
    for (const name of names) {
      let text: string;
      try {
        text = await readFile(path.join(dir, name), 'utf8');
      } catch (error) {
        // Moved to failed/ or delivered this instant.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const delivery = parseDelivery(text);
      if (delivery) deliveries.push({ ...delivery, file: name });
      else await this.setAside(dir, name);
    }
    return deliveries;
  }

  /**
   * Channels are delivered side by side, so a dead webhook never holds up the mail; within
   * a channel in order, and the first failure ends that channel's turn: the deliveries
   * behind it wait for the next flush instead of each waiting out the same timeout (a
   * flush costs at most one timeout per channel, `advisory check` included).
   */
  private async deliverDue(): Promise<void> {
    const now = this.now();
    const due = (await this.pending()).filter((d) => Date.parse(d.nextAttemptAt) <= now.getTime());
    const channels = [...new Set(due.map((d) => d.channel))];
    await Promise.all(
      channels.map((channel) => this.deliverChannel(due.filter((d) => d.channel === channel))),
    );
  }

  private async deliverChannel(deliveries: Delivery[]): Promise<void> {
    for (const delivery of deliveries) {
      const send = this.senders[delivery.channel];
      const file = path.join(this.dir, delivery.file);
      if (!send) {
        // Queued before a restart without that channel: nothing will ever send it.
        await this.giveUp(
          file,
          delivery,
          `the ${delivery.channel} channel is no longer configured (${CHANNEL_SETTING[delivery.channel]})`,
        );
        continue;
      }
      try {
        await send(delivery.alert);
        await rm(file, { force: true });
      } catch (error) {
        const attempts = delivery.attempts + 1;
        const wait = Math.min(this.options.retryBaseMs * 2 ** (attempts - 1), MAX_WAIT_MS);
        const next: Omit<Delivery, 'file'> = {
          channel: delivery.channel,
          alert: delivery.alert,
          attempts,
          nextAttemptAt: new Date(this.now().getTime() + wait).toISOString(),
          lastError: (error as Error).message || String(error),
        };
        await writeAtomic(file, JSON.stringify(next));
        if (attempts >= this.options.maxAttempts) await this.moveToFailed(file, delivery.file);
        return;
      }
    }
  }

  /** A file that is not a delivery: kept, apart, where the status counts it. */
  private async setAside(dir: string, name: string): Promise<void> {
    const damaged = path.join(this.dir, 'damaged');
    await ensureDir(damaged);
    await rename(path.join(dir, name), path.join(damaged, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  private async giveUp(file: string, delivery: Delivery, reason: string): Promise<void> {
    const { file: _name, ...kept } = delivery;
    await writeAtomic(file, JSON.stringify({ ...kept, lastError: reason }));
    await this.moveToFailed(file, delivery.file);
  }

  private async moveToFailed(file: string, name: string): Promise<void> {
    await ensureDir(path.join(this.dir, 'failed'));
    await rename(file, path.join(this.dir, 'failed', name));
  }
}

const CHANNELS = new Set<string>(['webhook', 'email']);

/** A delivery file's content, or null when it is not one. */
function parseDelivery(text: string): Omit<Delivery, 'file'> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  const d = value as Record<string, unknown>;
  const alert = d.alert as Record<string, unknown> | null | undefined;
  const ok =
    typeof d.channel === 'string' &&
    CHANNELS.has(d.channel) &&
    Number.isInteger(d.attempts) &&
    typeof d.nextAttemptAt === 'string' &&
    !Number.isNaN(Date.parse(d.nextAttemptAt)) &&
    (d.lastError === null || typeof d.lastError === 'string') &&
    typeof alert === 'object' &&
    alert !== null &&
    typeof alert.id === 'string' &&
    typeof alert.summary === 'string';
  return ok ? (value as Omit<Delivery, 'file'>) : null;
}
