import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type Caller,
  createTestContext,
  FORBIDDEN_BODY,
  type TestContext,
  uniqueName,
} from '../support/context.ts';

let ctx: TestContext;
let admin: Caller;
let employee: Caller;
let colleague: Caller;
let customer: Caller;
let otherAdmin: Caller;
let otherEmployee: Caller;
let medic: { id: string };
let driver: { id: string };
let foreignRole: { id: string };

beforeAll(async () => {
  ctx = await createTestContext();
});

// Two tenants of its own for every test, their users provisioned before it runs.
beforeEach(async () => {
  const a = uniqueName('tenant-a');
  const b = uniqueName('tenant-b');
  admin = await ctx.caller('admin', a, 'admin-1', { name: 'Ada Admin', email: 'ada@a.test' });
  employee = await ctx.caller('employee', a, 'emp-1', { name: 'Eve Employee' });
  colleague = await ctx.caller('employee', a, 'emp-2', { name: 'Carl Colleague' });
  customer = await ctx.caller('customer', a, 'cust-1', { customer: 'c-1' });
  otherAdmin = await ctx.caller('admin', b);
  otherEmployee = await ctx.caller('employee', b, 'emp-b');
  medic = (await admin.request('POST', '/api/v1/roles', { name: 'Medic' })).json();
  driver = (await admin.request('POST', '/api/v1/roles', { name: 'Driver' })).json();
  foreignRole = (await otherAdmin.request('POST', '/api/v1/roles', { name: 'Foreign' })).json();
});
afterAll(async () => ctx?.close());

const qualification = (userId: string, roleId: string) => `/api/v1/users/${userId}/qualifications/${roleId}`;

