import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimToUuid, type Identity } from '../src/auth/identity.ts';
import { Provisioner } from '../src/tenants/provisioning.ts';
import { uniqueName } from './support/context.ts';
import { openTestDatabase, type TestDatabase } from './support/database.ts';
import { type DbHooks, withDbHooks } from './support/db-hooks.ts';
import { TEST_ISSUER } from './support/tokens.ts';

/**
 * Just-in-time provisioning on its own: what it writes for a new tenant and user, what it
 * skips for known ones, and how its bounded memory forgets.
 */
let database: TestDatabase;
let hooks: DbHooks;

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => database?.dispose());
beforeEach(() => {
  hooks = withDbHooks(database.db);
});

function identityIn(tenant: string, user = 'user-1', extra: Partial<Identity> = {}): Identity {
  return {
    tenantId: claimToUuid(TEST_ISSUER, tenant),
    userId: claimToUuid(TEST_ISSUER, user),
    role: 'employee',
    customerId: null,
    customerClaim: null,
    issuer: TEST_ISSUER,
    name: null,
    email: null,
    ...extra,
  };
}

const userRow = (identity: Identity) =>
  database.db
    .selectFrom('users')
    .select(['role', 'display_name', 'email'])
    .where('tenant_id', '=', identity.tenantId)
    .where('id', '=', identity.userId)
    .executeTakeFirst();

/** Statements run by `action`. */
async function statementsOf(action: () => Promise<unknown>) {
  const before = hooks.statements.length;
  await action();
  return hooks.statements.slice(before);
}

describe('Provisioner', () => {
  it('creates a new tenant with its settings, then its user', async () => {
    const identity = identityIn(uniqueName('p'), 'ada', { role: 'admin', name: 'Ada', email: 'ada@p.test' });
    const run = await statementsOf(() => new Provisioner({ db: hooks.db }).ensure(identity));
    expect(run.map((s) => `${s.kind} ${s.tables[0]}`)).toEqual([
      'select tenants',
      'insert tenants',
      'insert tenant_settings',
      'insert users',
    ]);
    expect(await userRow(identity)).toEqual({ role: 'admin', display_name: 'Ada', email: 'ada@p.test' });
    const settings = await database.db
      .selectFrom('tenant_settings')
      .select(['time_tracking_enabled', 'timezone'])
      .where('tenant_id', '=', identity.tenantId)
      .executeTakeFirst();
    expect(settings).toEqual({ time_tracking_enabled: false, timezone: 'UTC' });
  });

  it('writes only the user for a tenant that exists already', async () => {
    const tenant = uniqueName('p');
    await new Provisioner({ db: database.db }).ensure(identityIn(tenant, 'first'));
    const run = await statementsOf(() =>
      new Provisioner({ db: hooks.db }).ensure(identityIn(tenant, 'second')),
    );
    expect(run.map((s) => `${s.kind} ${s.tables[0]}`)).toEqual(['select tenants', 'insert users']);
  });

  it('writes a known identity once, however many requests arrive together', async () => {
    const provisioner = new Provisioner({ db: hooks.db });
    const identity = identityIn(uniqueName('p'));
    const run = await statementsOf(() =>
      Promise.all(Array.from({ length: 4 }, () => provisioner.ensure(identity))),
    );
    expect(run).toHaveLength(4);
    expect(await statementsOf(() => provisioner.ensure(identity))).toEqual([]);
  });

  it('tries again after a failed write', async () => {
    const provisioner = new Provisioner({ db: hooks.db });
    const identity = identityIn(uniqueName('p'));
    hooks.failNext(() => true, Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }));
    await expect(provisioner.ensure(identity)).rejects.toThrow('connection reset');
    await provisioner.ensure(identity);
    expect(await userRow(identity)).toEqual({ role: 'employee', display_name: null, email: null });
  });

  it('writes again when the role, name or email changes, telling apart a name from an email', async () => {
    const provisioner = new Provisioner({ db: hooks.db });
    const identity = identityIn(uniqueName('p'), 'chris', { name: 'x' });
    await provisioner.ensure(identity);
    for (const change of [
      { name: null, email: 'x' },
      { name: null, email: 'x', role: 'admin' as const },
      { name: 'Chris', email: 'x', role: 'admin' as const },
    ]) {
      const changed = { ...identity, ...change };
      expect(await statementsOf(() => provisioner.ensure(changed))).toHaveLength(2);
      expect(await userRow(changed)).toEqual({
        role: changed.role,
        display_name: changed.name,
        email: changed.email,
      });
    }
  });

  it('forgets the oldest identity first once it remembers maxRemembered', async () => {
    const provisioner = new Provisioner({ db: hooks.db }, 2);
    const tenant = uniqueName('p');
    const [a, b, c] = ['a', 'b', 'c'].map((user) => identityIn(tenant, user)) as [
      Identity,
      Identity,
      Identity,
    ];
    for (const identity of [a, b, c]) await provisioner.ensure(identity);
    // Remembered now: b and c. a was forgotten and is written again (forgetting b).
    expect(await statementsOf(() => provisioner.ensure(c))).toEqual([]);
    expect(await statementsOf(() => provisioner.ensure(a))).toHaveLength(2);
    expect(await statementsOf(() => provisioner.ensure(c))).toEqual([]);
    expect(await statementsOf(() => provisioner.ensure(a))).toEqual([]);
    expect(await statementsOf(() => provisioner.ensure(b))).toHaveLength(2);
  });
});
