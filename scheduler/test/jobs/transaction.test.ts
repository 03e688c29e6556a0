import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { type Deps, systemClock } from '../../src/deps.ts';
import { SlidingWindowLimiter } from '../../src/forms/submit-limit.ts';

import { queueJobRuns } from '../../src/jobs/queue.ts';
import { inTransaction } from '../../src/jobs/transaction.ts';
import { OutboundPolicy } from '../../src/outbound/destinations.ts';
import { noGeocoder } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * A change and the work it queues in one transaction (src/jobs/transaction.ts): both
 * commit or neither does, and the worker is woken once they have.
 */
let handle: TestDatabase;

beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(async () => handle?.dispose());

async function setUp() {
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
      .then((rows) => rows.map((row) => row.key));
  const deps: Deps = {
    db: handle.db,
    clock: systemClock,
    geocoder: noGeocoder,
    log: pino({ level: 'silent' }),
    submitLimiter: new SlidingWindowLimiter({ max: 10, windowMs: 60_000 }),
    jobs: { kick: () => kicks.push([]) },
    pushAttempts: 3,
    outbound: new OutboundPolicy(),
    documents: null,
    publicBaseUrl: null,
  };
  const job = (key: string) => ({ kind: 'push' as const, key, payload: {}, maxAttempts: 3 });
  return { tenantId, deps, kicks, keys, job };
}

describe('inTransaction', () => {
  it('commits the work with the jobs it queued, answers its result and wakes the worker once', async () => {
    const { tenantId, deps, kicks, keys, job } = await setUp();
    const result = await asTenant(tenantId, () =>
      inTransaction(deps, async (tx) => {
        // The same dependencies, with the transaction as the database.
        expect(tx.db).not.toBe(deps.db);
        expect(tx.clock).toBe(deps.clock);
        await queueJobRuns(tx.db, tenantId, [job('a'), job('b')]);
        return 'made';
      }),
    );
    expect(result).toBe('made');
    expect((await keys()).sort()).toEqual(['a', 'b']);
    expect(kicks).toHaveLength(1);
  });

  it('keeps nothing of work that fails, and wakes no worker', async () => {
    const { tenantId, deps, kicks, keys, job } = await setUp();
    const failed = asTenant(tenantId, () =>
      inTransaction(deps, async (tx) => {
        await queueJobRuns(tx.db, tenantId, [job('lost')]);
        throw new Error('the change was refused');
      }),
    );
    await expect(failed).rejects.toThrow('the change was refused');
    expect(await keys()).toEqual([]);
    expect(kicks).toEqual([]);
  });
});
