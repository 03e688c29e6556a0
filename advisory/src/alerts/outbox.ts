import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
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
 *
 * Each channel's trouble is remembered (`channels.state`, across restarts and `advisory
 * check` runs): a channel on which one delivery has failed `FAILING_AFTER` attempts
 * since the channel last delivered anything (fewer when fewer attempts are allowed, so a
 * delivery given up always counts) is failing until a delivery on it succeeds again.
 * Attempts of one delivery, not of several: three alerts queued together that fail in
 * the same second are one outage of a second, while one alert's three attempts span its
 * backoff (`retryBaseMs` x 3 at least). Every failed attempt is logged (warn;
 * error when given up), never only written into the file.
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
  logger?: Logger;
}

/** A channel's current run of failed attempts (none after a success). */
export interface ChannelTrouble {
  channel: Channel;
  /** The most attempts one delivery on the channel has failed since the channel last delivered. */
  failures: number;
  /** When the first of them failed. */
  since: string;
  lastError: string;
}

/** Failed attempts of one delivery after which its channel is failing (appliance/health.ts). */
const FAILING_AFTER = 3;
/** JSON, but not named *.json: every *.json file in the outbox is a delivery. */
const CHANNELS_FILE = 'channels.state';

const MAX_WAIT_MS = 6 * 3_600_000;

const CHANNEL_SETTING: Record<Channel, string> = {
  webhook: 'ADVISORY_NOTIFY_WEBHOOK_URL',
  email: 'ADVISORY_SMTP_URL',
};

export class Outbox {
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => Date;
  private troubles: Partial<Record<Channel, ChannelTrouble>> | null = null;
  private savingTroubles: Promise<void> = Promise.resolve();

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

  /** Channels with failed attempts since their last success (all, failing or not yet). */
  async troubled(): Promise<ChannelTrouble[]> {
    const troubles = await this.loadTroubles();
    return this.channels.flatMap((c) => (troubles[c] ? [troubles[c]] : []));
  }

  /** Channels failing: one delivery failed `FAILING_AFTER` attempts (or all it is allowed, if fewer). */
  async failing(): Promise<ChannelTrouble[]> {
    const threshold = Math.min(FAILING_AFTER, this.options.maxAttempts);
    return (await this.troubled()).filter((t) => t.failures >= threshold);
  }

  private async loadTroubles(): Promise<Partial<Record<Channel, ChannelTrouble>>> {
    if (this.troubles) return this.troubles;
    let loaded: Partial<Record<Channel, ChannelTrouble>> = {};
    try {
      const value: unknown = JSON.parse(await readFile(path.join(this.dir, CHANNELS_FILE), 'utf8'));
      if (value && typeof value === 'object') {
        for (const channel of CHANNELS) {
          const t = (value as Record<string, Partial<ChannelTrouble> | undefined>)[channel];
          if (
            t &&
            Number.isInteger(t.failures) &&
            typeof t.since === 'string' &&
            typeof t.lastError === 'string'
          )
            loaded[channel as Channel] = { ...(t as ChannelTrouble), channel: channel as Channel };
        }
      }
    } catch (error) {
      // None yet is none; a damaged record is read as none too (at worst a failing channel
      // is announced again after FAILING_AFTER more failures), and said.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        this.options.logger?.warn(
          { err: error },
          `${CHANNELS_FILE} in the outbox is damaged: read as no failures`,
        );
      loaded = {};
    }
    this.troubles ??= loaded;
    return this.troubles;
  }

  /**
   * Records an attempt's outcome on its channel (with the delivery's attempts so far when it
   * failed); saves in order, so the file ends as the memory.
   */
  private async noteAttempt(channel: Channel, error: string | null, attempts = 0): Promise<void> {
    const troubles = await this.loadTroubles();
    const before = troubles[channel];
    if (error === null) {
      if (!before) return;
      delete troubles[channel];
      this.options.logger?.info(
        { channel, failures: before.failures },
        `alert delivery by ${channel} works again`,
      );
    } else {
      troubles[channel] = {
        channel,
        failures: Math.max(before?.failures ?? 0, attempts),
        since: before?.since ?? this.now().toISOString(),
        lastError: error,
      };
    }
    const save = this.savingTroubles.then(async () => {
      await ensureDir(this.dir);
      await writeAtomic(path.join(this.dir, CHANNELS_FILE), JSON.stringify(this.troubles ?? {}));
    });
    this.savingTroubles = save.catch(() => undefined);
    await save;
  }

  /** Removes what a kill left half-written (temporary files, never deliveries). */
  async recover(): Promise<void> {
    await clearTemporaries(this.dir);
  }

  /**
   * One file per configured channel (but those in `except`: a failing channel's condition
   * goes to the others); nothing to do without channels.
   */
  async enqueue(alert: Alert, except: readonly Channel[] = []): Promise<void> {
    await ensureDir(this.dir);
    for (const channel of this.channels.filter((c) => !except.includes(c))) {
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
      if (!this.stopped) void this.schedule();
    });
    return this.flushing;
  }

  /**
   * Keeps flushing whenever the next delivery is due, until stop(); `flushed` runs after
   * each flush (the appliance judges its channels then). A failure is logged, never
   * dropped: the next tick tries again.
   */
  start(flushed?: () => Promise<void>): void {
    this.flushed = flushed;
    this.stopped = false;
    void this.tick();
  }

  private flushed: (() => Promise<void>) | undefined;
  /** The tick under way, flush and judgement both: stop() waits for the whole of it. */
  private ticking: Promise<void> | null = null;

  private tick(): Promise<void> {
    this.ticking ??= this.tickOnce().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async tickOnce(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const delivered = await this.flush().then(
      () => true,
      (error: unknown) => {
        this.options.logger?.error({ err: error }, 'alert delivery failed');
        return false;
      },
    );
    if (delivered && !this.stopped)
      await this.flushed?.().catch((error: unknown) =>
        this.options.logger?.error({ err: error }, 'the conditions could not be judged after a delivery'),
      );
    await this.schedule();
  }

  /**
   * Times the next tick for the next due delivery, after every flush (a refresh's too: a
   * delivery it queued and that failed is retried when due, not when the timer set while
   * the outbox was empty runs out). At most a minute ahead, for files added from outside.
   */
  private async schedule(): Promise<void> {
    if (this.stopped) return;
    const pending = await this.pending().catch((error: unknown) => {
      this.options.logger?.error({ err: error }, 'the outbox cannot be read');
      return [];
    });
    const next = pending
      .map((d) => Date.parse(d.nextAttemptAt))
      .reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    const wait = Number.isFinite(next) ? Math.max(100, next - this.now().getTime()) : 60_000;
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), Math.min(wait, 60_000));
  }

  private stopped = true;

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // A delivery's judgement writes state files: done before the caller lets the data
    // directory go, never after (another process may hold it by then).
    await this.ticking;
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
      let failure: string | null = null;
      try {
        await send(delivery.alert);
      } catch (error) {
        failure = (error as Error).message || String(error);
      }
      if (failure === null) {
        await rm(file, { force: true });
        await this.noteAttempt(delivery.channel, null);
        continue;
      }
      const attempts = delivery.attempts + 1;
      const wait = Math.min(this.options.retryBaseMs * 2 ** (attempts - 1), MAX_WAIT_MS);
      const next: Omit<Delivery, 'file'> = {
        channel: delivery.channel,
        alert: delivery.alert,
        attempts,
        nextAttemptAt: new Date(this.now().getTime() + wait).toISOString(),
        lastError: failure,
      };
      await writeAtomic(file, JSON.stringify(next));
      const said = { channel: delivery.channel, alert: delivery.alert.id, attempts, problem: failure };
      if (attempts >= this.options.maxAttempts) {
        await this.moveToFailed(file, delivery.file);
        this.options.logger?.error(said, `alert delivery by ${delivery.channel} given up: ${failure}`);
      } else {
        this.options.logger?.warn(
          { ...said, nextAttemptAt: next.nextAttemptAt },
          `alert delivery by ${delivery.channel} failed: ${failure}`,
        );
      }
      await this.noteAttempt(delivery.channel, failure, attempts);
      return;
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
    this.options.logger?.warn(
      { channel: delivery.channel, alert: delivery.alert.id },
      `alert delivery by ${delivery.channel} given up: ${reason}`,
    );
    const { file: _name, ...kept } = delivery;
    await writeAtomic(file, JSON.stringify({ ...kept, lastError: reason }));
    await this.moveToFailed(file, delivery.file);
  }

  private async moveToFailed(file: string, name: string): Promise<void> {
    await ensureDir(path.join(this.dir, 'failed'));
    await rename(file, path.join(this.dir, 'failed', name));
  }
}

const CHANNELS = new Set<string>(['webhook', 'email'] satisfies Channel[]);

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
