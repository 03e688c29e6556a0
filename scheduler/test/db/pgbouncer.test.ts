import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { listRoles } from '../../src/roles/repository.ts';
import { type Caller, useRouteTests } from '../support/context.ts';
import { anotherTenantGetsNothing } from '../support/cross-tenant.ts';
import { runSql, testAppLogin } from '../support/database.ts';
import { type PgBouncer, pgBouncerAvailable, startPgBouncer } from '../support/pgbouncer.ts';
import { created, newRole } from '../support/scheduling.ts';
import { NEEDS_PGBOUNCER } from '../support/skips.ts';
import { type ForgetfulDb, withoutTenantFilter } from '../support/without-tenant-filter.ts';

/**
 * The application behind PgBouncer in transaction mode (src/db/drivers.ts): the pooler
 * hands each transaction, and each statement outside one, whichever server connection is
 * free, so nothing a connection was told before may be trusted. Two server connections
 * serve the app's twenty: every request's statements land on connections another
 * tenant's statements used a moment before. The app reads through a view that forgets its
 * own tenant filters (test/db/tenant-wall.test.ts), so only the tenant each transaction
 * sets keeps the tenants apart. The same with two API processes: test/process/pgbouncer.
 */
const runs = pgBouncerAvailable(inject('testDb') === 'postgres');
/** Requests of each side running at once: many times the pooler's server connections. */
const ROUNDS = 40;

const wire = (id: string) => id.replaceAll('-', '');

describe('behind PgBouncer in transaction mode', runsIf(runs, NEEDS_PGBOUNCER), () => {
  let pooler: PgBouncer;
  let forgetful: ForgetfulDb;
  beforeAll(async () => {
    pooler = await startPgBouncer(inject('pgAdminUrl'), {
      logins: [testAppLogin, 'postgres'],
      serverConnections: 2,
    });
  });
  const t = useRouteTests(() => ({
    through: pooler.through,
    viewDb: (db) => {
      forgetful = withoutTenantFilter(db);
      return forgetful.db;
    },
  }));
  afterAll(async () => pooler?.stop());

  it('gives each of two interleaving tenants its own rows and only them, with their filters forgotten', async () => {
    const mine = [await newRole(t.admin, 'Mine 1'), await newRole(t.admin, 'Mine 2')];
    const theirs = [await newRole(t.otherAdmin, 'Theirs')];
    const read = (tenantId: string) =>
      asTenant(tenantId, async () => (await listRoles(forgetful.db, tenantId)).map((r) => wire(r.id)).sort());
    const reads = await Promise.all(
      Array.from({ length: ROUNDS }, (_, i) =>
        i % 2 === 0 ? read(t.admin.tenantId) : read(t.otherAdmin.tenantId),
      ),
    );
    reads.forEach((ids, i) => {
      expect(ids, `read ${i}`).toEqual(i % 2 === 0 ? [...mine].sort() : theirs);
    });
  });

  it('writes each tenant’s rows under its own tenant, none refused, when their writes interleave', async () => {
    const names = Array.from({ length: ROUNDS }, (_, i) => `Role ${i}`);
    const answers = await Promise.all(
      names.map((name, i) =>
        (i % 2 === 0 ? t.admin : t.otherAdmin).request('POST', '/api/v1/roles', { name }),
      ),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(names.map(() => 201));
    const { rows } = await runSql(
      t.ctx.db.owner,
      "SELECT replace(tenant_id::text, '-', '') AS tenant, count(*)::int AS n FROM roles WHERE tenant_id IN (?, ?) GROUP BY 1 ORDER BY 1",
      t.admin.tenantId,
      t.otherAdmin.tenantId,
    );
    expect(rows).toEqual(
      [
        { tenant: t.admin.tenantId, n: ROUNDS / 2 },
        { tenant: t.otherAdmin.tenantId, n: ROUNDS / 2 },
      ].sort((a, b) => a.tenant.localeCompare(b.tenant)),
    );
  });

  it('records each change under the user who made it, when two users of one tenant and another tenant’s interleave', async () => {
    const one = await t.ctx.freshTenant();
    const second = await t.ctx.caller('admin', one.tenant, 'admin-2');
    const writers: Caller[] = [one.admin, second, t.otherAdmin];
    const made = await Promise.all(
      Array.from({ length: ROUNDS }, async (_, i) => {
        const writer = writers[i % writers.length] as Caller;
        const role = await created(writer, '/api/v1/roles', { name: `By ${i}` });
        return { role: wire(role.id), actor: writer.userId };
      }),
    );
    const { rows } = await runSql(
      t.ctx.db.owner,
      "SELECT target_id::text AS role, actor_user_id::text AS actor FROM audit_log WHERE target_type = 'role' AND action = 'role.created' AND tenant_id IN (?, ?)",
      one.tenantId,
      t.otherAdmin.tenantId,
    );
    const recorded = new Map(
      (rows as { role: string; actor: string | null }[]).map((r) => [wire(r.role), r.actor && wire(r.actor)]),
    );
    for (const { role, actor } of made) expect(recorded.get(role), role).toBe(actor);
  });

  it('keeps another tenant at 404 on every route with a path id, the application’s filters forgotten', async () => {
    const removedBefore = forgetful.removed();
    await anotherTenantGetsNothing(t);
    expect(forgetful.removed() - removedBefore).toBeGreaterThan(100);
  });
});
