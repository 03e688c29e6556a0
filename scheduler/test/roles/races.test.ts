import { describe, expect, it } from 'vitest';
import { useTestContext } from '../support/context.ts';
import { appDbHooks, diskFull, on } from '../support/db-hooks.ts';
import { layDownSlot } from '../support/shifts.ts';

/**
 * What the roles service does when the database changes between its check and its write,
 * and when a write fails for a reason it does not handle: the database has the last word,
 * and nothing is reported as done that was not. The same for granting a qualification:
 * test/users/races.test.ts.
 */
const hooks = appDbHooks();
const t = useTestContext({ viewDb: hooks.viewDb });

const roleNames = async (request: (m: 'GET', u: string) => Promise<{ json(): unknown }>) =>
  ((await request('GET', '/api/v1/roles')).json() as { name: string }[]).map((r) => r.name);

describe('deleting a role', () => {
  it('answers 409 when a slot starts needing the role between the check and the delete', async () => {
    const { admin } = await t.ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Raced' })).json();
    hooks.afterNext(on('select', 'shift_slots'), () => layDownSlot(t.ctx.db.owner, admin.tenantId, role.id));
    const response = await admin.request('DELETE', `/api/v1/roles/${role.id}`);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'role is required by shift slots; remove those slots first' },
    });
    expect(await roleNames(admin.request)).toEqual(['Raced']);
  });

  it('reports a failed delete as a failure, never as done', async () => {
    const { admin } = await t.ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Kept' })).json();
    hooks.failNext(on('delete', 'roles'), diskFull());
    const response = await admin.request('DELETE', `/api/v1/roles/${role.id}`);
    // A full disk is an outage an operator mends: 503, and nothing changed.
    expect(response.statusCode).toBe(503);
    expect(response.json().error.code).toBe('SERVICE_UNAVAILABLE');
    expect(await roleNames(admin.request)).toEqual(['Kept']);
  });
});

describe('creating a role', () => {
  it('reports a failed insert as a failure, not as a duplicate', async () => {
    const { admin } = await t.ctx.freshTenant();
    hooks.failNext(on('insert', 'roles'), diskFull());
    const response = await admin.request('POST', '/api/v1/roles', { name: 'Lost' });
    // A full disk is an outage an operator mends: 503, and nothing changed.
    expect(response.statusCode).toBe(503);
    expect(response.json().error.code).toBe('SERVICE_UNAVAILABLE');
    expect(await roleNames(admin.request)).toEqual([]);
  });
});
