import { isAnyOf } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';

export const roleColumns = ['id', 'tenant_id', 'name', 'description', 'created_at'] as const;

export function listRoles(db: Db, tenantId: string) {
  return db
    .selectFrom('roles')
    .select(roleColumns)
    .where('tenant_id', '=', tenantId)
    .orderBy('name')
    .execute();
}

export function insertRole(
  db: Db,
  row: { tenant_id: string; id: string; name: string; description: string | null },
) {
  return db.insertInto('roles').values(row).returning(roleColumns).executeTakeFirstOrThrow();
}

export async function roleInUseBySlots(db: Db, tenantId: string, roleId: string): Promise<boolean> {
  const row = await db
    .selectFrom('shift_slots')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('role_id', '=', roleId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteRole(db: Db, tenantId: string, roleId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('roles')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', roleId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Which of these ids are role definitions of the tenant, in one query. */
export async function existingRoleIds(
  db: Db,
  tenantId: string,
  roleIds: readonly string[],
): Promise<Set<string>> {
  if (roleIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('roles')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where(isAnyOf('id', roleIds))
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Whether the tenant has this role definition (other features check references with it). */
export async function roleExists(db: Db, tenantId: string, roleId: string): Promise<boolean> {
  const row = await db
    .selectFrom('roles')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', roleId)
    .executeTakeFirst();
  return row !== undefined;
}