describe('GET /api/v1/users', () => {
  it('lists the admins and employees of the tenant, never customers or other tenants', async () => {
    const response = await admin.request('GET', '/api/v1/users');
    expect(response.statusCode).toBe(200);
    const users = response.json();
    expect(users.map((u: { id: string }) => u.id).sort()).toEqual(
      [admin.userId, employee.userId, colleague.userId].sort(),
    );
    expect(users.find((u: { id: string }) => u.id === employee.userId)).toEqual({
      id: employee.userId,
      tenant_id: admin.tenantId,
      role: 'employee',
      display_name: 'Eve Employee',
      email: null,
      created_at: expect.stringMatching(/Z$/),
    });
  });

  it('answers the fixed 403 to an employee', async () => {
    const response = await employee.request('GET', '/api/v1/users');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('GET /api/v1/users/{id}', () => {
  it('gives an admin any user of the tenant with qualifications', async () => {
    await admin.request('POST', qualification(employee.userId, medic.id));
    const response = await admin.request('GET', `/api/v1/users/${employee.userId}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      id: employee.userId,
      role: 'employee',
      qualifications: [expect.objectContaining({ id: medic.id, name: 'Medic', tenant_id: admin.tenantId })],
    });
  });

  it('lets an employee read their own record, and answers 403 for a colleague', async () => {
    expect((await employee.request('GET', `/api/v1/users/${employee.userId}`)).statusCode).toBe(200);
    const response = await employee.request('GET', `/api/v1/users/${colleague.userId}`);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it('answers 404 for a user of another tenant, a customer, an unknown and a malformed id', async () => {
    for (const id of [otherEmployee.userId, customer.userId, 'ffffffffffffffffffffffffffffffff', 'nope']) {
      const response = await admin.request('GET', `/api/v1/users/${id}`);
      expect(response.statusCode, id).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'user not found' } });
    }
  });
});

describe('qualifications', () => {
  it('grants idempotently (204, 204) and shows up in /me/qualifications, sorted by name', async () => {
    for (let i = 0; i < 2; i++) {
      const response = await admin.request('POST', qualification(colleague.userId, driver.id));
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
    }
    await admin.request('POST', qualification(colleague.userId, medic.id));
    const mine = await colleague.request('GET', '/api/v1/me/qualifications');
    expect(mine.statusCode).toBe(200);
    expect(mine.json().map((r: { name: string }) => r.name)).toEqual(['Driver', 'Medic']);
  });

  it('revokes idempotently', async () => {
    await admin.request('POST', qualification(colleague.userId, driver.id));
    expect((await admin.request('DELETE', qualification(colleague.userId, driver.id))).statusCode).toBe(204);
    expect((await admin.request('DELETE', qualification(colleague.userId, driver.id))).statusCode).toBe(204);
    const names = (await colleague.request('GET', '/api/v1/me/qualifications'))
      .json()
      .map((r: { name: string }) => r.name);
    expect(names).not.toContain('Driver');
  });

  it('answers 404 across tenants: a foreign user, a foreign role; nothing is granted', async () => {
    const foreignUser = await admin.request('POST', qualification(otherEmployee.userId, medic.id));
    expect(foreignUser.statusCode).toBe(404);
    expect(foreignUser.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'user not found' } });
    const foreign = await admin.request('POST', qualification(employee.userId, foreignRole.id));
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'role not found' } });
    const otherSide = await otherAdmin.request('POST', qualification(employee.userId, foreignRole.id));
    expect(otherSide.statusCode).toBe(404);
    const names = (await employee.request('GET', '/api/v1/me/qualifications'))
      .json()
      .map((r: { name: string }) => r.name);
    expect(names).not.toContain('Foreign');
  });

  it('answers 404 for malformed ids', async () => {
    expect((await admin.request('POST', qualification('bad', medic.id))).statusCode).toBe(404);
    expect((await admin.request('POST', qualification(employee.userId, 'bad'))).statusCode).toBe(404);
  });

  it('answers the fixed 403 to an employee granting or revoking, and changes nothing', async () => {
    await admin.request('POST', qualification(employee.userId, medic.id));
    for (const method of ['POST', 'DELETE'] as const) {
      const response = await employee.request(method, qualification(employee.userId, driver.id));
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
    const names = (await employee.request('GET', '/api/v1/me/qualifications'))
      .json()
      .map((r: { name: string }) => r.name);
    expect(names).toEqual(['Medic']);
  });

  it('gives /me/qualifications an empty array for a user without any', async () => {
    const response = await otherEmployee.request('GET', '/api/v1/me/qualifications');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([]);
  });

  it('answers the fixed 403 to a customer on /me/qualifications', async () => {
    const response = await customer.request('GET', '/api/v1/me/qualifications');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('ordering', () => {
  it('lists users by display name, nameless ones last, ties by id', async () => {
    const tenant = uniqueName('order');
    const zoe = await ctx.caller('employee', tenant, 'zoe', { name: 'Zoe' });
    const nameless = await ctx.caller('employee', tenant, 'nameless');
    const samA = await ctx.caller('employee', tenant, 'sam-a', { name: 'Sam' });
    const boss = await ctx.caller('admin', tenant, 'boss', { name: 'Ann' });
    const samB = await ctx.caller('employee', tenant, 'sam-b', { name: 'Sam' });
    const sams = [samA.userId, samB.userId].sort();
    const response = await boss.request('GET', '/api/v1/users');
    expect(response.json().map((u: { id: string }) => u.id)).toEqual([
      boss.userId,
      ...sams,
      zoe.userId,
      nameless.userId,
    ]);
    expect(response.json()[0]).toMatchObject({ role: 'admin', display_name: 'Ann' });
  });

  it('lists qualifications by role name, whatever the order they were granted in', async () => {
    await admin.request('POST', qualification(employee.userId, medic.id));
    await admin.request('POST', qualification(employee.userId, driver.id));
    const names = (list: { name: string }[]) => list.map((r) => r.name);
    expect(names((await employee.request('GET', '/api/v1/me/qualifications')).json())).toEqual([
      'Driver',
      'Medic',
    ]);
    expect(
      names((await admin.request('GET', `/api/v1/users/${employee.userId}`)).json().qualifications),
    ).toEqual(['Driver', 'Medic']);
  });
});

describe('user detail', () => {
  it('gives the whole record with the whole role definitions', async () => {
    await admin.request('POST', qualification(employee.userId, medic.id));
    const response = await employee.request('GET', `/api/v1/users/${employee.userId}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      id: employee.userId,
      tenant_id: admin.tenantId,
      role: 'employee',
      display_name: 'Eve Employee',
      email: null,
      created_at: expect.stringMatching(/Z$/),
      qualifications: [medic],
    });
  });

  it('shows an admin as an admin', async () => {
    const response = await admin.request('GET', `/api/v1/users/${admin.userId}`);
    expect(response.json()).toMatchObject({
      id: admin.userId,
      role: 'admin',
      display_name: 'Ada Admin',
      email: 'ada@a.test',
      qualifications: [],
    });
  });
});

describe('revoking', () => {
  it('removes only the named role', async () => {
    await admin.request('POST', qualification(colleague.userId, driver.id));
    await admin.request('POST', qualification(colleague.userId, medic.id));
    await admin.request('POST', qualification(employee.userId, driver.id));
    expect((await admin.request('DELETE', qualification(colleague.userId, driver.id))).statusCode).toBe(204);
    const names = async (caller: Caller) =>
      (await caller.request('GET', '/api/v1/me/qualifications')).json().map((r: { name: string }) => r.name);
    expect(await names(colleague)).toEqual(['Medic']);
    expect(await names(employee)).toEqual(['Driver']);
  });

  it('answers 404 across tenants and for unknown or malformed ids, like granting', async () => {
    for (const [path, message] of [
      [qualification(otherEmployee.userId, medic.id), 'user not found'],
      [qualification(customer.userId, medic.id), 'user not found'],
      [qualification(employee.userId, foreignRole.id), 'role not found'],
      [qualification('ffffffffffffffffffffffffffffffff', medic.id), 'user not found'],
      [qualification(employee.userId, 'nope'), 'role not found'],
    ] as const) {
      const response = await admin.request('DELETE', path);
      expect(response.statusCode, path).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message } });
    }
  });
});

