import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { optionalText, requiredText } from '../input/text.ts';
import { deleteRole, insertRole, listRoles, roleInUseBySlots } from './repository.ts';
import type { CreateRoleRequest, RoleDefinition } from './schemas.ts';

export async function getRoles(deps: Deps, caller: Identity): Promise<RoleDefinition[]> {
  return listRoles(deps.db, caller.tenantId);
}

export async function createRole(
  deps: Deps,
  caller: Identity,
  input: CreateRoleRequest,
): Promise<RoleDefinition> {
  const name = requiredText('name', input.name);
  try {
    return await unitOfWork(deps, caller, 'role.created', async (tx) => {
      const role = await insertRole(tx.db, {
        tenant_id: caller.tenantId,
        id: newId(),
        name,
        description: optionalText(input.description),
      });
      await tx.record({ type: 'role.created', roleId: role.id });
      return role;
    });
  } catch (error) {
    if (isUniqueViolation(error, 'roles_tenant_id_name_key'))
      throw new AppError('DUPLICATE', `a role named "${name}" already exists`);
    throw error;
  }
}

const inUse = () =>
  new AppError('INVALID_STATE', 'role is required by shift slots; remove those slots first');

export async function removeRole(deps: Deps, caller: Identity, roleId: string): Promise<void> {
  if (await roleInUseBySlots(deps.db, caller.tenantId, roleId)) throw inUse();
  try {
    const deleted = await unitOfWork(deps, caller, 'role.deleted', async (tx) => {
      const deleted = await deleteRole(tx.db, caller.tenantId, roleId);
      if (deleted) await tx.record({ type: 'role.deleted', roleId });
      return deleted;
    });
    if (!deleted) throw notFound('role');
  } catch (error) {
    // A slot created between the check and the delete: the foreign key still refuses.
    if (isForeignKeyViolation(error, 'shift_slots_tenant_id_role_id_fkey')) throw inUse();
    throw error;
  }
}
