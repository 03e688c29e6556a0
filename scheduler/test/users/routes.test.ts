import { beforeEach, describe, expect, it } from 'vitest';
import { claimToUuid } from '../../src/auth/identity.ts';
import { type Caller, FORBIDDEN_BODY, uniqueName, useTestContext } from '../support/context.ts';
import { appDbHooks, on } from '../support/db-hooks.ts';
import { created, newEvent, newShift, qualify, tenantOf } from '../support/scheduling.ts';
import { TEST_ISSUER } from '../support/tokens.ts';

let admin: Caller;
let employee: Caller;
let colleague: Caller;
let customer: Caller;
let otherAdmin: Caller;
let otherEmployee: Caller;
let medic: { id: string };
let driver: { id: string };
let foreignRole: { id: string };

const hooks = appDbHooks();
const t = useTestContext({ viewDb: hooks.viewDb });

// Two tenants of its own for every test, their users provisioned before it runs.
beforeEach(async () => {
  const a = uniqueName('tenant-a');
  const b = uniqueName('tenant-b');
  admin = await t.ctx.caller('admin', a, 'admin-1', { name: 'Ada Admin', email: 'ada@a.test' });
  employee = await t.ctx.caller('employee', a, 'emp-1', { name: 'Eve Employee' });
  colleague = await t.ctx.caller('employee', a, 'emp-2', { name: 'Carl Colleague' });
  customer = await t.ctx.caller('customer', a, 'cust-1', { customer: 'c-1' });
  otherAdmin = await t.ctx.caller('admin', b);
  otherEmployee = await t.ctx.caller('employee', b, 'emp-b');
  medic = (await admin.request('POST', '/api/v1/roles', { name: 'Medic' })).json();
  driver = (await admin.request('POST', '/api/v1/roles', { name: 'Driver' })).json();
  foreignRole = (await otherAdmin.request('POST', '/api/v1/roles', { name: 'Foreign' })).json();
});

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
      active: true,
      created_at: expect.stringMatching(/Z$/),
      qualifications: [],
    });
  });

  it('gives each user their qualifications exactly as GET /users/{id} does, read in one statement', async () => {
    for (const [user, role] of [
      [employee, medic],
      [employee, driver],
      [admin, driver],
    ] as const) {
      expect((await admin.request('POST', qualification(user.userId, role.id))).statusCode).toBe(204);
    }
    // A description too, so the whole role definition is compared.
    const cook = (
      await admin.request('POST', '/api/v1/roles', { name: 'Cook', description: 'Hot line' })
    ).json();
    expect((await admin.request('POST', qualification(colleague.userId, cook.id))).statusCode).toBe(204);
    hooks.statements.length = 0;
    const response = await admin.request('GET', '/api/v1/users');
    expect(response.statusCode, response.body).toBe(200);
    const reads = hooks.statements.filter((s) => s.tables.includes('user_qualifications'));
    expect(reads).toEqual([{ kind: 'select', tables: expect.arrayContaining(['users', 'roles']) }]);
    const users = response.json() as { id: string; qualifications: { name: string }[] }[];
    for (const user of [admin, employee, colleague]) {
      const detail = (await admin.request('GET', `/api/v1/users/${user.userId}`)).json();
      expect(
        users.find((u) => u.id === user.userId),
        user.userId,
      ).toEqual(detail);
    }
    expect(users.find((u) => u.id === employee.userId)?.qualifications.map((q) => q.name)).toEqual([
      'Driver',
      'Medic',
    ]);
    expect(users.find((u) => u.id === colleague.userId)?.qualifications).toEqual([
      {
        id: cook.id,
        tenant_id: admin.tenantId,
        name: 'Cook',
        description: 'Hot line',
        created_at: cook.created_at,
      },
    ]);
  });

  it('never carries another tenant’s qualifications', async () => {
    expect(
      (await otherAdmin.request('POST', qualification(otherEmployee.userId, foreignRole.id))).statusCode,
    ).toBe(204);
    const users = (await admin.request('GET', '/api/v1/users')).json() as { qualifications: unknown[] }[];
    expect(users.flatMap((u) => u.qualifications)).toEqual([]);
    const theirs = (await otherAdmin.request('GET', '/api/v1/users')).json() as {
      id: string;
      qualifications: { id: string }[];
    }[];
    expect(theirs.find((u) => u.id === otherEmployee.userId)?.qualifications.map((q) => q.id)).toEqual([
      foreignRole.id,
    ]);
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
    const zoe = await t.ctx.caller('employee', tenant, 'zoe', { name: 'Zoe' });
    const nameless = await t.ctx.caller('employee', tenant, 'nameless');
    const samA = await t.ctx.caller('employee', tenant, 'sam-a', { name: 'Sam' });
    const boss = await t.ctx.caller('admin', tenant, 'boss', { name: 'Ann' });
    const samB = await t.ctx.caller('employee', tenant, 'sam-b', { name: 'Sam' });
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
      active: true,
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
    const boss = await t.ctx.caller('admin', tenant, 'boss');
    const record = async () =>
      (await boss.request('GET', '/api/v1/users')).json().find((u: { id: string }) => u.id !== boss.userId);
    await t.ctx.caller('employee', tenant, 'pat', { name: 'x' });
    expect(await record()).toMatchObject({ role: 'employee', display_name: 'x', email: null });
    await t.ctx.caller('employee', tenant, 'pat', { email: 'x' });
    expect(await record()).toMatchObject({ role: 'employee', display_name: null, email: 'x' });
    await t.ctx.caller('employee', tenant, 'pat', { email: 'pat@p.test' });
    expect(await record()).toMatchObject({ role: 'employee', display_name: null, email: 'pat@p.test' });
    await t.ctx.caller('admin', tenant, 'pat', { email: 'pat@p.test' });
    expect(await record()).toMatchObject({ role: 'admin', display_name: null, email: 'pat@p.test' });
  });

  it('drops a user out of the staff list when their token makes them a customer', async () => {
    const tenant = uniqueName('profile');
    const boss = await t.ctx.caller('admin', tenant, 'boss');
    const pat = await t.ctx.caller('employee', tenant, 'pat');
    await t.ctx.caller('customer', tenant, 'pat', { customer: 'c-1' });
    expect((await boss.request('GET', '/api/v1/users')).json().map((u: { id: string }) => u.id)).toEqual([
      boss.userId,
    ]);
    expect((await boss.request('GET', `/api/v1/users/${pat.userId}`)).statusCode).toBe(404);
  });
});

