import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/context.ts';
import { type DbHooks, on, withDbHooks } from './support/db-hooks.ts';
import { layDownSlot } from './support/shifts.ts';

/**
 * What services do when the database changes between their check and their write, and
 * when a write fails for a reason they do not handle: the database has the last word,
 * and nothing is reported as done that was not.
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
    hooks.afterNext(on('select', 'shift_slots'), () => layDownSlot(ctx.db.db, admin.tenantId, role.id));
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
    expect(response.statusCode).toBe(500);
    expect(response.json().error.code).toBe('INTERNAL');
    expect(await roleNames(admin.request)).toEqual(['Kept']);
  });
});

describe('creating a role', () => {
  it('reports a failed insert as a failure, not as a duplicate', async () => {
    const { admin } = await ctx.freshTenant();
    hooks.failNext(on('insert', 'roles'), diskFull());
    const response = await admin.request('POST', '/api/v1/roles', { name: 'Lost' });
    expect(response.statusCode).toBe(500);
    expect(response.json().error.code).toBe('INTERNAL');
    expect(await roleNames(admin.request)).toEqual([]);
  });
});

describe('granting a qualification', () => {
  it('answers 404 when the role is deleted between the check and the grant', async () => {
    const { admin, employee } = await ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Vanishing' })).json();
    hooks.afterNext(on('select', 'roles'), async () => {
      await ctx.db.db.deleteFrom('roles').where('id', '=', role.id).execute();
    });
    const response = await admin.request(
      'POST',
      `/api/v1/users/${employee.userId}/qualifications/${role.id}`,
    );
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'role not found' } });
    expect((await employee.request('GET', '/api/v1/me/qualifications')).json()).toEqual([]);
  });

  it('reports a failed grant as a failure, never as done', async () => {
    const { admin, employee } = await ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Ungranted' })).json();
    hooks.failNext(on('insert', 'user_qualifications'), diskFull());
    const response = await admin.request(
      'POST',
      `/api/v1/users/${employee.userId}/qualifications/${role.id}`,
    );
    expect(response.statusCode).toBe(500);
    expect((await employee.request('GET', '/api/v1/me/qualifications')).json()).toEqual([]);
  });
});
