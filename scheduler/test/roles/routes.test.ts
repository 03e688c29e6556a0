import { describe, expect, it } from 'vitest';
import { FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { runSql } from '../support/database.ts';
import { layDownSlot } from '../support/shifts.ts';

// Fresh, provisioned tenants per test: no test sees what another created.
const t = useRouteTests();

const NOT_FOUND = { error: { code: 'NOT_FOUND', message: 'role not found' } };

describe('POST /api/v1/roles', () => {
  it('creates a role: 201 with the record, ids as 32 hex digits', async () => {
    const response = await t.admin.request('POST', '/api/v1/roles', {
      name: '  Bartender ',
      description: 'Serves drinks',
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: t.admin.tenantId,
      name: 'Bartender',
      description: 'Serves drinks',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('refuses a duplicate name in the same tenant with 409 DUPLICATE, allows it in another tenant', async () => {
    await t.admin.request('POST', '/api/v1/roles', { name: 'Cashier' });
    const duplicate = await t.admin.request('POST', '/api/v1/roles', { name: 'Cashier' });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toEqual({
      error: { code: 'DUPLICATE', message: 'a role named "Cashier" already exists' },
    });
    expect((await t.otherAdmin.request('POST', '/api/v1/roles', { name: 'Cashier' })).statusCode).toBe(201);
  });

  it.each([
    ['trimmed', '  Serves drinks \n', 'Serves drinks'],
    ['blank, stored as null', '   ', null],
    ['empty, stored as null', '', null],
    ['null', null, null],
    ['absent', undefined, null],
  ])('stores a description that is %s', async (_label, description, stored) => {
    const response = await t.admin.request('POST', '/api/v1/roles', {
      name: 'Bartender',
      ...(description === undefined ? {} : { description }),
    });
    expect(response.statusCode).toBe(201);
    expect(response.json().description).toBe(stored);
    expect((await t.admin.request('GET', '/api/v1/roles')).json()).toEqual([response.json()]);
  });

  it('tells apart names only by their trimmed text', async () => {
    await t.admin.request('POST', '/api/v1/roles', { name: 'Cashier' });
    const duplicate = await t.admin.request('POST', '/api/v1/roles', { name: ' Cashier  ' });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toEqual({
      error: { code: 'DUPLICATE', message: 'a role named "Cashier" already exists' },
    });
  });

  it('answers the fixed 403 to an employee and creates nothing', async () => {
    const response = await t.employee.request('POST', '/api/v1/roles', { name: 'Sneaky' });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    const names = (await t.admin.request('GET', '/api/v1/roles')).json().map((r: { name: string }) => r.name);
    expect(names).not.toContain('Sneaky');
  });

  it("does not call a clash of another key (the audit log's) a duplicate name", async () => {
    // Audit rows whose keys the identity sequence will hand out next, as an import that
    // wrote the log with its own numbers and left the sequence behind would leave them:
    // the role's audit row collides with one, on audit_log_pkey, not on the role's name.
    await runSql(
      t.ctx.db.owner,
      `INSERT INTO audit_log (tenant_id, seq, id, action, target_type, target_id, changes)
       OVERRIDING SYSTEM VALUE
       SELECT ?::uuid, s + n, gen_random_uuid(), 'role.created', 'role', gen_random_uuid(), '{}'
         FROM (SELECT nextval(pg_get_serial_sequence('audit_log', 'seq')) AS s) AS next,
              generate_series(1, 3) AS n`,
      t.admin.tenantId,
    );
    const response = await t.admin.request('POST', '/api/v1/roles', { name: 'Usher' });
    // The handler's answer to a refusal no service names: not the feature's DUPLICATE,
    // and nothing of the SQL.
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: {
        code: 'INVALID_STATE',
        message: 'the request conflicts with a change made at the same time; reload and try again',
      },
    });
    expect((await t.admin.request('GET', '/api/v1/roles')).json()).toEqual([]);
  });

  it.each([
    [{}, 'name: is required'],
    [{ name: 42 }, 'name: must be string'],
    [{ name: '' }, 'name: must NOT have fewer than 1 characters'],
    [{ name: '   ' }, 'name: must not be blank'],
    [{ name: 'x'.repeat(101) }, 'name: must NOT have more than 100 characters'],
    [{ name: 'ok', description: 5 }, 'description: must be string,null'],
    [{ name: 'ok', colour: 'red' }, 'colour: is not an allowed field'],
  ])('answers 422 for %j', async (body, message) => {
    const response = await t.admin.request('POST', '/api/v1/roles', body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
  });
});

describe('GET /api/v1/roles', () => {
  it('lists only the caller tenant roles, by name, for admins and employees', async () => {
    await t.admin.request('POST', '/api/v1/roles', { name: 'Usher' });
    await t.otherAdmin.request('POST', '/api/v1/roles', { name: 'Foreign' });
    const list = await t.employee.request('GET', '/api/v1/roles');
    expect(list.statusCode).toBe(200);
    await t.admin.request('POST', '/api/v1/roles', { name: 'Bouncer' });
    const names = list.json().map((r: { name: string }) => r.name);
    expect(names).toEqual(['Usher']);
    const sorted = (await t.employee.request('GET', '/api/v1/roles'))
      .json()
      .map((r: { name: string }) => r.name);
    expect(sorted).toEqual(['Bouncer', 'Usher']);
    for (const role of list.json()) expect(role.tenant_id).toBe(t.admin.tenantId);
  });
});

describe('DELETE /api/v1/roles/{id}', () => {
  it('deletes a role: 204 with an empty body; hyphenated ids work too', async () => {
    const created = (await t.admin.request('POST', '/api/v1/roles', { name: 'Temp' })).json();
    const hyphenated = created.id.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
    const response = await t.admin.request('DELETE', `/api/v1/roles/${hyphenated}`);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect((await t.admin.request('DELETE', `/api/v1/roles/${created.id}`)).json()).toEqual(NOT_FOUND);
  });

  it('answers 404 for a role of another tenant, and the role survives', async () => {
    const foreign = (await t.otherAdmin.request('POST', '/api/v1/roles', { name: 'Keep me' })).json();
    const response = await t.admin.request('DELETE', `/api/v1/roles/${foreign.id}`);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual(NOT_FOUND);
    const names = (await t.otherAdmin.request('GET', '/api/v1/roles'))
      .json()
      .map((r: { name: string }) => r.name);
    expect(names).toContain('Keep me');
  });

  it('answers 404 for a malformed id', async () => {
    const response = await t.admin.request('DELETE', '/api/v1/roles/not-a-uuid');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual(NOT_FOUND);
  });

  it('answers the fixed 403 to an employee, and the role survives', async () => {
    const role = (await t.admin.request('POST', '/api/v1/roles', { name: 'Guarded' })).json();
    const response = await t.employee.request('DELETE', `/api/v1/roles/${role.id}`);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    expect((await t.admin.request('GET', '/api/v1/roles')).json().map((r: { id: string }) => r.id)).toContain(
      role.id,
    );
  });

  it('removes the qualifications that granted the role', async () => {
    const role = (await t.admin.request('POST', '/api/v1/roles', { name: 'Short-lived' })).json();
    await t.employee.request('GET', '/api/v1/me/qualifications');
    await t.admin.request('POST', `/api/v1/users/${t.employee.userId}/qualifications/${role.id}`);
    await t.admin.request('DELETE', `/api/v1/roles/${role.id}`);
    const mine = (await t.employee.request('GET', '/api/v1/me/qualifications')).json();
    expect(mine.map((r: { id: string }) => r.id)).not.toContain(role.id);
  });

  it('refuses with 409 INVALID_STATE while shift slots need the role', async () => {
    const role = (await t.admin.request('POST', '/api/v1/roles', { name: 'Needed' })).json();
    await layDownSlot(t.ctx.db.owner, t.admin.tenantId, role.id);

    const response = await t.admin.request('DELETE', `/api/v1/roles/${role.id}`);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'role is required by shift slots; remove those slots first' },
    });
    expect((await t.admin.request('GET', '/api/v1/roles')).json().map((r: { id: string }) => r.id)).toEqual([
      role.id,
    ]);
  });

  it('deletes a role while slots need only other roles', async () => {
    const needed = (await t.admin.request('POST', '/api/v1/roles', { name: 'Needed' })).json();
    const free = (await t.admin.request('POST', '/api/v1/roles', { name: 'Free' })).json();
    await layDownSlot(t.ctx.db.owner, t.admin.tenantId, needed.id);
    expect((await t.admin.request('DELETE', `/api/v1/roles/${free.id}`)).statusCode).toBe(204);
    expect((await t.admin.request('GET', '/api/v1/roles')).json().map((r: { id: string }) => r.id)).toEqual([
      needed.id,
    ]);
  });
});
