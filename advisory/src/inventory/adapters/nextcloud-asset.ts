import type { Asset } from '../asset.ts';

/**
 * What both Nextcloud sources (`occ` and the OCS API) make of what they read, so one
 * server yields the same asset whichever way it is asked: `occ status` and `status.php`
 * print the same status (nextcloud/server core/Command/Status.php and status.php), and
 * `occ app:list` and the provisioning API name the same enabled apps and versions.
 */
export interface NextcloudStatus {
  installed: boolean;
  versionstring: string;
  maintenance?: boolean;
  needsDbUpgrade?: boolean;
}

export function isNextcloudStatus(value: unknown): value is NextcloudStatus {
  const v = value as Partial<NextcloudStatus> | null;
  return typeof v?.installed === 'boolean' && typeof v.versionstring === 'string';
}

/**
 * One asset named after the source: `nextcloud` at the first word of `versionstring`
 * ("21.0.3 Enterprise" -> 21.0.3), each enabled app as `nextcloud-app-<id>` (lowercased,
 * `_` -> `-`; an id that makes no valid product key, or a version that is not a string,
 * is left out), the source's products and facts, and the maintenance flags as facts.
 */
export function nextcloudAsset(
  source: { name: string; products?: Record<string, string>; facts?: Record<string, string> },
  status: NextcloudStatus,
  enabledApps: Record<string, unknown>,
): Asset {
  const version = status.versionstring.trim().split(/\s+/)[0] ?? '';
  const products: Record<string, string> = { ...source.products, nextcloud: version };
  for (const [app, appVersion] of Object.entries(enabledApps)) {
    const product = `nextcloud-app-${app.toLowerCase().replaceAll('_', '-')}`;
    if (typeof appVersion === 'string' && /^[a-z0-9][a-z0-9-]{0,63}$/.test(product))
      products[product] = appVersion;
  }
  return {
    name: source.name,
    source: source.name,
    products,
    facts: {
      ...source.facts,
      ...(status.maintenance !== undefined ? { maintenance: String(status.maintenance) } : {}),
      ...(status.needsDbUpgrade !== undefined ? { needs_db_upgrade: String(status.needsDbUpgrade) } : {}),
    },
    status: 'ok',
  };
}
