import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.ts';
import { type DbHooks, on, withDbHooks } from '../support/db-hooks.ts';
import { layDownSlot } from '../support/shifts.ts';

/**
 * What the roles service does when the database changes between its check and its write,
 * and when a write fails for a reason it does not handle: the database has the last word,
 * and nothing is reported as done that was not. The same for granting a qualification:
 * test/users/races.test.ts.
 */
let ctx: TestContext;
let hooks: DbHooks;

beforeAll(async () => {
  ctx = await createTestContext({
    viewDb: (db) => {
      hooks = withDbHooks(db);
      return hooks.db;
    },
  });
});
afterAll(async () => ctx?.close());

const diskFull = () =>
  Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' });
const roleNames = async (request: (m: 'GET', u: string) => Promise<{ json(): unknown }>) =>
  ((await request('GET', '/api/v1/roles')).json() as { name: string }[]).map((r) => r.name);

describe('deleting a role', () => {
  it('answers 409 when a slot starts needing the role between the check and the delete', async () => {
    const { admin } = await ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Raced' })).json();
    hooks.afterNext(on('select', 'shift_slots'), () => layDownSlot(ctx.db.owner, admin.tenantId, role.id));
    const response = await admin.request('DELETE', `/api/v1/roles/${role.id}`);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'role is required by shift slots; remove those slots first' },
    });
    expect(await roleNames(admin.request)).toEqual(['Raced']);
  });

  it('reports a failed delete as a failure, never as done', async () => {
    const { admin } = await ctx.freshTenant();
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
    const { admin } = await ctx.freshTenant();
    hooks.failNext(on('insert', 'roles'), diskFull());
    const response = await admin.request('POST', '/api/v1/roles', { name: 'Lost' });
    // A full disk is an outage an operator mends: 503, and nothing changed.
    expect(response.statusCode).toBe(503);
    expect(response.json().error.code).toBe('SERVICE_UNAVAILABLE');
    expect(await roleNames(admin.request)).toEqual([]);
  });
});
