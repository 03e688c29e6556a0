import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type Caller,
  createTestContext,
  FORBIDDEN_BODY,
  type TestContext,
  uniqueName,
} from './support/context.ts';

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
