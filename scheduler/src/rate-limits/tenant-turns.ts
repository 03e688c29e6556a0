import type { TurnLimits } from '../config.ts';

/** What a request is told: go on (and call `leave` once answered), or the queue is full. */
export type Turn = { granted: true; leave: () => void } | { granted: false };

/** One tenant's requests in hand now, and those waiting in arrival order. */
interface TenantLine {
  active: number;
  waiting: (() => void)[];
}

/**
 * Turns per tenant in this process: at most `concurrency` requests of one tenant are
 * handled at once, the others wait in arrival order, at most `queue` of them; a request
 * beyond is refused. The token buckets (buckets.ts) count requests whatever they cost; a
 * tenant's script of heavy reads stays within them and still takes the whole server.
 * Turns bound what it takes at any moment, cost included: its requests beyond its turns
 * wait without using the CPU or a database connection, so another tenant's request finds
 * both.
 *
 * A request whose client left while it waited leaves the line at once, its place in the
 * queue with it (p-queue, used for push deliveries, keeps an aborted task queued until its
 * turn comes, so a client that connects and drops would hold places it no longer wants:
 * hence this small line of our own). The map holds only the tenants with requests in hand
 * or waiting.
 */
export class TenantTurns {
  private readonly lines = new Map<string, TenantLine>();

  constructor(readonly limits: TurnLimits) {}

  /** Tenants with requests in hand or waiting. */
  get tenants(): number {
    return this.lines.size;
  }

  /** Requests of `tenantId` waiting for a turn now. */
  waiting(tenantId: string): number {
    return this.lines.get(tenantId)?.waiting.length ?? 0;
  }

  /**
   * A turn for a request of `tenantId`, once one is free; refused at once when `queue`
   * requests of the tenant already wait. `gone` aborted while the request waits: it
   * rejects with the signal's reason and takes no turn.
   */
  async take(tenantId: string, gone: AbortSignal): Promise<Turn> {
    gone.throwIfAborted();
    const line = this.lines.get(tenantId) ?? { active: 0, waiting: [] };
    this.lines.set(tenantId, line);
    if (line.active < this.limits.concurrency) {
      line.active += 1;
      return { granted: true, leave: this.leaver(tenantId, line) };
    }
    if (line.waiting.length >= this.limits.queue) return { granted: false };
    await new Promise<void>((granted, failed) => {
      const onGone = () => {
        line.waiting.splice(line.waiting.indexOf(grant), 1);
        this.forgetIfIdle(tenantId, line);
        failed(gone.reason);
      };
      const grant = () => {
        gone.removeEventListener('abort', onGone);
        granted();
      };
      line.waiting.push(grant);
      gone.addEventListener('abort', onGone, { once: true });
    });
    // The turn was handed over by the request that left (`leaver`): `active` already counts it.
    return { granted: true, leave: this.leaver(tenantId, line) };
  }

  /** Gives the turn to the first request waiting, or back to the tenant; once, however often called. */
  private leaver(tenantId: string, line: TenantLine): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = line.waiting.shift();
      if (next) next();
      else {
        line.active -= 1;
        this.forgetIfIdle(tenantId, line);
      }
    };
  }

  private forgetIfIdle(tenantId: string, line: TenantLine): void {
    if (line.active === 0 && line.waiting.length === 0 && this.lines.get(tenantId) === line)
      this.lines.delete(tenantId);
  }
}