describe('GET /api/v1/me', () => {
  it('gives an employee their record, role and qualifications', async () => {
    await admin.request('POST', qualification(employee.userId, medic.id));
    const response = await employee.request('GET', '/api/v1/me');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      id: employee.userId,
      tenant_id: admin.tenantId,
      role: 'employee',
      display_name: 'Eve Employee',
      email: null,
      active: true,
      created_at: expect.stringMatching(/Z$/),
      qualifications: [medic],
      locale: null,
    });
  });

  it('gives an admin their own record, never another tenant’s', async () => {
    const mine = (await admin.request('GET', '/api/v1/me')).json();
    expect(mine).toMatchObject({
      id: admin.userId,
      tenant_id: admin.tenantId,
      role: 'admin',
      qualifications: [],
    });
    // The same subject in another tenant is another record.
    const sameSubject = await t.ctx.caller('admin', uniqueName('tenant-c'), 'admin-1', { name: 'Other Ada' });
    const theirs = (await sameSubject.request('GET', '/api/v1/me')).json();
    expect(theirs).toMatchObject({
      id: admin.userId,
      tenant_id: sameSubject.tenantId,
      display_name: 'Other Ada',
    });
    expect(theirs.tenant_id).not.toBe(admin.tenantId);
  });

  it('answers the fixed 403 to a customer: customers are not users of the schedule', async () => {
    const response = await customer.request('GET', '/api/v1/me');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('PATCH /api/v1/me', () => {
  const setLocale = (caller: Caller, locale: unknown) => caller.request('PATCH', '/api/v1/me', { locale });
  const localeOf = async (caller: Caller) => (await caller.request('GET', '/api/v1/me')).json().locale;

  it('sets the caller’s language in canonical form, and clears it with null', async () => {
    const response = await setLocale(employee, 'de-de');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      id: employee.userId,
      tenant_id: admin.tenantId,
      role: 'employee',
      display_name: 'Eve Employee',
      email: null,
      active: true,
      created_at: expect.stringMatching(/Z$/),
      qualifications: [],
      locale: 'de-DE',
    });
    expect(await localeOf(employee)).toBe('de-DE');
    // Only the caller's own: the admin's and a colleague's stay as they were.
    expect(await localeOf(admin)).toBeNull();
    expect(await localeOf(otherEmployee)).toBeNull();
    expect((await setLocale(admin, 'pt-BR')).json().locale).toBe('pt-BR');
    expect((await setLocale(employee, null)).json().locale).toBeNull();
    expect(await localeOf(employee)).toBeNull();
    expect(await localeOf(admin)).toBe('pt-BR');
  });

  it.each([
    ['an underscore', 'en_US', 'locale: "en_US" is not a BCP 47 language tag'],
    ['a grandfathered tag', 'i-klingon', 'locale: "i-klingon" is not a BCP 47 language tag'],
    ['a subtag of 9 characters', 'de-abcdefghi', 'locale: "de-abcdefghi" is not a BCP 47 language tag'],
    ['a language nobody knows', 'zz-ZZ', 'locale: no language is known for "zz-ZZ"; use a tag such as de-DE'],
    ['one letter', 'd', 'locale: must NOT have fewer than 2 characters'],
    ['36 characters', `de-DE-${'x'.repeat(30)}`, 'locale: must NOT have more than 35 characters'],
    ['a number', 42, 'locale: must be string,null'],
  ])('refuses %s with 422 and changes nothing', async (_label, locale, message) => {
    await setLocale(employee, 'fr');
    const response = await setLocale(employee, locale);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    expect(await localeOf(employee)).toBe('fr');
  });

  it('refuses an empty body, another field, and a customer', async () => {
    const empty = await employee.request('PATCH', '/api/v1/me', {});
    expect(empty.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'body: must NOT have fewer than 1 properties' },
    });
    const other = await employee.request('PATCH', '/api/v1/me', { display_name: 'Me' });
    expect(other.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'display_name: is not an allowed field' },
    });
    const refused = await customer.request('PATCH', '/api/v1/me', { locale: 'de' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual(FORBIDDEN_BODY);
  });
});

