import { sql } from 'kysely';
import type { AccessRole } from '../auth/identity.ts';
import type { Db } from '../db/database.ts';
import { roleColumns } from '../roles/repository.ts';

const userColumns = ['id', 'tenant_id', 'role', 'display_name', 'email', 'created_at'] as const;

/** Staff only: customers are provisioned too, but they are not users of the schedule. */
export function listStaff(db: Db, tenantId: string) {
  return db
    .selectFrom('users')
    .select(userColumns)
    .where('tenant_id', '=', tenantId)
    .where('role', 'in', ['admin', 'employee'])
    .orderBy('display_name')
    .orderBy('id')
    .execute();
}

export function findStaff(db: Db, tenantId: string, userId: string) {
  return db
    .selectFrom('users')
    .select(userColumns)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .where('role', 'in', ['admin', 'employee'])
    .executeTakeFirst();
}

export function qualificationsOf(db: Db, tenantId: string, userId: string) {
  return db
    .selectFrom('user_qualifications as q')
    .innerJoin('roles as r', (join) =>
      join.onRef('r.tenant_id', '=', 'q.tenant_id').onRef('r.id', '=', 'q.role_id'),
    )
    .select(roleColumns.map((column) => `r.${column}` as const))
    .where('q.tenant_id', '=', tenantId)
    .where('q.user_id', '=', userId)
    .orderBy('r.name')
    .execute();
}

export async function grant(
  db: Db,
  row: { tenant_id: string; user_id: string; role_id: string; granted_by: string },
) {
  await db
    .insertInto('user_qualifications')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'user_id', 'role_id']).doNothing())
    .execute();
}

export async function revoke(db: Db, tenantId: string, userId: string, roleId: string): Promise<void> {
  await db
    .deleteFrom('user_qualifications')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('role_id', '=', roleId)
    .execute();
}

/** Insert, or update only when something changed, so a repeated login writes nothing. */
export async function upsertUser(
  db: Db,
  user: {
    tenant_id: string;
    id: string;
    role: AccessRole;
    display_name: string | null;
    email: string | null;
  },
): Promise<void> {
  await db
    .insertInto('users')
    .values(user)
    .onConflict((oc) =>
      oc
        .columns(['tenant_id', 'id'])
        .doUpdateSet({
          role: (eb) => eb.ref('excluded.role'),
          display_name: (eb) => eb.ref('excluded.display_name'),
          email: (eb) => eb.ref('excluded.email'),
          updated_at: sql`now()`,
        })
        .where((eb) =>
          eb.or([
            eb('users.role', 'is distinct from', eb.ref('excluded.role')),
            eb('users.display_name', 'is distinct from', eb.ref('excluded.display_name')),
            eb('users.email', 'is distinct from', eb.ref('excluded.email')),
          ]),
        ),
    )
    .execute();
}
