import { sql } from 'kysely';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { asBackground } from '../db/lanes.ts';
import { asTenant } from '../db/tenant-scope.ts';
import type { Deps } from '../deps.ts';
import { notificationSettings } from '../tenants/repository.ts';
import { stageNotifications } from './outbox.ts';
import { shiftWindow } from './wording.ts';

export interface ReminderOptions {
  /** How often due reminders are looked for. */
  intervalMs: number;
  /** Reminders queued in one look at most (the next look takes the rest). */
  batch: number;
}

export const defaultReminderOptions: ReminderOptions = { intervalMs: 60_000, batch: 500 };

/**
 * Reminds the people on a shift before it starts, when their tenant asks for it
 * (`remind_minutes_before_shift`). Every process with a job worker looks every minute;
 * each reminder is written with its `shift_reminders` row in one transaction, so an
 * assignment is reminded exactly once whichever process finds it and however often
 * processes restart (migration 0008). The reminder is a notification like any other:
 * stored, and sent to the person's browsers by the job queue.
 */
export class ReminderSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly deps: Deps,
    readonly options: ReminderOptions,
  ) {}

  private get log() {
    return this.deps.log;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      void this.sweep().catch((error: unknown) => this.log.error({ err: error }, 'shift reminders not sent'));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Queues the reminders due now; how many. One look at a time in this process. */
  sweep(): Promise<number> {
    // Background work: on the embedded database it waits for requests (db/lanes.ts).
    this.running ??= asBackground(() => this.sweepOnce()).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async sweepOnce(): Promise<number> {
    const { rows } = await sql<{ tenant_id: string; assignment_id: string }>`
      SELECT * FROM due_shift_reminders(${this.deps.clock.now().toISOString()}::timestamptz, ${this.options.batch})`.execute(
      this.deps.db,
    );
    let sent = 0;
    for (const due of rows) {
      try {
        if (await asTenant(due.tenant_id, () => this.remind(due.tenant_id, due.assignment_id))) sent++;
      } catch (error) {
        // One reminder's trouble (its assignment removed meanwhile) holds up no other.
        this.log.warn({ err: error, assignment: due.assignment_id }, 'shift reminder not sent');
      }
    }
    return sent;
  }

  /**
   * One reminder, with its row; false when another process (or an earlier look) sent it,
   * or when its person is deactivated.
   */
  private remind(tenantId: string, assignmentId: string): Promise<boolean> {
    // Background work: made by nobody; woken after the commit, the worker sends it.
    return unitOfWork(this.deps, { tenantId, userId: null }, 'reminder.sent', async (tx) => {
      const trx = tx.db;
      const claimed = await trx
        .insertInto('shift_reminders')
        .values({ tenant_id: tenantId, assignment_id: assignmentId })
        .onConflict((oc) => oc.columns(['tenant_id', 'assignment_id']).doNothing())
        .returning('assignment_id')
        .executeTakeFirst();
      if (!claimed) return false;
      await tx.record({ type: 'reminder.sent', assignmentId });
      const seat = await trx
        .selectFrom('shift_assignments as a')
        .innerJoin('shifts as s', (join) =>
          join.onRef('s.tenant_id', '=', 'a.tenant_id').onRef('s.id', '=', 'a.shift_id'),
        )
        .select(['a.user_id', 'a.shift_id', 's.name', 's.starts_at', 's.ends_at'])
        .where('a.tenant_id', '=', tenantId)
        .where('a.id', '=', assignmentId)
        .executeTakeFirstOrThrow();
      const style = await notificationSettings(trx, tenantId);
      // Nobody to tell (the person is deactivated): the reminder is spent all the same, so
      // their seats do not come back every look, and is not sent late on a reactivation.
      const staged = await stageNotifications(tx, [seat.user_id], {
        type: 'shift.reminder',
        title: `Reminder: ${seat.name}`,
        body: shiftWindow(seat.starts_at, seat.ends_at, style),
        data: { shift_id: seat.shift_id, assignment_id: assignmentId },
      });
      return staged.length > 0;
    });
  }
}
