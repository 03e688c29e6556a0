import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../db/database.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import { wireId, wireTime } from '../ids.ts';
import { deleteRole, insertRole, listRoles, roleInUseBySlots } from './repository.ts';
import type { CreateRoleRequest, RoleDefinition } from './schemas.ts';

export function roleToWire(row: {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  created_at: Date;
}): RoleDefinition {
  return {
    id: wireId(row.id),
    tenant_id: wireId(row.tenant_id),
    name: row.name,
    description: row.description,
    created_at: wireTime(row.created_at),
  };
}

export async function getRoles(db: Db, tenantId: string): Promise<RoleDefinition[]> {
  return (await listRoles(db, tenantId)).map(roleToWire);
}

export async function createRole(db: Db, tenantId: string, body: CreateRoleRequest): Promise<RoleDefinition> {
  const name = body.name.trim();
  if (name === '') throw validationFailed('name', 'must not be blank');
  try {
    const row = await insertRole(db, {
      tenant_id: tenantId,
      id: uuidv7(),
      name,
      description: body.description?.trim() || null,
    });
    return roleToWire(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('DUPLICATE', `a role named "${name}" already exists`);
    throw error;
  }
}

export async function removeRole(db: Db, tenantId: string, roleId: string): Promise<void> {
  if (await roleInUseBySlots(db, tenantId, roleId)) {
    throw new AppError('INVALID_STATE', 'role is required by shift slots; remove those slots first');
  }
  try {
    if (!(await deleteRole(db, tenantId, roleId))) throw notFound('role');
  } catch (error) {
    // A slot created between the check and the delete: the foreign key still refuses.
    if (isForeignKeyViolation(error)) {
      throw new AppError('INVALID_STATE', 'role is required by shift slots; remove those slots first');
    }
    throw error;
  }
}
