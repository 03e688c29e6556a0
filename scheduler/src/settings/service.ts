import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { notFound, validationFailed } from '../errors.ts';
import type { ReplaceTenantSettings, TenantSettings } from './schemas.ts';
import { canonicalTimeZone } from './timezone.ts';

/** The record's id is the tenant id: there is one settings record per tenant. */
function withId(row: Omit<TenantSettings, 'id'>): TenantSettings {
  return { id: row.tenant_id, ...row };
}

const columns = ['tenant_id', 'time_tracking_enabled', 'timezone', 'created_at', 'updated_at'] as const;

export async function getSettings(db: Db, tenantId: string): Promise<TenantSettings> {
  const row = await db
    .selectFrom('tenant_settings')
    .select(columns)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  // Provisioning creates the row with the tenant; a missing row means the tenant is gone.
  if (!row) throw notFound('tenant settings');
  return withId(row);
}

export async function replaceSettings(
  db: Db,
  tenantId: string,
  body: ReplaceTenantSettings,
): Promise<TenantSettings> {
  const timezone = canonicalTimeZone(body.timezone ?? 'UTC');
  if (!timezone) throw validationFailed('timezone', `unknown IANA time zone "${body.timezone}"`);
  const row = await db
    .updateTable('tenant_settings')
    .set({ time_tracking_enabled: body.time_tracking_enabled, timezone, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .returning(columns)
    .executeTakeFirst();
  if (!row) throw notFound('tenant settings');
  return withId(row);
}
