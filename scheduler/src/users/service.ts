import { type Identity, userIdForSubject } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Deps } from '../deps.ts';
import { AppError, deactivated, forbidden, notFound, validationFailed } from '../errors.ts';
import { optionalText, requiredText } from '../input/text.ts';
import { existingRoleIds, roleExists } from '../roles/repository.ts';
import type { RoleDefinition } from '../roles/schemas.ts';
import {
  findLocale,
  findStaff,
  grant,
  grantAll,
  insertStaff,
  listStaff,
  lockStaff,
  qualificationsOf,
  revoke,
  updateLocale,
  updateStaff,
  upsertUser,
} from './repository.ts';
import type {
  CreateUserRequest,
  Me,
  UpdateMeRequest,
  UpdateUserRequest,
  UserDetail,
  UserRecord,
} from './schemas.ts';
import { canSeeUser } from './visibility.ts';

type Row = NonNullable<Awaited<ReturnType<typeof findStaff>>>;

function toWire<T extends Row>(row: T): T & UserRecord {
  // listStaff/findStaff filter customers out; this narrows the type accordingly.
  return { ...row, role: row.role === 'admin' ? 'admin' : 'employee' };
}

/** The tenant's admins and employees, each with their qualifications, in one read. */
export async function getUsers(deps: Deps, caller: Identity): Promise<UserDetail[]> {
  return (await listStaff(deps.db, caller.tenantId)).map(toWire);
}

export async function getUserDetail(deps: Deps, caller: Identity, userId: string): Promise<UserDetail> {
  if (!canSeeUser(caller, userId)) throw forbidden();
  const user = await findStaff(deps.db, caller.tenantId, userId);
  if (!user) throw notFound('user');
  const qualifications = await qualificationsOf(deps.db, caller.tenantId, userId);
  return { ...toWire(user), qualifications };
}

/** The caller's own record with their language; the access hook lets only admins and employees here. */
export async function getMe(deps: Deps, caller: Identity): Promise<Me> {
  const detail = await getUserDetail(deps, caller, caller.userId);
  return { ...detail, locale: await findLocale(deps.db, caller.tenantId, caller.userId) };
}

/**
 * A language tag as stored: the canonical form of a well-formed BCP 47 tag
 * (`Intl.getCanonicalLocales`: `de-de` -> `de-DE`) that the runtime has dates and
 * numbers for; 422 naming `locale` otherwise.
 */
export function canonicalLocale(tag: string): string {
  let canonical: string | undefined;
  try {
    [canonical] = Intl.getCanonicalLocales(tag);
  } catch {
    throw validationFailed('locale', `"${tag}" is not a BCP 47 language tag`);
  }
  // The canonical form may differ in length from what was sent; the column holds 35 at most.
  if (canonical !== undefined && canonical.length > 35) {
    throw validationFailed('locale', 'must NOT have more than 35 characters');
  }
  if (canonical === undefined || Intl.DateTimeFormat.supportedLocalesOf([canonical]).length === 0) {
    throw validationFailed('locale', `no language is known for "${tag}"; use a tag such as de-DE`);
  }
  return canonical;
}

/** The caller changes what is theirs to choose: today their language (null clears it). */
export async function updateMe(deps: Deps, caller: Identity, input: UpdateMeRequest): Promise<Me> {
  if (input.locale !== undefined) {
    const locale = input.locale === null ? null : canonicalLocale(input.locale);
    const set = await unitOfWork(deps, caller, 'user.language_set', async (tx) => {
      const set = await updateLocale(tx.db, caller.tenantId, caller.userId, locale);
      if (set) await tx.record({ type: 'user.language_set', userId: caller.userId, locale });
      return set;
    });
    if (!set) throw notFound('user');
  }
  return getMe(deps, caller);
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
    await unitOfWork(deps, caller, 'qualification.granted', async (tx) => {
      await grant(tx.db, {
        tenant_id: caller.tenantId,
        user_id: input.userId,
        role_id: input.roleId,
        granted_by: caller.userId,
      });
      await tx.record({ type: 'qualification.granted', userId: input.userId, roleId: input.roleId });
    });
  } catch (error) {
    // The role, or the user, was deleted between the check and the insert.
    if (isForeignKeyViolation(error, 'user_qualifications_tenant_id_role_id_fkey')) throw notFound('role');
    if (isForeignKeyViolation(error, 'user_qualifications_tenant_id_user_id_fkey')) throw notFound('user');
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
  await unitOfWork(deps, caller, 'qualification.revoked', async (tx) => {
    await revoke(tx.db, caller.tenantId, input.userId, input.roleId);
    await tx.record({ type: 'qualification.revoked', userId: input.userId, roleId: input.roleId });
  });
}

