import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { asTenant } from '../db/tenant-scope.ts';
import type { TimeWindow } from '../db/time-window.ts';
import type { Deps } from '../deps.ts';
import { notFound, validationFailed } from '../errors.ts';
import type { FeatureGate } from '../http/types.ts';
import { supportedLocale } from '../input/locale.ts';
import { namesDay, type WindowBounds, windowInZone } from '../time/window.ts';
import { findSettings, tenantTimeZone, timeTrackingEnabled, updateSettings } from './repository.ts';
import type { ReplaceTenantSettings, TenantSettings } from './schemas.ts';
import { canonicalTimeZone } from './timezone.ts';

type SettingsRow = NonNullable<Awaited<ReturnType<typeof findSettings>>>;

/** The record's id is the tenant id: there is one settings record per tenant. */
function toWire(row: SettingsRow): TenantSettings {
  return { id: row.tenant_id, ...row };
}

export async function getSettings(deps: Deps, caller: Identity): Promise<TenantSettings> {
  const row = await findSettings(deps.db, caller.tenantId);
  // Provisioning creates the row with the tenant; a missing row means the tenant is gone.
  if (!row) throw notFound('tenant settings');
  return toWire(row);
}

/** Full replace: the body becomes the record, an omitted time zone is UTC again. */
export async function replaceSettings(
  deps: Deps,
  caller: Identity,
  input: ReplaceTenantSettings,
): Promise<TenantSettings> {
  const timezone = canonicalTimeZone(input.timezone ?? 'UTC');
  if (!timezone) throw validationFailed('timezone', `unknown IANA time zone "${input.timezone}"`);
  const locale = supportedLocale(input.locale ?? 'en-GB');
  if (!locale)
    throw validationFailed(
      'locale',
      `no dates can be written in "${input.locale}"; use a BCP 47 tag such as de-DE`,
    );
  const row = await unitOfWork(deps, caller, 'settings.replaced', async (tx) => {
    const row = await updateSettings(tx.db, caller.tenantId, {
      time_tracking_enabled: input.time_tracking_enabled,
      timezone,
      notify_on_assignment: input.notify_on_assignment ?? false,
      locale,
      remind_minutes_before_shift: input.remind_minutes_before_shift ?? null,
      offers_need_approval: input.offers_need_approval ?? false,
      time_off_needs_approval: input.time_off_needs_approval ?? true,
      shift_colleagues_visible: input.shift_colleagues_visible ?? false,
      time_entries_before_end: input.time_entries_before_end ?? false,
    });
    if (row) await tx.record({ type: 'settings.replaced', tenantId: caller.tenantId });
    return row;
  });
  if (!row) throw notFound('tenant settings');
  return toWire(row);
}

/** The feature gate routes declare with `config.feature`; read before the role check. */
export async function featureEnabled(deps: Deps, tenantId: string, feature: FeatureGate): Promise<boolean> {
  switch (feature) {
    case 'time_tracking':
      return asTenant(tenantId, () => timeTrackingEnabled(deps.db, tenantId));
  }
}

/**
 * A list's `from`/`to` filter as instants: a calendar date is the start of that day in the
 * tenant's time zone (read only when a date was sent), then the rule of every time filter
 * (`to` after `from`, 422 naming `to`).
 */
export async function filterWindow(deps: Deps, caller: Identity, window: WindowBounds): Promise<TimeWindow> {
  const zone = namesDay(window) ? await tenantTimeZone(deps.db, caller.tenantId) : 'UTC';
  return windowInZone(window, zone);
}
