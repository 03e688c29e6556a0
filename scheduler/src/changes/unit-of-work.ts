import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { type ChangeType, catalogue } from './catalogue.ts';
import type { Change, ChangeOf } from './change.ts';

/** On whose behalf a change is made: the tenant, and the user (null for background work). */
export interface Actor {
  readonly tenantId: string;
  readonly userId: string | null;
}

/** What a unit of work adds to the context it was given. */
export interface ChangeScope {
  /** Whose change this is. */
  readonly by: Actor;
  /** Tells the reactions to `change` now, inside this transaction, one after the other. */
  record(change: Change): Promise<void>;
  /** The audit action named for this (possibly nested) unit; null: plain names. */
  readonly auditAction: string | null;
}

export type InUnit<Ctx> = Ctx & ChangeScope;

/** A feature's reaction to some changes; `by` names the feature for readers and logs. */
export interface Reaction<Ctx, T extends ChangeType = ChangeType> {
  readonly to: readonly T[];
  readonly by: string;
  // A method, so a list can hold reactions to different changes (parameters are bivariant).
  run(tx: InUnit<Ctx>, change: ChangeOf<T>): Promise<void>;
}

export type Reactions<Ctx> = readonly Reaction<Ctx, never>[];

/** A reaction of feature `by` to the changes `to` (src/reactions.ts lists them all). */
export function on<Ctx, T extends ChangeType>(
  to: readonly T[],
  by: string,
  run: (tx: InUnit<Ctx>, change: ChangeOf<T>) => Promise<void>,
): Reaction<Ctx, never> {
  return { to, by, run } as unknown as Reaction<Ctx, never>;
}

/** What a unit of work needs of its context. */
export interface UnitContext<Ctx> {
  db: Db;
  /** The job worker of this process, woken once the change commits (it may have queued work). */
  jobs: { kick(): void };
  reactions: Reactions<Ctx>;
  /** Told the changes of every unit once it commits (src/metrics/ counts them). */
  committed?: ((types: readonly ChangeType[]) => void) | undefined;
}

const byChange = new WeakMap<Reactions<unknown>, Map<ChangeType, Reaction<unknown, never>[]>>();

/** The reactions to `type`, in the order of the list. */
function reactionsTo<Ctx>(reactions: Reactions<Ctx>, type: ChangeType): readonly Reaction<Ctx, never>[] {
  let index = byChange.get(reactions as Reactions<unknown>);
  if (!index) {
    index = new Map();
    for (const reaction of reactions as Reactions<unknown>) {
      for (const to of reaction.to as readonly ChangeType[])
        index.set(to, [...(index.get(to) ?? []), reaction]);
    }
    byChange.set(reactions as Reactions<unknown>, index);
  }
  return (index.get(type) ?? []) as Reaction<Ctx, never>[];
}

const nameAuditAction = (db: Db, action: string | null) =>
  sql`SELECT set_config('app.audit_action', ${action ?? ''}, true)`.execute(db);

/**
 * The one way the scheduler writes: runs `work` in one transaction with a context whose
 * `db` is that transaction, first naming the audit action of `type` (src/changes/
 * catalogue.ts) for the rows it writes. What `work` records (`tx.record`) its reactions
 * handle at once, in the same transaction: the change and everything it causes (webhook
 * deliveries, notifications, settled offers) commit together or not at all. After the
 * commit this process's job worker is woken when a reaction ran (it may have queued work).
 *
 * Called with a context that is already inside a unit (a reaction making a change of its
 * own), it opens no second transaction: it names `type`'s audit action for `work` (when
 * it has one), then gives the outer unit its name back, whether `work` succeeded or not.
 * Inside a nested unit, use its context, not the outer one.
 *
 * Inside, use only the context given: the embedded database has one session, which the
 * transaction holds until it ends.
 */
export async function unitOfWork<Ctx extends UnitContext<Ctx>, T>(
  ctx: Ctx | InUnit<Ctx>,
  by: Actor,
  type: ChangeType,
  work: (tx: InUnit<Ctx>) => Promise<T>,
): Promise<T> {
  const audit = catalogue[type].audit;
  if ('record' in ctx) {
    const unit = units.get(ctx) ?? { reacted: false, recorded: [] };
    if (audit === null || audit === ctx.auditAction) {
      return work(inScope(ctx, ctx.db, by, ctx.auditAction, unit));
    }
    await nameAuditAction(ctx.db, audit);
    let result: T;
    try {
      result = await work(inScope(ctx, ctx.db, by, audit, unit));
    } catch (error) {
      // The outer unit may go on without the nested change: it gets its name back. After a
      // failed statement PostgreSQL refuses any other, and the error to tell is the first.
      await nameAuditAction(ctx.db, ctx.auditAction).catch(() => undefined);
      throw error;
    }
    await nameAuditAction(ctx.db, ctx.auditAction);
    return result;
  }
  const unit: Unit = { reacted: false, recorded: [] };
  const result = await ctx.db.transaction().execute(async (trx) => {
    if (audit !== null) await nameAuditAction(trx, audit);
    return work(inScope(ctx, trx, by, audit, unit));
  });
  // Only reactions queue work (webhook deliveries, pushes): a change nobody reacted to
  // costs the worker no look at the queue.
  if (unit.reacted) ctx.jobs.kick();
  ctx.committed?.(unit.recorded);
  return result;
}

/** What the scopes of one transaction share. */
interface Unit {
  /** Whether any reaction ran: then the worker is woken after the commit. */
  reacted: boolean;
  /** Every change recorded, the reactions' own included, in order. */
  recorded: ChangeType[];
}

const units = new WeakMap<ChangeScope, Unit>();

function inScope<Ctx extends UnitContext<Ctx>>(
  ctx: Ctx,
  db: Db,
  by: Actor,
  auditAction: string | null,
  unit: Unit,
): InUnit<Ctx> {
  const tx: InUnit<Ctx> = {
    ...ctx,
    db,
    by,
    auditAction,
    async record(change) {
      unit.recorded.push(change.type);
      for (const reaction of reactionsTo(ctx.reactions, change.type)) {
        unit.reacted = true;
        await reaction.run(tx, change as never);
      }
    },
  };
  units.set(tx, unit);
  return tx;
}
