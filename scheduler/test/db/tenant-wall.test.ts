import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { appRole, checkApplicationRole } from '../../src/db/database.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { listRoles } from '../../src/roles/repository.ts';
import { useRouteTests } from '../support/context.ts';
import { anotherTenantGetsNothing } from '../support/cross-tenant.ts';
import { refusalCode } from '../support/database.ts';
import { created, newRole } from '../support/scheduling.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';
import { type ForgetfulDb, withoutTenantFilter } from '../support/without-tenant-filter.ts';

/**
 * The second wall between tenants (migration 0006): row-level security keyed by the
 * request's tenant, for a role that cannot step around it. Every test here runs the
 * application's own role on this file's database; the first group looks at the wall's
 * parts with raw SQL, the second removes the application's own tenant filters and
 * shows that the wall alone keeps tenants apart.
 */
let forgetful: ForgetfulDb;
const t = useRouteTests({
  viewDb: (db) => {
    forgetful = withoutTenantFilter(db);
    return forgetful.db;
  },
});

const onPostgres = inject('testDb') === 'postgres';

describe('row-level security', () => {
  it('covers every table that holds a tenant’s rows, for a role that owns none and bypasses nothing', async () => {
    const { rows: tables } = await sql<{ table: string; secured: boolean; policies: number; owner: string }>`
      SELECT c.relname AS table, c.relrowsecurity AS secured, pg_get_userbyid(c.relowner) AS owner,
             (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid)::int AS policies
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind = 'r'
         AND (c.relname = 'tenants' OR EXISTS (SELECT FROM pg_attribute a
               WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped))
       ORDER BY 1`.execute(t.ctx.db.owner);
    expect(tables.length).toBeGreaterThanOrEqual(20);
    for (const table of tables) {
      expect({ table: table.table, secured: table.secured, policies: table.policies }).toEqual({
        table: table.table,
        secured: true,
        policies: 1,
      });
      expect(table.owner).not.toBe(appRole);
    }
    const { rows: role } = await sql<{ superuser: boolean; bypass: boolean; member: boolean }>`
      SELECT rolsuper AS superuser, rolbypassrls AS bypass,
             pg_has_role(current_user, ${appRole}, 'USAGE') AS member
        FROM pg_roles WHERE rolname = current_user`.execute(t.ctx.db.db);
    expect(role).toEqual([{ superuser: false, bypass: false, member: true }]);
    // The check the server runs at start-up agrees, and refuses the owner's connections.
    await expect(checkApplicationRole(t.ctx.db.db)).resolves.toBeUndefined();
    await expect(checkApplicationRole(t.ctx.db.owner)).rejects.toThrow(
      /bypass row-level security|owns the tables/,
    );
  });

  it('shows no row outside a tenant scope, and only the scope’s tenant inside one', async () => {
    await newRole(t.admin, 'Mine');
    await newRole(t.otherAdmin, 'Theirs');
    const db = t.ctx.db.db;
    const count = (table: string) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`
        .execute(db)
        .then((r) => r.rows[0]?.n);
    for (const table of ['tenants', 'tenant_settings', 'users', 'roles']) {
      expect(await count(table), table).toBe(0);
    }
    const names = await asTenant(t.admin.tenantId, async () =>
      (await sql<{ name: string }>`SELECT name FROM roles`.execute(db)).rows.map((r) => r.name),
    );
    expect(names).toEqual(['Mine']);
  });

  it('refuses to write, change or remove another tenant’s rows from a tenant’s scope', async () => {
    const theirs = await newRole(t.otherAdmin, 'Theirs');
    const db = t.ctx.db.db;
    await asTenant(t.admin.tenantId, async () => {
      expect(
        await refusalCode(
          sql`INSERT INTO roles (tenant_id, id, name) VALUES (${t.otherAdmin.tenantId}, gen_random_uuid(), 'Planted')`.execute(
            db,
          ),
        ),
      ).toBe('42501');
      const renamed = await sql`UPDATE roles SET name = 'Taken' WHERE id = ${theirs}`.execute(db);
      expect(renamed.numAffectedRows).toBe(0n);
      const removed = await sql`DELETE FROM roles WHERE id = ${theirs}`.execute(db);
      expect(removed.numAffectedRows).toBe(0n);
      // Moving one of its own rows into the other tenant is refused as well.
      const mine = await newRole(t.admin, 'Mine');
      expect(
        await refusalCode(
          sql`UPDATE roles SET tenant_id = ${t.otherAdmin.tenantId} WHERE id = ${mine}`.execute(db),
        ),
      ).toBe('42501');
    });
    const list = (await t.otherAdmin.request('GET', '/api/v1/roles')).json() as {
      id: string;
      name: string;
    }[];
    expect(list.map((r) => [r.id, r.name])).toEqual([[theirs, 'Theirs']]);
  });

  it('leaves the application no way around it: no switching it off, no owner’s statements', async () => {
    const db = t.ctx.db.db;
    await asTenant(t.admin.tenantId, async () => {
      for (const statement of [
        'ALTER TABLE roles DISABLE ROW LEVEL SECURITY',
        'DROP POLICY tenant_wall ON roles',
        'TRUNCATE roles CASCADE',
        'ALTER TABLE roles OWNER TO scheduler_app',
        'CREATE TABLE planted (id int)',
      ]) {
        expect(await refusalCode(sql.raw(statement).execute(db)), statement).toMatch(/^42501$|^42P01$/);
      }
      // row_security = off makes a query that a policy would filter fail rather than bypass it.
      await expect(
        db.connection().execute(async (connection) => {
          await sql`SET row_security = off`.execute(connection);
          try {
            return await sql`SELECT count(*) FROM roles`.execute(connection);
          } finally {
            await sql`RESET row_security`.execute(connection);
          }
        }),
      ).rejects.toThrow(/row-level security/);
    });
  });

  it(
    'holds on PostgreSQL even for a statement that drops the role: the login itself is held by it',
    runsIf(onPostgres, NEEDS_POSTGRES),
    async () => {
      await newRole(t.admin, 'Mine');
      const visible = await t.ctx.db.db.connection().execute(async (connection) => {
        await sql`RESET ROLE`.execute(connection);
        try {
          return (await sql<{ n: number }>`SELECT count(*)::int AS n FROM roles`.execute(connection)).rows[0]
            ?.n;
        } finally {
          await sql.raw(`SET ROLE ${appRole}`).execute(connection);
        }
      });
      expect(visible).toBe(0);
    },
  );

  it('crosses tenants only where the contract does, answering an id and nothing else', async () => {
    const form = await created(t.admin, '/api/v1/forms', {
      title: 'Catering',
      fields: [{ name: 'contact', label: 'Name', type: 'text', required: true }],
    });
    await asTenant(t.otherAdmin.tenantId, async () => {
      const { rows } = await sql<{
        tenant_id: string;
      }>`SELECT form_tenant(${form.slug}) AS tenant_id`.execute(t.ctx.db.db);
      expect(rows).toEqual([{ tenant_id: t.admin.tenantId }]);
      const forms = await sql`SELECT * FROM customer_forms WHERE slug = ${form.slug}`.execute(t.ctx.db.db);
      expect(forms.rows).toEqual([]);
    });
  });
});

describe('the wall alone', () => {
  it('keeps another tenant at 404 on every route with a path id when the application forgets its tenant filters', async () => {
    const removedBefore = forgetful.removed();
    const world = await anotherTenantGetsNothing(t);
    // The forgetful view really removed the application's filters along the way.
    expect(forgetful.removed() - removedBefore).toBeGreaterThan(100);
    const lists = t.ctx.routes.filter(
      (r) => r.method === 'GET' && r.url.startsWith('/api/v1/') && !r.url.includes(':') && !r.hidden,
    );
    expect(lists.length).toBeGreaterThan(10);
    for (const route of lists) {
      const response = await t.otherAdmin.request('GET', route.url);
      for (const [what, id] of Object.entries(world)) {
        if (what.startsWith('their')) continue;
        expect(response.body, `${route.url} shows ${what}`).not.toContain(id);
      }
    }
  });

  it('is what holds there: the same forgetful query past the wall returns every tenant’s rows', async () => {
    const mine = await newRole(t.admin, 'Mine');
    const theirs = await newRole(t.otherAdmin, 'Theirs');
    const pastTheWall = withoutTenantFilter(t.ctx.db.owner).db;
    const everyone = (await listRoles(pastTheWall, t.admin.tenantId)).map((r) => r.id);
    expect(everyone).toEqual(expect.arrayContaining([mine, theirs]));
    const held = await asTenant(t.admin.tenantId, () => listRoles(forgetful.db, t.admin.tenantId));
    expect(held.map((r) => r.id)).toEqual([mine]);
  });
});