/**
 * Pre-provisions a person before their first sign-in, under the id their subject maps to
 * (the rule tokens follow), with any qualifications, in one transaction: an unknown role
 * leaves nothing behind.
 */
export async function createUser(
  deps: Deps,
  caller: Identity,
  input: CreateUserRequest,
): Promise<UserRecord> {
  const id = userIdForSubject(caller.issuer, input.subject);
  // The schema counts characters, tokens UTF-16 units: a value no token could carry.
  if (id === null) throw validationFailed('subject', 'is not a subject a token can carry');
  const name = requiredText('name', input.name);
  const roleIds = [...new Set(input.qualifications ?? [])];
  const known = await existingRoleIds(deps.db, caller.tenantId, roleIds);
  const unknown = roleIds.filter((roleId) => !known.has(roleId));
  if (unknown.length > 0) throw unknownRoles(unknown);
  try {
    return await unitOfWork(deps, caller, 'user.created', async (tx) => {
      const trx = tx.db;
      const user = await insertStaff(trx, {
        tenant_id: caller.tenantId,
        id,
        role: input.role,
        display_name: name,
        email: optionalText(input.email),
      });
      if (!user) throw new AppError('DUPLICATE', 'a user with this subject exists already');
      await grantAll(trx, { tenant_id: caller.tenantId, user_id: id, granted_by: caller.userId }, roleIds);
      await tx.record({ type: 'user.created', userId: id });
      return toWire(user);
    });
  } catch (error) {
    // A role deleted between the check and the grant: nothing was created.
    if (isForeignKeyViolation(error, 'user_qualifications_tenant_id_role_id_fkey')) {
      throw validationFailed('qualifications', 'a role no longer exists');
    }
    throw error;
  }
}

const unknownRoles = (ids: string[]) =>
  validationFailed('qualifications', `no such role in this tenant: ${ids.join(', ')}`);

/** What the access hook remembers of a signed-in user (tenants/provisioning): dropped when their standing changes. */
export interface SignInMemo {
  forget(tenantId: string, userId: string): void;
}

/**
 * Changes a user's name, email or standing. Deactivating frees their upcoming seats and
 * removes their push subscriptions in the same transaction; their records stay. An admin cannot deactivate themselves, and
 * the caller's own row is locked with the target's and must still be active, so two
 * admins deactivating each other at once cannot leave the tenant without an admin.
 * The sign-in memo is required, so no caller can change a standing and leave it stale.
 */
export async function updateUser(
  deps: Deps,
  caller: Identity,
  userId: string,
  input: UpdateUserRequest,
  signIns: SignInMemo,
): Promise<UserRecord> {
  if (input.active === false && userId === caller.userId) {
    throw new AppError('INVALID_STATE', 'you cannot deactivate yourself; another admin can');
  }
  const change = {
    ...(input.active === undefined ? {} : { active: input.active }),
    ...(input.name === undefined ? {} : { display_name: requiredText('name', input.name) }),
    ...(input.email === undefined ? {} : { email: optionalText(input.email) }),
  };
  const updated = await unitOfWork(deps, caller, 'user.updated', async (tx) => {
    const trx = tx.db;
    const rows = await lockStaff(trx, caller.tenantId, [...new Set([caller.userId, userId])]);
    const target = rows.find((row) => row.id === userId);
    if (!target) throw notFound('user');
    if (rows.find((row) => row.id === caller.userId)?.active === false) throw deactivated();
    const user = await updateStaff(trx, caller.tenantId, userId, change);
    await tx.record({ type: 'user.updated', userId });
    // Their upcoming seats and their browsers go (src/reactions.ts lists who reacts).
    if (target.active && input.active === false) {
      await tx.record({ type: 'user.deactivated', userId, at: deps.clock.now() });
    }
    return toWire(user);
  });
  // Once committed: this process's memo must not keep letting a deactivated user in
  // (other processes' memos drop it within their TTL).
  signIns.forget(caller.tenantId, userId);
  return updated;
}

/**
 * Just-in-time provisioning of the caller's user row (called by tenants/provisioning);
 * answers whether the user is active.
 */
export function provisionUser(deps: Deps, identity: Identity): Promise<boolean> {
  return unitOfWork(deps, identity, 'user.provisioned', async (tx) => {
    const { active, written } = await upsertUser(tx.db, {
      tenant_id: identity.tenantId,
      id: identity.userId,
      role: identity.role,
      display_name: identity.name,
      email: identity.email,
    });
    if (written) await tx.record({ type: 'user.provisioned', userId: identity.userId });
    return active;
  });
}
