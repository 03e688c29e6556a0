import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimToUuid, type Identity } from '../../src/auth/identity.ts';
import { on } from '../../src/changes/unit-of-work.ts';
import type { Deps } from '../../src/deps.ts';
import { Provisioner } from '../../src/tenants/provisioning.ts';
import { provisionUser } from '../../src/users/service.ts';
import { createTestContext, type TestContext, tenantWireId, uniqueName } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { type DbHooks, withDbHooks } from '../support/db-hooks.ts';
import { TEST_ISSUER } from '../support/tokens.ts';
import { depsOver } from '../support/units.ts';

/**
 * Just-in-time provisioning on its own: what it writes for a new tenant and user, what it
 * skips for known ones, and how its bounded memory forgets; then through the API, from
 * the first token of a tenant on.
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
  database.owner
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
    const run = await statementsOf(() => new Provisioner(depsOver(hooks.db), provisionUser).ensure(identity));
    expect(run.map((s) => `${s.kind} ${s.tables[0]}`)).toEqual([
      'select tenants',
      'insert tenants',
      'insert tenant_settings',
      'insert users',
    ]);
    expect(await userRow(identity)).toEqual({ role: 'admin', display_name: 'Ada', email: 'ada@p.test' });
    const settings = await database.owner
      .selectFrom('tenant_settings')
      .select(['time_tracking_enabled', 'timezone'])
      .where('tenant_id', '=', identity.tenantId)
      .executeTakeFirst();
    expect(settings).toEqual({ time_tracking_enabled: false, timezone: 'UTC' });
  });

  it('writes only the user for a tenant that exists already', async () => {
    const tenant = uniqueName('p');
    await new Provisioner(depsOver(database.db), provisionUser).ensure(identityIn(tenant, 'first'));
    const run = await statementsOf(() =>
      new Provisioner(depsOver(hooks.db), provisionUser).ensure(identityIn(tenant, 'second')),
    );
    expect(run.map((s) => `${s.kind} ${s.tables[0]}`)).toEqual(['select tenants', 'insert users']);
  });

  it('writes a known identity once, however many requests arrive together', async () => {
    const provisioner = new Provisioner(depsOver(hooks.db), provisionUser);
    const identity = identityIn(uniqueName('p'));
    const run = await statementsOf(() =>
      Promise.all(Array.from({ length: 4 }, () => provisioner.ensure(identity))),
    );
    expect(run).toHaveLength(4);
    expect(await statementsOf(() => provisioner.ensure(identity))).toEqual([]);
  });

  it('records the tenant and the user as provisioned when it writes them, and nothing when it writes nothing', async () => {
    const recorded: string[] = [];
    const hearing = on<Deps, 'tenant.provisioned' | 'user.provisioned'>(
      ['tenant.provisioned', 'user.provisioned'],
      'test',
      async (_tx, change) => {
        recorded.push(`${change.type} ${'tenantId' in change ? change.tenantId : change.userId}`);
      },
    );
    const provisioner = new Provisioner(depsOver(hooks.db, { reactions: [hearing] }), provisionUser);
    const identity = identityIn(uniqueName('p'), 'rec', { name: 'Rec' });
    await provisioner.ensure(identity);
    expect(recorded).toEqual([
      `tenant.provisioned ${identity.tenantId}`,
      `user.provisioned ${identity.userId}`,
    ]);
    // Forgotten, the same claims again: the row holds them already, nothing is written.
    provisioner.forget(identity.tenantId, identity.userId);
    await provisioner.ensure(identity);
    // A new name is written: the user is provisioned again, the tenant is not.
    await provisioner.ensure({ ...identity, name: 'Rec B.' });
    expect(recorded.slice(2)).toEqual([`user.provisioned ${identity.userId}`]);
  });

  it('tries again after a failed write', async () => {
    const provisioner = new Provisioner(depsOver(hooks.db), provisionUser);
    const identity = identityIn(uniqueName('p'));
    hooks.failNext(() => true, Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }));
    await expect(provisioner.ensure(identity)).rejects.toThrow('connection reset');
    await provisioner.ensure(identity);
    expect(await userRow(identity)).toEqual({ role: 'employee', display_name: null, email: null });
  });

  it('writes again when the role, name or email changes, telling apart a name from an email', async () => {
    const provisioner = new Provisioner(depsOver(hooks.db), provisionUser);
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
    const provisioner = new Provisioner(depsOver(hooks.db), provisionUser, 2);
    const tenant = uniqueName('p');
    const [a, b, c] = ['a', 'b', 'c'].map((user) => identityIn(tenant, user)) as [
      Identity,
      Identity,
      Identity,
    ];
    for (const identity of [a, b, c]) await provisioner.ensure(identity);
    // Remembered now: b and c. a was forgotten and is written again (forgetting b); its row
    // is unchanged, so the upsert returns nothing and whether a is active is read.
    const rewrite = ['select tenants', 'insert users', 'select users'];
    const kinds = (run: { kind: string; tables: string[] }[]) => run.map((s) => `${s.kind} ${s.tables[0]}`);
    expect(await statementsOf(() => provisioner.ensure(c))).toEqual([]);
    expect(kinds(await statementsOf(() => provisioner.ensure(a)))).toEqual(rewrite);
    expect(await statementsOf(() => provisioner.ensure(c))).toEqual([]);
    expect(await statementsOf(() => provisioner.ensure(a))).toEqual([]);
    expect(kinds(await statementsOf(() => provisioner.ensure(b)))).toEqual(rewrite);
  });

  it('trusts its memo for five minutes, then writes again (other processes may have changed the row)', async () => {
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        queries += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    let now = new Date('2026-11-22T10:00:00Z');
    const provisioner = new Provisioner(
      depsOver(database.db.withPlugin(counting), { clock: { now: () => now } }),
      provisionUser,
    );
    const identity = {
      tenantId: claimToUuid(TEST_ISSUER, uniqueName('ttl')),
      userId: claimToUuid(TEST_ISSUER, 'ttl-user'),
      role: 'employee' as const,
      customerId: null,
      customerClaim: null,
      issuer: TEST_ISSUER,
      name: null,
      email: null,
    };
    await provisioner.ensure(identity);
    const first = queries;
    now = new Date(now.getTime() + 5 * 60_000 - 1);
    await provisioner.ensure(identity);
    expect(queries).toBe(first);
    now = new Date(now.getTime() + 1);
    await provisioner.ensure(identity);
    expect(queries).toBeGreaterThan(first);
  });
});

describe('Provisioner and deactivated users', () => {
  /** Sets the user's flag in the database, behind the provisioner's back. */
  const setActive = (identity: Identity, active: boolean) =>
    database.owner
      .updateTable('users')
      .set({ active })
      .where('tenant_id', '=', identity.tenantId)
      .where('id', '=', identity.userId)
      .execute();

  it('answers whether the user is active, from its memo until told to forget them', async () => {
    const provisioner = new Provisioner(depsOver(hooks.db), provisionUser);
    const identity = identityIn(uniqueName('p'), 'dee');
    expect(await provisioner.ensure(identity)).toBe(true);
    await setActive(identity, false);
    // Remembered: no query, the old answer (another process's change shows within the TTL).
    expect(await statementsOf(async () => expect(await provisioner.ensure(identity)).toBe(true))).toEqual([]);
    provisioner.forget(identity.tenantId, identity.userId);
    // Nothing to write, so the flag is read.
    const run = await statementsOf(async () => expect(await provisioner.ensure(identity)).toBe(false));
    expect(run.map((s) => `${s.kind} ${s.tables[0]}`)).toEqual([
      'select tenants',
      'insert users',
      'select users',
    ]);
    expect(await provisioner.ensure(identity)).toBe(false);
  });

  /**
   * A provisioner whose next sign-in, once armed, meets a PATCH that sets the user's flag
   * (commit, then forget) after the row was written and read (the unit of work of
   * src/users/service.provisionUser committed) and before the memo learns the answer.
   */
  function provisionerMeetingPatch(active: boolean) {
    let armed = false;
    const provisioner: Provisioner = new Provisioner(depsOver(hooks.db), async (deps, identity) => {
      const answer = await provisionUser(deps, identity);
      if (armed) {
        armed = false;
        await setActive(identity, active);
        provisioner.forget(identity.tenantId, identity.userId);
      }
      return answer;
    });
    return {
      provisioner,
      arm: () => {
        armed = true;
      },
    };
  }

  it('does not remember a sign-in that read the user active while a deactivation committed and forgot them', async () => {
    const { provisioner, arm } = provisionerMeetingPatch(false);
    const before = identityIn(uniqueName('p'), 'racer', { name: 'Old' });
    expect(await provisioner.ensure(before)).toBe(true);
    // A new name: the memo misses, so this sign-in writes, and reads active = true.
    const renamed = { ...before, name: 'New' };
    arm();
    expect(await provisioner.ensure(renamed)).toBe(true);
    // The answer read before the deactivation is not kept: the next request reads the row.
    expect(await provisioner.ensure(renamed)).toBe(false);
  });

  it('does not remember a sign-in that read the user inactive while a reactivation committed and forgot them', async () => {
    const { provisioner, arm } = provisionerMeetingPatch(true);
    const identity = identityIn(uniqueName('p'), 'returner', { name: 'Old' });
    expect(await provisioner.ensure(identity)).toBe(true);
    await setActive(identity, false);
    provisioner.forget(identity.tenantId, identity.userId);
    // Nothing to write, so the sign-in reads the flag (false) just before the reactivation.
    arm();
    expect(await provisioner.ensure(identity)).toBe(false);
    expect(await provisioner.ensure(identity)).toBe(true);
  });
});

