import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** The only module that reads or writes `tenants` and `tenant_settings`. */
const settingsColumns = [
  'tenant_id',
  'time_tracking_enabled',
  'timezone',
  'notify_on_assignment',
  'locale',
  'remind_minutes_before_shift',
  'offers_need_approval',
  'time_off_needs_approval',
  'shift_colleagues_visible',
  'time_entries_before_end',
  'created_at',
  'updated_at',
] as const;

export async function tenantExists(db: Db, tenantId: string): Promise<boolean> {
  const row = await db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
  return row !== undefined;
}

/**
 * Creates the tenant with its VAPID key pair and default settings; a no-op when it exists.
 * Answers whether this call created the tenant. Run it in a transaction (the caller's unit
 * of work): the tenant and its settings are written together.
 */
export async function insertTenant(
  db: Db,
  tenant: { id: string; vapidPublicKey: string; vapidPrivateKey: string },
): Promise<boolean> {
  const created = await db
    .insertInto('tenants')
    .values({
      id: tenant.id,
      vapid_public_key: tenant.vapidPublicKey,
      vapid_private_key: tenant.vapidPrivateKey,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  await db
    .insertInto('tenant_settings')
    .values({ tenant_id: tenant.id })
    .onConflict((oc) => oc.column('tenant_id').doNothing())
    .execute();
  return created !== undefined;
}

export function findSettings(db: Db, tenantId: string) {
  return db
    .selectFrom('tenant_settings')
    .select(settingsColumns)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

/** The tenant's IANA time zone: UTC for a tenant without settings (their default). */
export async function tenantTimeZone(db: Db, tenantId: string): Promise<string> {
  const row = await db
    .selectFrom('tenant_settings')
    .select('timezone')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.timezone ?? 'UTC';
}

export function updateSettings(
  db: Db,
  tenantId: string,
  values: {
    time_tracking_enabled: boolean;
    timezone: string;
    notify_on_assignment: boolean;
    locale: string;
    remind_minutes_before_shift: number | null;
    offers_need_approval: boolean;
    time_off_needs_approval: boolean;
    shift_colleagues_visible: boolean;
    time_entries_before_end: boolean;
  },
) {
  return db
    .updateTable('tenant_settings')
    .set({ ...values, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .returning(settingsColumns)
    .executeTakeFirst();
}

export async function timeTrackingEnabled(db: Db, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_settings')
    .select('time_tracking_enabled')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.time_tracking_enabled === true;
}

/** Whether the tenant's time off waits for an admin's approval (on for a tenant without settings). */
export async function timeOffNeedsApproval(db: Db, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_settings')
    .select('time_off_needs_approval')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.time_off_needs_approval !== false;
}

/**
 * What notifications need of the settings: whether assignment changes notify people
 * (off by default), and the time zone and language their texts show times in.
 */
export async function notificationSettings(
  db: Db,
  tenantId: string,
): Promise<{ notifyOnAssignment: boolean; timezone: string; locale: string }> {
  const row = await db
    .selectFrom('tenant_settings')
    .select(['notify_on_assignment', 'timezone', 'locale'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return {
    notifyOnAssignment: row?.notify_on_assignment === true,
    timezone: row?.timezone ?? 'UTC',
    locale: row?.locale ?? 'en-GB',
  };
}

/** The tenant's VAPID key pair: Web Push messages to its users are signed with it. */
export function vapidKeys(db: Db, tenantId: string) {
  return db
    .selectFrom('tenants')
    .select(['vapid_public_key', 'vapid_private_key'])
    .where('id', '=', tenantId)
    .executeTakeFirst();
}

/** Whether a colleague taking an offered shift waits for an admin's approval (off by default). */
export async function offersNeedApproval(db: Db, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_settings')
    .select('offers_need_approval')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.offers_need_approval === true;
}

/** Whether employees on a shift see who else is on it (off by default). */
export async function shiftColleaguesVisible(db: Db, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_settings')
    .select('shift_colleagues_visible')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.shift_colleagues_visible === true;
}

/** Whether time may be recorded for a shift that has not ended yet (off for a tenant without settings). */
export async function timeEntriesBeforeEnd(db: Db, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_settings')
    .select('time_entries_before_end')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.time_entries_before_end === true;
}
