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

export async function roleExists(db: Db, tenantId: string, roleId: string): Promise<boolean> {
  const row = await db
    .selectFrom('roles')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', roleId)
    .executeTakeFirst();
  return row !== undefined;
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
