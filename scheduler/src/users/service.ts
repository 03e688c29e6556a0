import type { Identity } from '../auth/identity.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { forbidden, notFound } from '../errors.ts';
import { roleExists } from '../roles/repository.ts';
import type { RoleDefinition } from '../roles/schemas.ts';
import { findStaff, grant, listStaff, qualificationsOf, revoke, upsertUser } from './repository.ts';
import type { UserDetail, UserRecord } from './schemas.ts';
import { canSeeUser } from './visibility.ts';

type Row = Awaited<ReturnType<typeof listStaff>>[number];

function toWire(row: Row): UserRecord {
  // listStaff/findStaff filter customers out; this narrows the type accordingly.
  return { ...row, role: row.role === 'admin' ? 'admin' : 'employee' };
}

export async function getUsers(deps: Deps, caller: Identity): Promise<UserRecord[]> {
  return (await listStaff(deps.db, caller.tenantId)).map(toWire);
}

export async function getUserDetail(deps: Deps, caller: Identity, userId: string): Promise<UserDetail> {
  if (!canSeeUser(caller, userId)) throw forbidden();
  const user = await findStaff(deps.db, caller.tenantId, userId);
  if (!user) throw notFound('user');
  const qualifications = await qualificationsOf(deps.db, caller.tenantId, userId);
  return { ...toWire(user), qualifications };
}

export async function getMyQualifications(deps: Deps, caller: Identity): Promise<RoleDefinition[]> {
  return qualificationsOf(deps.db, caller.tenantId, caller.userId);
}

export interface QualificationInput {
  userId: string;
  roleId: string;
}

async function requireStaffAndRole(deps: Deps, caller: Identity, input: QualificationInput): Promise<void> {
  if (!(await findStaff(deps.db, caller.tenantId, input.userId))) throw notFound('user');
  if (!(await roleExists(deps.db, caller.tenantId, input.roleId))) throw notFound('role');
}

/** Idempotent: granting a role the user already holds changes nothing. */
export async function grantQualification(
  deps: Deps,
  caller: Identity,
  input: QualificationInput,
): Promise<void> {
  await requireStaffAndRole(deps, caller, input);
  try {
    await grant(deps.db, {
      tenant_id: caller.tenantId,
      user_id: input.userId,
      role_id: input.roleId,
      granted_by: caller.userId,
    });
  } catch (error) {
    // The role was deleted between the check and the insert.
    if (isForeignKeyViolation(error)) throw notFound('role');
    throw error;
  }
}

/** Idempotent: revoking a role the user does not hold changes nothing. */
export async function revokeQualification(
  deps: Deps,
  caller: Identity,
  input: QualificationInput,
): Promise<void> {
  await requireStaffAndRole(deps, caller, input);
  await revoke(deps.db, caller.tenantId, input.userId, input.roleId);
}

/** Just-in-time provisioning of the caller's user row (called by tenants/provisioning). */
export async function provisionUser(deps: Pick<Deps, 'db'>, identity: Identity): Promise<void> {
  await upsertUser(deps.db, {
    tenant_id: identity.tenantId,
    id: identity.userId,
    role: identity.role,
    display_name: identity.name,
    email: identity.email,
  });
}