describe('POST /api/v1/users', () => {
  const bob = (extra: Record<string, unknown> = {}) => ({
    subject: uniqueName('bob'),
    name: 'Bob Builder',
    email: 'bob@a.test',
    role: 'employee',
    ...extra,
  });

  it('pre-provisions a user under the id their subject maps to, qualified at once', async () => {
    const body = bob({ qualifications: [medic.id, driver.id, medic.id] });
    const before = hooks.statements.length;
    const response = await admin.request('POST', '/api/v1/users', body);
    expect(response.statusCode).toBe(201);
    // The roles named are looked up in one query, however many there are.
    expect(hooks.statements.slice(before).filter(on('select', 'roles'))).toHaveLength(1);
    const id = claimToUuid(TEST_ISSUER, body.subject);
    expect(response.json()).toEqual({
      id,
      tenant_id: admin.tenantId,
      role: 'employee',
      display_name: 'Bob Builder',
      email: 'bob@a.test',
      active: true,
      created_at: expect.stringMatching(/Z$/),
    });
    const detail = (await admin.request('GET', `/api/v1/users/${id}`)).json();
    expect(detail.qualifications.map((r: { name: string }) => r.name)).toEqual(['Driver', 'Medic']);
    expect((await admin.request('GET', '/api/v1/users')).json().map((u: { id: string }) => u.id)).toContain(
      id,
    );
  });

  it('grants the most qualifications one call names, 100, in one statement each to read and write', async () => {
    const roles: string[] = [];
    for (let i = 0; i < 98; i++) {
      roles.push(
        (await admin.request('POST', '/api/v1/roles', { name: `Role ${String(i).padStart(2, '0')}` })).json()
          .id,
      );
    }
    const body = bob({ qualifications: [driver.id, ...roles, medic.id] });
    const before = hooks.statements.length;
    const response = await admin.request('POST', '/api/v1/users', body);
    expect(response.statusCode, response.body).toBe(201);
    const statements = hooks.statements.slice(before);
    expect(statements.filter(on('select', 'roles'))).toHaveLength(1);
    expect(statements.filter(on('insert', 'user_qualifications'))).toHaveLength(1);
    const detail = (await admin.request('GET', `/api/v1/users/${response.json().id}`)).json();
    expect(detail.qualifications.map((r: { id: string }) => r.id).sort()).toEqual(
      [driver.id, ...roles, medic.id].sort(),
    );
  });

  it('lands the first sign-in on the record, which fills only empty fields', async () => {
    const tenant = uniqueName('pre');
    const boss = await t.ctx.caller('admin', tenant, 'boss');
    const role = (await boss.request('POST', '/api/v1/roles', { name: 'Medic' })).json();
    const subject = 'Bob@Example.com';
    const made = await boss.request('POST', '/api/v1/users', {
      subject,
      name: 'Bob Builder',
      role: 'employee',
      qualifications: [role.id],
    });
    expect(made.json()).toMatchObject({ display_name: 'Bob Builder', email: null });
    const signedIn = await t.ctx.caller('employee', tenant, subject, { name: 'bob', email: 'bob@idp.test' });
    expect(signedIn.userId).toBe(made.json().id);
    const me = (await signedIn.request('GET', '/api/v1/me')).json();
    expect(me).toMatchObject({
      id: made.json().id,
      display_name: 'Bob Builder',
      email: 'bob@idp.test',
      created_at: made.json().created_at,
      qualifications: [role],
    });
    // Later tokens keep the admin's name too; only the role follows the token.
    const again = await t.ctx.caller('admin', tenant, subject, { name: 'bobby', email: 'other@idp.test' });
    expect((await again.request('GET', '/api/v1/me')).json()).toMatchObject({
      role: 'admin',
      display_name: 'Bob Builder',
      email: 'bob@idp.test',
    });
  });

  it('answers 409 DUPLICATE for an existing user, signed in or pre-provisioned, and changes nothing', async () => {
    const body = bob();
    expect((await admin.request('POST', '/api/v1/users', body)).statusCode).toBe(201);
    for (const subject of [body.subject, 'emp-1', 'cust-1']) {
      const response = await admin.request('POST', '/api/v1/users', bob({ subject, name: 'Taken Over' }));
      expect(response.statusCode, subject).toBe(409);
      expect(response.json()).toEqual({
        error: { code: 'DUPLICATE', message: 'a user with this subject exists already' },
      });
    }
    const names = (await admin.request('GET', '/api/v1/users'))
      .json()
      .map((u: { display_name: string }) => u.display_name);
    expect(names).not.toContain('Taken Over');
  });

  it('answers 422 naming unknown roles (another tenant’s included) and creates nothing', async () => {
    const body = bob({ qualifications: [medic.id, foreignRole.id, 'ffffffffffffffffffffffffffffffff'] });
    const response = await admin.request('POST', '/api/v1/users', body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: `qualifications: no such role in this tenant: ${foreignRole.id}, ffffffffffffffffffffffffffffffff`,
      },
    });
    const id = claimToUuid(TEST_ISSUER, body.subject);
    expect((await admin.request('GET', `/api/v1/users/${id}`)).statusCode).toBe(404);
  });

  it('pre-provisions a numeric subject, which a token’s numeric claim lands on (not its digits as text)', async () => {
    const tenant = tenantOf(admin);
    const made = await admin.request('POST', '/api/v1/users', bob({ subject: 4711 }));
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().id).toBe(claimToUuid(TEST_ISSUER, '\u0000number:4711'));
    const token = await t.ctx.token({ role: 'employee', tenant, sub: 4711, name: 'bob' });
    const me = await t.ctx.request('GET', '/api/v1/me', { token });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({ id: made.json().id, display_name: 'Bob Builder' });
    // The text "4711" is another subject, so another person.
    const text = await admin.request('POST', '/api/v1/users', bob({ subject: '4711' }));
    expect(text.statusCode).toBe(201);
    expect(text.json().id).toBe(claimToUuid(TEST_ISSUER, '4711'));
    expect((await admin.request('POST', '/api/v1/users', bob({ subject: 4711 }))).statusCode).toBe(409);
  });

  it('answers 422 for bad input, never 500', async () => {
    for (const [body, field] of [
      [bob({ role: 'customer' }), 'role'],
      [bob({ subject: '' }), 'subject'],
      [bob({ subject: 1.5 }), 'subject'],
      [bob({ subject: 2 ** 53 }), 'subject'],
      [bob({ subject: true }), 'subject'],
      [bob({ subject: null }), 'subject'],
      [bob({ name: '   ' }), 'name'],
      [bob({ name: 'two\nlines' }), 'name'],
      [bob({ email: 'not-an-email' }), 'email'],
      [bob({ qualifications: ['nope'] }), 'qualifications'],
      [bob({ colour: 'red' }), 'colour'],
      [{ name: 'No Subject', role: 'employee' }, 'subject'],
    ] as const) {
      const response = await admin.request('POST', '/api/v1/users', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.json().error.code).toBe('VALIDATION_FAILED');
      expect(response.json().error.message, JSON.stringify(body)).toContain(field);
    }
  });

  it('answers the fixed 403 to an employee and creates nothing', async () => {
    const body = bob();
    const response = await employee.request('POST', '/api/v1/users', body);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    expect(
      (await admin.request('GET', `/api/v1/users/${claimToUuid(TEST_ISSUER, body.subject)}`)).statusCode,
    ).toBe(404);
  });

  it('creates the user in the caller’s tenant only: another tenant does not see them', async () => {
    const body = bob();
    const id = (await admin.request('POST', '/api/v1/users', body)).json().id;
    expect((await otherAdmin.request('GET', `/api/v1/users/${id}`)).statusCode).toBe(404);
    expect(
      (await otherAdmin.request('GET', '/api/v1/users')).json().map((u: { id: string }) => u.id),
    ).not.toContain(id);
  });
});

