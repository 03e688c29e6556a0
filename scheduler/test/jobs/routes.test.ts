import { beforeEach, describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { newId } from '../../src/ids.ts';
import { type Caller, FORBIDDEN_BODY, useTestContext } from '../support/context.ts';
import { enqueueJobs } from '../support/jobs.ts';

/** GET /api/v1/jobs: an admin reads the tenant's background jobs, the dead ones first of all. */
let admin: Caller;
let employee: Caller;
let otherAdmin: Caller;

// No worker: the jobs stay as the test writes them.
const t = useTestContext({ jobs: { concurrency: 0 } });
beforeEach(async () => {
  ({ admin, employee } = await t.ctx.freshTenant());
  ({ admin: otherAdmin } = await t.ctx.freshTenant());
});

/** Jobs of the admin's tenant: `dead` given up with an error, the others pending. */
async function jobs(tenantId: string, states: ('pending' | 'dead')[]): Promise<string[]> {
  const ids = states.map(() => newId());
  await asTenant(tenantId, () =>
    enqueueJobs(
      t.ctx.db.db,
      ids.map((id, i) => ({
        tenant_id: tenantId,
        id,
        kind: 'push' as const,
        key: `n${i}:s${i}`,
        payload: {},
        max_attempts: 5,
      })),
    ),
  );
  for (const [i, state] of states.entries()) {
    if (state !== 'dead') continue;
    await t.ctx.db.owner
      .updateTable('jobs')
      .set({ status: 'dead', attempts: 5, finished_at: '2026-11-26T10:00:00Z', last_error: 'HTTP 500' })
      .where('id', '=', ids[i] as string)
      .execute();
  }
  return ids;
}

describe('GET /api/v1/jobs', () => {
  it('lists the tenant’s jobs newest first, filtered by status and kind, bounded by limit', async () => {
    const [first, dead, last] = await jobs(admin.tenantId, ['pending', 'dead', 'pending']);
    const all = await admin.request('GET', '/api/v1/jobs');
    expect(all.statusCode).toBe(200);
    expect(all.json().map((j: { id: string }) => j.id)).toEqual([last, dead, first]);
    const given = await admin.request('GET', '/api/v1/jobs?status=dead&kind=push');
    expect(given.json()).toEqual([
      {
        id: dead,
        kind: 'push',
        key: 'n1:s1',
        status: 'dead',
        attempts: 5,
        max_attempts: 5,
        run_at: expect.stringMatching(/Z$/),
        last_error: 'HTTP 500',
        created_at: expect.stringMatching(/Z$/),
        finished_at: '2026-11-26T10:00:00.000Z',
      },
    ]);
    expect(
      (await admin.request('GET', '/api/v1/jobs?limit=1')).json().map((j: { id: string }) => j.id),
    ).toEqual([last]); // A webhook's job beside them: each kind on its own.
    const hook = newId();
    await asTenant(admin.tenantId, () =>
      enqueueJobs(t.ctx.db.db, [
        {
          tenant_id: admin.tenantId,
          id: hook,
          kind: 'webhook',
          key: 'hook:1',
          payload: {},
          max_attempts: 100,
        },
      ]),
    );
    const byKind = async (kind: string) =>
      (await admin.request('GET', `/api/v1/jobs?kind=${kind}`)).json().map((j: { id: string }) => j.id);
    expect(await byKind('webhook')).toEqual([hook]);
    expect(await byKind('push')).toEqual([last, dead, first]);
  });

  it('is for admins only', async () => {
    const response = await employee.request('GET', '/api/v1/jobs');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it('shows nothing of another tenant', async () => {
    await jobs(admin.tenantId, ['dead', 'pending']);
    const response = await otherAdmin.request('GET', '/api/v1/jobs');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([]);
  });

  it.each([
    ['status=lost', 'status: must be equal to constant'],
    ['kind=mail', 'kind: must be equal to constant'],
    ['limit=0', 'limit: must be a whole number from 1 to 500'],
    ['limit=501', 'limit: must be a whole number from 1 to 500'],
    ['limit=ten', 'limit: must be a whole number from 1 to 500'],
    ['limit=', 'limit: must be a whole number from 1 to 500'],
    ['tenant_id=x', 'tenant_id: is not an allowed field'],
  ])('refuses %s with 422 and changes nothing', async (query, message) => {
    const response = await admin.request('GET', `/api/v1/jobs?${query}`);
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
    expect(response.json().error.message).toBe(message);
  });
});
