import type { Identity } from '../auth/identity.ts';
import type { Db } from '../db/database.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import { forbidden, notFound } from '../errors.ts';
import type { RoleDefinition } from '../roles/schemas.ts';
import { findStaff, grant, listStaff, qualificationsOf, revoke, roleExists } from './repository.ts';
import type { UserDetail, UserRecord } from './schemas.ts';

type Row = Awaited<ReturnType<typeof listStaff>>[number];

function toWire(row: Row): UserRecord {
  // listStaff/findStaff filter customers out; this narrows the type accordingly.
  return { ...row, role: row.role === 'admin' ? 'admin' : 'employee' };
}

export async function getUsers(db: Db, tenantId: string): Promise<UserRecord[]> {
  return (await listStaff(db, tenantId)).map(toWire);
}

/** Admins read anyone in their tenant; an employee reads only their own record. */
export async function getUserDetail(db: Db, caller: Identity, userId: string): Promise<UserDetail> {
  if (caller.role !== 'admin' && caller.userId !== userId) throw forbidden();
  const user = await findStaff(db, caller.tenantId, userId);
  if (!user) throw notFound('user');
  const qualifications = await qualificationsOf(db, caller.tenantId, userId);
  return { ...toWire(user), qualifications: qualifications };
}

export async function getMyQualifications(db: Db, caller: Identity): Promise<RoleDefinition[]> {
  return qualificationsOf(db, caller.tenantId, caller.userId);
}

async function requireStaffAndRole(db: Db, tenantId: string, userId: string, roleId: string): Promise<void> {
  if (!(await findStaff(db, tenantId, userId))) throw notFound('user');
  if (!(await roleExists(db, tenantId, roleId))) throw notFound('role');
}

/** Idempotent: granting a role the user already holds changes nothing. */
export async function grantQualification(
  db: Db,
  caller: Identity,
  userId: string,
  roleId: string,
): Promise<void> {
  await requireStaffAndRole(db, caller.tenantId, userId, roleId);
  try {
    await grant(db, {
      tenant_id: caller.tenantId,
      user_id: userId,
      role_id: roleId,
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
  db: Db,
  caller: Identity,
  userId: string,
  roleId: string,
): Promise<void> {
  await requireStaffAndRole(db, caller.tenantId, userId, roleId);
  await revoke(db, caller.tenantId, userId, roleId);
}
