import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** Replaces the user's feed token (one per user): the old address stops working. */
export async function saveToken(db: Db, tenantId: string, userId: string, tokenHash: string): Promise<void> {
  await db
    .insertInto('calendar_tokens')
    .values({ tenant_id: tenantId, user_id: userId, token_hash: tokenHash })
    .onConflict((oc) =>
      oc
        .columns(['tenant_id', 'user_id'])
        .doUpdateSet({ token_hash: tokenHash, created_at: sql<string>`now()` }),
    )
    .execute();
}

/** When the user's current feed token was made; undefined when they have none. */
export async function findTokenCreatedAt(
  db: Db,
  tenantId: string,
  userId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('calendar_tokens')
    .select('created_at')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.created_at;
}

export async function deleteToken(db: Db, tenantId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('calendar_tokens')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute();
}

/**
 * The tenant whose feed a token opens. The one lookup of this feature that crosses tenants
 * (the feed has no bearer token), through the narrow function of migration 0006.
 */
export async function tokenTenant(db: Db, tokenHash: string): Promise<string | undefined> {
  const { rows } = await sql<{
    tenant_id: string;
  }>`SELECT tenant_id FROM calendar_token_owner(${tokenHash})`.execute(db);
  return rows[0]?.tenant_id;
}

/** Whose feed a token opens, with what the feed needs of them and their tenant (within its tenant). */
export function findFeedOwner(db: Db, tokenHash: string) {
  return (
    db
      .selectFrom('calendar_tokens as c')
      .innerJoin('users as u', (join) =>
        join.onRef('u.tenant_id', '=', 'c.tenant_id').onRef('u.id', '=', 'c.user_id'),
      )
      .innerJoin('tenant_settings as t', 't.tenant_id', 'c.tenant_id')
      .select(['c.tenant_id', 'c.user_id', 'u.role', 'u.display_name', 't.timezone'])
      .where('c.token_hash', '=', tokenHash)
      // A deactivated user's address answers as a revoked one, until they are reactivated.
      .where('u.active', '=', true)
      .executeTakeFirst()
  );
}

export interface FeedEntry {
  id: string;
  created_at: string;
  starts_at: string;
  ends_at: string;
  shift_name: string;
  event_name: string;
  role_name: string;
  location_name: string | null;
  street: string | null;
  postal_code: string | null;
  city: string | null;
}

/**
 * The user's assignments that end after `since`, with shift, event, slot role and place
 * (the shift's location, else the event's). Employees see only what is published.
 */
export function feedEntries(
  db: Db,
  tenantId: string,
  userId: string,
  since: Date,
  onlyPublished: boolean,
): Promise<FeedEntry[]> {
  let query = db
    .selectFrom('shift_assignments as a')
    .innerJoin('shifts as s', (join) =>
      join.onRef('s.tenant_id', '=', 'a.tenant_id').onRef('s.id', '=', 'a.shift_id'),
    )
    .innerJoin('events as e', (join) =>
      join.onRef('e.tenant_id', '=', 's.tenant_id').onRef('e.id', '=', 's.event_id'),
    )
    .innerJoin('shift_slots as sl', (join) =>
      join.onRef('sl.tenant_id', '=', 'a.tenant_id').onRef('sl.id', '=', 'a.slot_id'),
    )
    .innerJoin('roles as r', (join) =>
      join.onRef('r.tenant_id', '=', 'sl.tenant_id').onRef('r.id', '=', 'sl.role_id'),
    )
    .leftJoin('locations as l', (join) =>
      join
        .onRef('l.tenant_id', '=', 's.tenant_id')
        .on((eb) => eb('l.id', '=', eb.fn.coalesce('s.location_id', 'e.location_id'))),
    )
    .select([
      'a.id',
      'a.created_at',
      's.starts_at',
      's.ends_at',
      's.name as shift_name',
      'e.name as event_name',
      'r.name as role_name',
      'l.name as location_name',
      'l.street',
      'l.postal_code',
      'l.city',
    ])
    .where('a.tenant_id', '=', tenantId)
    .where('a.user_id', '=', userId)
    .where('s.ends_at', '>', since.toISOString());
  if (onlyPublished) {
    query = query.where('s.published_at', 'is not', null).where('e.published_at', 'is not', null);
  }
  return query.orderBy('s.starts_at').orderBy('a.id').execute();
}
