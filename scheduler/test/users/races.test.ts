import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.ts';
import { type DbHooks, on, withDbHooks } from '../support/db-hooks.ts';

/**
 * Granting a qualification when the database changes between the check and the write,
 * or the write fails: the database has the last word, and nothing is reported as done
 * that was not. The same for roles: test/roles/races.test.ts.
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

describe('granting a qualification', () => {
  it('answers 404 when the role is deleted between the check and the grant', async () => {
    const { admin, employee } = await ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Vanishing' })).json();
    hooks.afterNext(on('select', 'roles'), async () => {
      await ctx.db.owner.deleteFrom('roles').where('id', '=', role.id).execute();
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
