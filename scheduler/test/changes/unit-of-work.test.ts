import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InUnit, on, unitOfWork } from '../../src/changes/unit-of-work.ts';
import type { Db } from '../../src/db/database.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import type { Deps } from '../../src/deps.ts';
import { queueJobRuns } from '../../src/jobs/queue.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { depsOver } from '../support/units.ts';

/**
 * The one way the scheduler writes (src/changes/unit-of-work.ts): a change, what it
 * records and everything its reactions do commit together or not at all; the audit
 * action of the change names its rows; the worker is woken once it has committed.
 */
let handle: TestDatabase;

beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(async () => handle?.dispose());

async function setUp(reactions: Deps['reactions'] = []) {
  const tenantId = randomUUID().replaceAll('-', '');
  await handle.owner
    .insertInto('tenants')
    .values({ id: tenantId, vapid_public_key: 'p', vapid_private_key: 'k' })
    .execute();
  const kicks: string[][] = [];
  const keys = () =>
    handle.owner
      .selectFrom('jobs')
      .select('key')
      .where('tenant_id', '=', tenantId)
      .execute()
      .then((rows) => rows.map((row) => row.key).sort());
  const deps = depsOver(handle.db, { jobs: { kick: () => kicks.push([]) }, reactions });
  const job = (key: string) => ({ kind: 'push' as const, key, payload: {}, maxAttempts: 3 });
  const by = { tenantId, userId: null };
  return { tenantId, deps, kicks, keys, job, by };
}

const auditAction = async (db: Db) =>
  (await sql<{ action: string }>`SELECT current_setting('app.audit_action', true) AS action`.execute(db))
    .rows[0]?.action;

