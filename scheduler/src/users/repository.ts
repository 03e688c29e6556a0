import { sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { AccessRole } from '../auth/identity.ts';
import { isAnyOf, type RowColumns, unnestRows } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import { timestamptzColumnToWire, uuidColumnToWire } from '../db/wire-types.ts';
import { roleColumns } from '../roles/repository.ts';

const userColumns = ['id', 'tenant_id', 'role', 'display_name', 'email', 'active', 'created_at'] as const;

const staffRoles: AccessRole[] = ['admin', 'employee'];

/**
 * Staff only: customers are provisioned too, but they are not users of the schedule.
 * Each with the roles granted to them, by name, as qualificationsOf reads them for one
 * user; one statement for the whole tenant, never one per user.
 */
export function listStaff(db: Db, tenantId: string) {
  return db
    .selectFrom('users as u')
    .select(userColumns.map((column) => `u.${column}` as const))
    .select((user) =>
      jsonArrayFrom(
        user
          .selectFrom('user_qualifications as q')
          .innerJoin('roles as r', (join) =>
            join.onRef('r.tenant_id', '=', 'q.tenant_id').onRef('r.id', '=', 'q.role_id'),
          )
          .select([
            uuidColumnToWire('r.id').as('id'),
            uuidColumnToWire('r.tenant_id').as('tenant_id'),
            'r.name',
            'r.description',
            timestamptzColumnToWire('r.created_at').as('created_at'),
          ])
          .whereRef('q.tenant_id', '=', 'u.tenant_id')
          .whereRef('q.user_id', '=', 'u.id')
          .orderBy('r.name'),
      ).as('qualifications'),
    )
    .where('u.tenant_id', '=', tenantId)
    .where('u.role', 'in', staffRoles)
    .orderBy('u.display_name')
    .orderBy('u.id')
    .execute();
}

export function findStaff(db: Db, tenantId: string, userId: string) {
  return db
    .selectFrom('users')
    .select(userColumns)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .where('role', 'in', staffRoles)
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

const grantColumns: RowColumns<{ tenant_id: string; user_id: string; role_id: string; granted_by: string }> =
  [
    ['tenant_id', 'uuid'],
    ['user_id', 'uuid'],
    ['role_id', 'uuid'],
    ['granted_by', 'uuid'],
  ];

/** Grants the user every one of `roleIds` in one statement (one array per column); those held stay. */
export async function grantAll(
  db: Db,
  grant: { tenant_id: string; user_id: string; granted_by: string },
  roleIds: readonly string[],
): Promise<void> {
  if (roleIds.length === 0) return;
  await db
    .insertInto('user_qualifications')
    .columns(grantColumns.map(([column]) => column))
    .expression(
      unnestRows(
        roleIds.map((role_id) => ({ ...grant, role_id })),
        grantColumns,
      ),
    )
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

/**
 * What a sign-in writes into a profile field: the token's value, unless an admin wrote
 * the profile (pre-provisioned or changed it), whose values stand; the token then only
 * fills what is empty.
 */
function signedInValue(column: 'display_name' | 'email') {
  return sql<string | null>`CASE WHEN users.profile_set_by_admin
    THEN COALESCE(${sql.ref(`users.${column}`)}, ${sql.ref(`excluded.${column}`)})
    ELSE ${sql.ref(`excluded.${column}`)} END`;
}

/**
 * Insert, or update only when something changed and the user is active, so a repeated
 * login writes nothing. Answers whether the user is active (a deactivated user's tokens
 * are refused) and whether the row was written.
 */
export async function upsertUser(
  db: Db,
  user: {
    tenant_id: string;
    id: string;
    role: AccessRole;
    display_name: string | null;
    email: string | null;
  },
): Promise<{ active: boolean; written: boolean }> {
  const written = await db
    .insertInto('users')
    .values(user)
    .onConflict((oc) =>
      oc
        .columns(['tenant_id', 'id'])
        .doUpdateSet({
          role: (eb) => eb.ref('excluded.role'),
          display_name: signedInValue('display_name'),
          email: signedInValue('email'),
          updated_at: sql`now()`,
        })
        .where((eb) =>
          eb.and([
            // A deactivated user's sign-ins change nothing: their row keeps the staff role
            // it was deactivated with (so an admin can still find and reactivate them; a
            // customer's token must not make them vanish), and the profile it had.
            eb('users.active', '=', true),
            eb.or([
              eb('users.role', 'is distinct from', eb.ref('excluded.role')),
              eb('users.display_name', 'is distinct from', signedInValue('display_name')),
              eb('users.email', 'is distinct from', signedInValue('email')),
            ]),
          ]),
        ),
    )
    .returning('active')
    .executeTakeFirst();
  if (written) return { ...written, written: true };
  // Nothing changed, so nothing was returned: read the flag.
  const row = await db
    .selectFrom('users')
    .select('active')
    .where('tenant_id', '=', user.tenant_id)
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow();
  return { ...row, written: false };
}

/** Those of `userIds` who are active: the only people anything is sent to. */
export async function activeAmong(db: Db, tenantId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where(isAnyOf('id', userIds))
    .where('active', '=', true)
    .execute();
  return rows.map((row) => row.id);
}

/** The tenant's active admins: who decides what waits for approval. */
export async function activeAdminIds(db: Db, tenantId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('role', '=', 'admin')
    .where('active', '=', true)
    .execute();
  return rows.map((row) => row.id);
}

/** A pre-provisioned user; undefined when the id is taken (by anyone: staff or customer). */
export function insertStaff(
  db: Db,
  user: {
    tenant_id: string;
    id: string;
    role: 'admin' | 'employee';
    display_name: string;
    email: string | null;
  },
) {
  return db
    .insertInto('users')
    .values({ ...user, profile_set_by_admin: true })
    .onConflict((oc) => oc.columns(['tenant_id', 'id']).doNothing())
    .returning(userColumns)
    .executeTakeFirst();
}

/**
 * Locks the rows of the given staff (in id order, so two admins changing each other
 * queue rather than deadlock) and answers what they hold now.
 */
export function lockStaff(db: Db, tenantId: string, userIds: string[]) {
  return db
    .selectFrom('users')
    .select(['id', 'active'])
    .where('tenant_id', '=', tenantId)
    .where(isAnyOf('id', userIds))
    .where('role', 'in', staffRoles)
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

export function updateStaff(
  db: Db,
  tenantId: string,
  userId: string,
  change: { active?: boolean; display_name?: string; email?: string | null },
) {
  const profile = change.display_name !== undefined || change.email !== undefined;
  return db
    .updateTable('users')
    .set({ ...change, ...(profile ? { profile_set_by_admin: true } : {}), updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .returning(userColumns)
    .executeTakeFirstOrThrow();
}

/** The language the user chose for the app, or null (also for no such user). */
export async function findLocale(db: Db, tenantId: string, userId: string): Promise<string | null> {
  const row = await db
    .selectFrom('users')
    .select('locale')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return row?.locale ?? null;
}

/** Sets or clears the user's language; false when there is no such user. */
export async function updateLocale(
  db: Db,
  tenantId: string,
  userId: string,
  locale: string | null,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ locale, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