describe('PATCH /api/v1/users/{id}', () => {
  const patch = (caller: Caller, id: string, body: unknown) =>
    caller.request('PATCH', `/api/v1/users/${id}`, body);

  it('deactivates: the user is listed inactive and their tokens get 403 on every route', async () => {
    const response = await patch(admin, employee.userId, { active: false });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      id: employee.userId,
      active: false,
      display_name: 'Eve Employee',
    });
    const listed = (await admin.request('GET', '/api/v1/users')).json();
    expect(listed.find((u: { id: string }) => u.id === employee.userId)).toMatchObject({ active: false });
    for (const url of ['/api/v1/me', '/api/v1/tenant/settings', '/api/v1/me/assignments', '/api/v1/users']) {
      const refused = await employee.request('GET', url);
      expect(refused.statusCode, url).toBe(403);
      expect(refused.json()).toEqual(FORBIDDEN_BODY);
    }
    // Reactivated, they are back.
    expect((await patch(admin, employee.userId, { active: true })).json()).toMatchObject({ active: true });
    expect((await employee.request('GET', '/api/v1/me')).statusCode).toBe(200);
  });

  it('renames; a name set by an admin stands against later tokens', async () => {
    const response = await patch(admin, colleague.userId, { name: ' Carl C. ', email: 'carl@a.test' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ display_name: 'Carl C.', email: 'carl@a.test', active: true });
    await t.ctx.caller('employee', tenantOf(colleague), 'emp-2', { name: 'carl', email: 'carl@idp.test' });
    expect((await admin.request('GET', `/api/v1/users/${colleague.userId}`)).json()).toMatchObject({
      display_name: 'Carl C.',
      email: 'carl@a.test',
    });
    expect((await patch(admin, colleague.userId, { email: null })).json()).toMatchObject({ email: null });
  });

  it('refuses an admin deactivating themselves (409), so a tenant keeps its admin', async () => {
    const response = await patch(admin, admin.userId, { active: false });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: { code: 'INVALID_STATE', message: 'you cannot deactivate yourself; another admin can' },
    });
    expect((await admin.request('GET', '/api/v1/me')).json()).toMatchObject({ active: true });
    // Renaming oneself is fine.
    expect((await patch(admin, admin.userId, { name: 'Ada A.' })).statusCode).toBe(200);
  });

  it('frees the upcoming seats of a deactivated user, keeps past ones, and refuses new ones (409)', async () => {
    const roleId = medic.id;
    await qualify(admin, employee, roleId);
    const event = await newEvent(admin, {
      starts_at: '2020-01-01T00:00:00Z',
      ends_at: '2040-01-01T00:00:00Z',
    });
    const past = await newShift(admin, event, {
      roleId,
      starts_at: '2021-01-01T10:00:00Z',
      ends_at: '2021-01-01T12:00:00Z',
    });
    const future = await newShift(admin, event, { roleId });
    const later = await newShift(admin, event, {
      roleId,
      starts_at: '2031-01-01T10:00:00Z',
      ends_at: '2031-01-01T12:00:00Z',
    });
    const assign = (shift: { id: string; slots: string[] }) =>
      admin.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: employee.userId,
      });
    expect((await assign(past)).statusCode).toBe(201);
    await created(employee, `/api/v1/shifts/${future.id}/slots/${future.slots[0]}/claim`, {});
    expect((await patch(admin, employee.userId, { active: false })).statusCode).toBe(200);
    const seats = async (shift: { id: string }) =>
      (await admin.request('GET', `/api/v1/shifts/${shift.id}/assignments`))
        .json()
        .map((a: { user_id: string }) => a.user_id);
    expect(await seats(past)).toEqual([employee.userId]);
    expect(await seats(future)).toEqual([]);
    const refused = await assign(later);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ error: { code: 'INVALID_STATE', message: 'the user is deactivated' } });
    const claim = await employee.request(
      'POST',
      `/api/v1/shifts/${later.id}/slots/${later.slots[0]}/claim`,
      {},
    );
    expect(claim.statusCode).toBe(403);
    expect(claim.json()).toEqual(FORBIDDEN_BODY);
    expect(await seats(later)).toEqual([]);
  });

  it('lets an admin still settle a deactivated user: record time for a past seat, pay out overtime', async () => {
    await qualify(admin, employee, medic.id);
    const event = await newEvent(admin, {
      starts_at: '2020-01-01T00:00:00Z',
      ends_at: '2040-01-01T00:00:00Z',
    });
    const past = await newShift(admin, event, {
      roleId: medic.id,
      starts_at: '2021-01-01T10:00:00Z',
      ends_at: '2021-01-01T12:00:00Z',
    });
    const seat = await created(admin, `/api/v1/shifts/${past.id}/slots/${past.slots[0]}/assign`, {
      user_id: employee.userId,
    });
    expect((await patch(admin, employee.userId, { active: false })).statusCode).toBe(200);
    await admin.request('PATCH', '/api/v1/tenant/settings', { time_tracking_enabled: true });
    await created(admin, '/api/v1/time-tracking/entries', {
      shift_assignment_id: seat.id,
      started_at: '2021-01-01T10:00:00Z',
      ended_at: '2021-01-01T13:00:00Z',
    });
    const payout = await created(admin, '/api/v1/time-tracking/payouts', {
      user_id: employee.userId,
      minutes: 60,
    });
    expect(payout).toMatchObject({ user_id: employee.userId, minutes: 60 });
  });

  it('keeps a deactivated user an employee whatever role their tokens claim, so they can be reactivated', async () => {
    const tenant = tenantOf(employee);
    expect((await patch(admin, employee.userId, { active: false })).statusCode).toBe(200);
    // Signing in as a customer would have turned the row into a customer's: no longer
    // listed, 404 to PATCH, locked out for good.
    const asCustomer = await t.ctx.caller('customer', tenant, 'emp-1', { customer: 'c-1', name: 'Not Eve' });
    const refused = await asCustomer.request('GET', '/api/v1/tenant/settings');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual(FORBIDDEN_BODY);
    const listed = (await admin.request('GET', '/api/v1/users')).json();
    expect(listed.find((u: { id: string }) => u.id === employee.userId)).toMatchObject({
      role: 'employee',
      display_name: 'Eve Employee',
      active: false,
    });
    const back = await patch(admin, employee.userId, { active: true });
    expect(back.statusCode).toBe(200);
    expect(back.json()).toMatchObject({ role: 'employee', active: true });
    // Active again, their tokens decide their role as before.
    expect((await asCustomer.request('GET', '/api/v1/me')).statusCode).toBe(403);
    expect((await admin.request('GET', `/api/v1/users/${employee.userId}`)).statusCode).toBe(404);
  });

  it('lets no sign-in of a deactivated user change their row: not to admin, not their name or email', async () => {
    const tenant = tenantOf(colleague);
    expect((await patch(admin, colleague.userId, { active: false })).statusCode).toBe(200);
    const asAdmin = await t.ctx.caller('admin', tenant, 'emp-2', { name: 'Mallory', email: 'm@evil.test' });
    expect((await asAdmin.request('GET', '/api/v1/users')).statusCode).toBe(403);
    const row = (await admin.request('GET', `/api/v1/users/${colleague.userId}`)).json();
    expect(row).toMatchObject({
      role: 'employee',
      display_name: 'Carl Colleague',
      email: null,
      active: false,
    });
    // Reactivated, they are what their next token says.
    expect((await patch(admin, colleague.userId, { active: true })).statusCode).toBe(200);
    expect(
      (
        await t.ctx
          .caller('admin', tenant, 'emp-2', { name: 'Carl' })
          .then((c) => c.request('GET', '/api/v1/me'))
      ).json(),
    ).toMatchObject({
      role: 'admin',
      display_name: 'Carl',
    });
  });

  it('keeps a deactivated admin an admin when their token says employee', async () => {
    const tenant = tenantOf(admin);
    const second = await t.ctx.caller('admin', tenant, 'admin-2', { name: 'Second Admin' });
    expect((await patch(admin, second.userId, { active: false })).statusCode).toBe(200);
    await t.ctx.caller('employee', tenant, 'admin-2');
    expect((await admin.request('GET', `/api/v1/users/${second.userId}`)).json()).toMatchObject({
      role: 'admin',
      active: false,
    });
  });

  it('answers 422 for an empty or bad body, never 500', async () => {
    for (const body of [
      {},
      { active: 'no' },
      { name: '' },
      { name: '  ' },
      { email: 'x' },
      { role: 'admin' },
      [],
    ]) {
      const response = await patch(admin, employee.userId, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.json().error.code).toBe('VALIDATION_FAILED');
    }
    const noBody = await admin.request('PATCH', `/api/v1/users/${employee.userId}`);
    expect(noBody.statusCode).toBe(422);
  });

  it('answers 404 for another tenant’s user, a customer, an unknown and a malformed id', async () => {
    for (const id of [otherEmployee.userId, customer.userId, 'ffffffffffffffffffffffffffffffff', 'nope']) {
      const response = await patch(admin, id, { active: false });
      expect(response.statusCode, id).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'user not found' } });
    }
    expect((await otherEmployee.request('GET', '/api/v1/me')).statusCode).toBe(200);
  });

  it('answers the fixed 403 to an employee and changes nothing', async () => {
    const response = await patch(employee, colleague.userId, { active: false });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
    expect((await colleague.request('GET', '/api/v1/me')).statusCode).toBe(200);
  });
});
