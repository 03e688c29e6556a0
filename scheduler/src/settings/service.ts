import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { notFound, validationFailed } from '../errors.ts';
import { wireId, wireTime } from '../ids.ts';
import type { ReplaceTenantSettings, TenantSettings } from './schemas.ts';
import { canonicalTimeZone } from './timezone.ts';

type Row = {
  tenant_id: string;
  time_tracking_enabled: boolean;
  timezone: string;
  created_at: Date;
  updated_at: Date;
};

function toWire(row: Row): TenantSettings {
  return {
    id: wireId(row.tenant_id),
    tenant_id: wireId(row.tenant_id),
    time_tracking_enabled: row.time_tracking_enabled,
    timezone: row.timezone,
    created_at: wireTime(row.created_at),
    updated_at: wireTime(row.updated_at),
  };
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
  return toWire(row);
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
  return toWire(row);
}