describe('profile from the token', () => {
  it('follows the latest token: role, name and email, each on its own', async () => {
    const tenant = uniqueName('profile');
    const boss = await ctx.caller('admin', tenant, 'boss');
    const record = async () =>
      (await boss.request('GET', '/api/v1/users')).json().find((u: { id: string }) => u.id !== boss.userId);
    await ctx.caller('employee', tenant, 'pat', { name: 'x' });
    expect(await record()).toMatchObject({ role: 'employee', display_name: 'x', email: null });
    await ctx.caller('employee', tenant, 'pat', { email: 'x' });
    expect(await record()).toMatchObject({ role: 'employee', display_name: null, email: 'x' });
    await ctx.caller('employee', tenant, 'pat', { email: 'pat@p.test' });
    expect(await record()).toMatchObject({ role: 'employee', display_name: null, email: 'pat@p.test' });
    await ctx.caller('admin', tenant, 'pat', { email: 'pat@p.test' });
    expect(await record()).toMatchObject({ role: 'admin', display_name: null, email: 'pat@p.test' });
  });

  it('drops a user out of the staff list when their token makes them a customer', async () => {
    const tenant = uniqueName('profile');
    const boss = await ctx.caller('admin', tenant, 'boss');
    const pat = await ctx.caller('employee', tenant, 'pat');
    await ctx.caller('customer', tenant, 'pat', { customer: 'c-1' });
    expect((await boss.request('GET', '/api/v1/users')).json().map((u: { id: string }) => u.id)).toEqual([
      boss.userId,
    ]);
    expect((await boss.request('GET', `/api/v1/users/${pat.userId}`)).statusCode).toBe(404);
  });
});
