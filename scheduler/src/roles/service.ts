import type { Db } from '../db/database.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { deleteRole, insertRole, listRoles, roleInUseBySlots } from './repository.ts';
import type { CreateRoleRequest, RoleDefinition } from './schemas.ts';

export async function getRoles(db: Db, tenantId: string): Promise<RoleDefinition[]> {
  return listRoles(db, tenantId);
}

export async function createRole(db: Db, tenantId: string, body: CreateRoleRequest): Promise<RoleDefinition> {
  const name = body.name.trim();
  if (name === '') throw validationFailed('name', 'must not be blank');
  try {
    return await insertRole(db, {
      tenant_id: tenantId,
      id: newId(),
      name,
      description: body.description?.trim() || null,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('DUPLICATE', `a role named "${name}" already exists`);
    throw error;
  }
}

const inUse = () =>
  new AppError('INVALID_STATE', 'role is required by shift slots; remove those slots first');

export async function removeRole(db: Db, tenantId: string, roleId: string): Promise<void> {
  if (await roleInUseBySlots(db, tenantId, roleId)) throw inUse();
  try {
    if (!(await deleteRole(db, tenantId, roleId))) throw notFound('role');
  } catch (error) {
    // A slot created between the check and the delete: the foreign key still refuses.
    if (isForeignKeyViolation(error)) throw inUse();
    throw error;
  }
}
