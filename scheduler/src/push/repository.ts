import { sql } from 'kysely';
import { isAnyOf } from '../db/arrays.ts';
import type { Db } from '../db/database.ts';
import { uuidColumnToWire } from '../db/wire-types.ts';
import type { PushSubscription } from './schemas.ts';

const columns = [
  'id',
  'tenant_id',
  'user_id',
  'endpoint',
  'label',
  'user_agent',
  'created_at',
  'updated_at',
] as const;

export interface SubscriptionValues {
  tenant_id: string;
  id: string;
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  /** A name given at registration; undefined: keep the one a re-registration by its owner had. */
  label: string | null | undefined;
  user_agent: string | null;
}

/**
 * Registers an endpoint for a user: new (created) or moved and refreshed (an endpoint
 * is one browser, and belongs to whoever registered it last). `xmax = 0` tells a fresh
 * insert from an update in PostgreSQL's upsert.
 */
export async function upsertSubscription(
  db: Db,
  values: SubscriptionValues,
): Promise<{ subscription: PushSubscription; created: boolean }> {
  const row = await db
    .insertInto('push_subscriptions')
    .values({ ...values, label: values.label ?? null })
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'endpoint']).doUpdateSet({
        user_id: values.user_id,
        p256dh: values.p256dh,
        auth: values.auth,
        // Omitted: the name stays with its owner; a browser moving to someone else loses it.
        label:
          values.label === undefined
            ? sql<string | null>`CASE WHEN push_subscriptions.user_id = excluded.user_id
                                      THEN push_subscriptions.label END`
            : values.label,
        user_agent: values.user_agent,
        updated_at: sql<string>`now()`,
      }),
    )
    .returning([...columns, sql<boolean>`xmax = 0`.as('created')])
    .executeTakeFirstOrThrow();
  const { created, ...subscription } = row;
  return { subscription, created };
}

/** A user's browsers, the one registered (or refreshed) last first; never the keys. */
export function listOwnSubscriptions(db: Db, tenantId: string, userId: string): Promise<PushSubscription[]> {
  return db
    .selectFrom('push_subscriptions')
    .select(columns)
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function deleteOwnSubscription(
  db: Db,
  tenantId: string,
  userId: string,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('push_subscriptions')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The push service said the subscription is gone (404/410). */
export async function dropSubscription(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('push_subscriptions').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/** Removes all of a user's browsers (deactivated: nothing is sent to them any more). */
export async function deleteSubscriptionsOf(db: Db, tenantId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('push_subscriptions')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute();
}

/**
 * Every (notification, browser) pair of `notificationIds`: each recipient's browsers as
 * they are now, in one statement. Ids in their wire form (32 hex digits), as everywhere
 * else: they name the delivery's job.
 */
export async function browsersToNotify(
  db: Db,
  tenantId: string,
  notificationIds: readonly string[],
): Promise<{ notification_id: string; subscription_id: string }[]> {
  if (notificationIds.length === 0) return [];
  return db
    .selectFrom('push_subscriptions as b')
    .innerJoin('notifications as n', (join) =>
      join.onRef('n.tenant_id', '=', 'b.tenant_id').onRef('n.user_id', '=', 'b.user_id'),
    )
    .where('b.tenant_id', '=', tenantId)
    .where(isAnyOf('n.id', notificationIds))
    .select([uuidColumnToWire('n.id').as('notification_id'), uuidColumnToWire('b.id').as('subscription_id')])
    .execute();
}