describe('just-in-time provisioning through the API', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx?.close());

  const get = (token: string) => ctx.request('GET', '/api/v1/roles', { token });

  it('creates the tenant with VAPID keys and default settings, and the user, from the first token', async () => {
    const tenantName = uniqueName('fresh-tenant');
    const caller = await ctx.caller('admin', tenantName, 'first-admin', {
      name: 'Ada',
      email: 'ada@example.test',
    });
    const settings = await caller.request('GET', '/api/v1/tenant/settings');
    expect(settings.statusCode).toBe(200);
    expect(settings.json()).toMatchObject({
      tenant_id: tenantWireId(tenantName),
      time_tracking_enabled: false,
      timezone: 'UTC',
    });

    const tenant = await ctx.db.owner
      .selectFrom('tenants')
      .selectAll()
      .where('id', '=', claimToUuid(TEST_ISSUER, tenantName))
      .executeTakeFirstOrThrow();
    // P-256 public key, uncompressed point, base64url: 65 bytes -> 87 characters.
    expect(tenant.vapid_public_key).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(tenant.vapid_private_key).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const users = await caller.request('GET', '/api/v1/users');
    expect(users.json()).toEqual([
      expect.objectContaining({
        id: caller.userId,
        role: 'admin',
        display_name: 'Ada',
        email: 'ada@example.test',
      }),
    ]);
  });

  it('keeps the row at the latest token, also when a role goes back and forth', async () => {
    const tenant = uniqueName('flip');
    const roleInDb = async () =>
      (
        await ctx.db.owner
          .selectFrom('users')
          .select('role')
          .where('tenant_id', '=', tenantWireId(tenant))
          .where('id', '=', claimToUuid(TEST_ISSUER, 'bob'))
          .executeTakeFirstOrThrow()
      ).role;
    for (const role of ['admin', 'customer', 'admin', 'employee', 'admin'] as const) {
      await get(await ctx.token({ role, tenant, sub: 'bob' }));
      expect(await roleInDb(), role).toBe(role);
    }
    const admin = await ctx.token({ role: 'admin', tenant, sub: 'bob' });
    const users = await ctx.request('GET', '/api/v1/users', { token: admin });
    expect(users.json().map((u: { role: string }) => u.role)).toEqual(['admin']);
  });

  it('provisions one tenant under concurrent first requests', async () => {
    const raceTenant = uniqueName('race-tenant');
    const tokens = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ctx.token({ role: 'admin', tenant: raceTenant, sub: `racer-${i}` }),
      ),
    );
    const responses = await Promise.all(tokens.map((token) => get(token)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const count = await ctx.db.owner
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', claimToUuid(TEST_ISSUER, raceTenant))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(8);
  });
});
