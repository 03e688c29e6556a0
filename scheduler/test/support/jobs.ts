import { randomUUID } from 'node:crypto';
import { type RowColumns, unnestRows } from '../../src/db/arrays.ts';
import type { Db } from '../../src/db/database.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import type { JobKind } from '../../src/db/types.ts';

/**
 * Jobs as a test queues them, of any kind and payload (the application queues push
 * deliveries only through notifications/outbox.ts): one statement of one array per column
 * (src/db/arrays.ts), a key queued before left as it is, in the caller's tenant scope.
 */
export interface NewJob {
  tenant_id: string;
  id: string;
  kind: JobKind;
  key: string;
  payload: Record<string, unknown>;
  max_attempts: number;
}

const jobColumns: RowColumns<Omit<NewJob, 'payload'> & { payload: string }> = [
  ['tenant_id', 'uuid'],
  ['id', 'uuid'],
  ['kind', 'text'],
  ['key', 'text'],
  ['payload', 'jsonb'],
  ['max_attempts', 'integer'],
];

export async function enqueueJobs(db: Db, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await db
    .insertInto('jobs')
    .columns(jobColumns.map(([column]) => column))
    .expression(
      unnestRows(
        jobs.map((job) => ({ ...job, payload: JSON.stringify(job.payload) })),
        jobColumns,
      ),
    )
    .onConflict((oc) => oc.columns(['tenant_id', 'kind', 'key']).doNothing())
    .execute();
}

/**
 * Queues `count` push jobs of `tenantId`, due now, in its scope (as the application
 * would); their ids, in order.
 */
export async function queuePushJobs(
  db: Db,
  tenantId: string,
  count: number,
  maxAttempts = 3,
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID().replaceAll('-', ''));
  await asTenant(tenantId, () =>
    enqueueJobs(
      db,
      ids.map((id) => ({
        tenant_id: tenantId,
        id,
        kind: 'push' as const,
        key: `k-${id}`,
        payload: { n: id },
        max_attempts: maxAttempts,
      })),
    ),
  );
  return ids;
}

/** A tenant row and nothing else, for tests of the queue below the API; its wire id. */
export async function bareTenant(owner: Db): Promise<string> {
  const id = randomUUID().replaceAll('-', '');
  await owner.insertInto('tenants').values({ id, vapid_public_key: 'p', vapid_private_key: 'k' }).execute();
  return id;
}

/** A webhook row of `tenantId` (as the owner writes it, past the API); its id. */
export async function bareWebhook(owner: Db, tenantId: string, events: string[]): Promise<string> {
  const id = randomUUID().replaceAll('-', '');
  await owner
    .insertInto('webhooks')
    .values({
      tenant_id: tenantId,
      id,
      url: 'https://hooks.example.org/',
      events,
      secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    })
    .execute();
  return id;
}