describe('a unit of work', () => {
  it('commits the work with the jobs its reactions queued, answers its result and wakes the worker once', async () => {
    const queueing = [
      on<Deps, 'user.deactivated'>(['user.deactivated'], 'test', async (tx) => {
        await queueJobRuns(tx.db, tx.by.tenantId, [
          { kind: 'push', key: 'a', payload: {}, maxAttempts: 3 },
          { kind: 'push', key: 'b', payload: {}, maxAttempts: 3 },
        ]);
      }),
    ];
    const { tenantId, deps, kicks, keys, by } = await setUp(queueing);
    const result = await asTenant(tenantId, () =>
      unitOfWork(deps, by, 'user.updated', async (tx) => {
        // The same dependencies, with the transaction as the database.
        expect(tx.db).not.toBe(deps.db);
        expect(tx.db.isTransaction).toBe(true);
        expect(tx.clock).toBe(deps.clock);
        expect(tx.by).toBe(by);
        await tx.record({ type: 'user.deactivated', userId: 'u1', at: new Date() });
        await tx.record({ type: 'user.deactivated', userId: 'u1', at: new Date() });
        return 'made';
      }),
    );
    expect(result).toBe('made');
    expect(await keys()).toEqual(['a', 'b']);
    expect(kicks).toHaveLength(1);
  });

  it('wakes no worker for a change nobody reacts to', async () => {
    const { tenantId, deps, kicks, keys, job, by } = await setUp();
    await asTenant(tenantId, () =>
      unitOfWork(deps, by, 'user.created', async (tx) => {
        await tx.record({ type: 'user.created', userId: 'u1' });
        await queueJobRuns(tx.db, tenantId, [job('queued by no reaction')]);
      }),
    );
    expect(await keys()).toEqual(['queued by no reaction']);
    expect(kicks).toEqual([]);
  });

  it('keeps nothing of work that fails, and wakes no worker', async () => {
    const { tenantId, deps, kicks, keys, job, by } = await setUp();
    const failed = asTenant(tenantId, () =>
      unitOfWork(deps, by, 'user.created', async (tx) => {
        await queueJobRuns(tx.db, tenantId, [job('lost')]);
        throw new Error('the change was refused');
      }),
    );
    await expect(failed).rejects.toThrow('the change was refused');
    expect(await keys()).toEqual([]);
    expect(kicks).toEqual([]);
  });

  it('lets the reactions to what it records act at once, in the order of the list, in its transaction', async () => {
    const heard: string[] = [];
    const reactions = [
      on<Deps, 'user.deactivated'>(['user.deactivated'], 'first', async (tx, change) => {
        expect(tx.db.isTransaction).toBe(true);
        heard.push(`first:${change.userId}`);
        await queueJobRuns(tx.db, tx.by.tenantId, [
          { kind: 'push', key: `first-${change.userId}`, payload: {}, maxAttempts: 1 },
        ]);
      }),
      on<Deps, 'user.deactivated' | 'user.created'>(
        ['user.created', 'user.deactivated'],
        'second',
        async (_, change) => {
          heard.push(`second:${change.type}`);
        },
      ),
    ];
    const { tenantId, deps, keys, by } = await setUp(reactions);
    await asTenant(tenantId, () =>
      unitOfWork(deps, by, 'user.updated', async (tx) => {
        await tx.record({ type: 'user.deactivated', userId: 'u1', at: new Date() });
        // Recorded and reacted to before the service goes on.
        expect(heard).toEqual(['first:u1', 'second:user.deactivated']);
        // A change nobody reacts to changes nothing.
        await tx.record({ type: 'user.updated', userId: 'u1' });
      }),
    );
    expect(heard).toEqual(['first:u1', 'second:user.deactivated']);
    expect(await keys()).toEqual(['first-u1']);
  });

  it('wakes the worker when only a nested change had reactions', async () => {
    const reactions = [on<Deps, 'notifications.staged'>(['notifications.staged'], 'test', async () => {})];
    const { tenantId, deps, kicks, by } = await setUp(reactions);
    await asTenant(tenantId, () =>
      unitOfWork(deps, by, 'reminder.sent', (tx) =>
        unitOfWork(tx, tx.by, 'offers.cancelled', (inner) =>
          inner.record({ type: 'notifications.staged', notificationIds: [] }),
        ),
      ),
    );
    expect(kicks).toHaveLength(1);
  });

  it('rolls the whole change back when a reaction fails', async () => {
    const reactions = [
      on<Deps, 'user.deactivated'>(['user.deactivated'], 'failing', async () => {
        throw new Error('the reaction failed');
      }),
    ];
    const { tenantId, deps, kicks, keys, job, by } = await setUp(reactions);
    const failed = asTenant(tenantId, () =>
      unitOfWork(deps, by, 'user.updated', async (tx) => {
        await queueJobRuns(tx.db, tenantId, [job('the change itself')]);
        await tx.record({ type: 'user.deactivated', userId: 'u1', at: new Date() });
      }),
    );
    await expect(failed).rejects.toThrow('the reaction failed');
    expect(await keys()).toEqual([]);
    expect(kicks).toEqual([]);
  });

  it("names the catalogue's audit action, and a nested unit names its own and gives the outer one back", async () => {
    const seen: (string | undefined)[] = [];
    const reactions = [
      on<Deps, 'seat.withdrawn'>(['seat.withdrawn'], 'offers', async (tx: InUnit<Deps>) => {
        seen.push(await auditAction(tx.db));
        await unitOfWork(tx, tx.by, 'offers.cancelled', async (inner) => {
          // No second transaction: the same one, under the nested change's name.
          expect(inner.db).toBe(tx.db);
          seen.push(await auditAction(inner.db));
        });
        seen.push(await auditAction(tx.db));
        // A nested change without a name of its own keeps the outer one.
        await unitOfWork(tx, tx.by, 'user.updated', async (inner) => {
          seen.push(await auditAction(inner.db));
        });
      }),
    ];
    const { tenantId, deps, kicks, by } = await setUp(reactions);
    const seat = { id: 's', shift_id: 'h', slot_id: 'l', user_id: 'u' };
    await asTenant(tenantId, () =>
      unitOfWork(deps, by, 'seat.withdrawn', (tx) => tx.record({ type: 'seat.withdrawn', seat })),
    );
    expect(seen).toEqual([
      'assignment.withdrawn',
      'offer.cancelled',
      'assignment.withdrawn',
      'assignment.withdrawn',
    ]);
    // The nested units opened no transaction, so they woke nobody: the outer one did, once.
    expect(kicks).toHaveLength(1);
    // A nested change that fails and is given up gives the outer one its name back too.
    const after = await asTenant(tenantId, () =>
      unitOfWork(deps, by, 'seat.unassigned', async (tx) => {
        const nested = unitOfWork(tx, tx.by, 'offers.cancelled', async () => {
          throw new Error('nothing to cancel');
        });
        // The nested change's failure is its caller's to handle, as it was thrown.
        await expect(nested).rejects.toThrow('nothing to cancel');
        return auditAction(tx.db);
      }),
    );
    expect(after).toBe('assignment.unassigned');
    // A change without an audit name leaves the setting empty: rows keep their plain names.
    const plain = await asTenant(tenantId, () =>
      unitOfWork(deps, by, 'user.updated', async (tx) => auditAction(tx.db)),
    );
    expect(plain ?? '').toBe('');
  });
});
