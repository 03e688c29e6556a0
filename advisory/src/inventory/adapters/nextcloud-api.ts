import type { Asset } from '../asset.ts';
import type { NextcloudApiSource } from '../config.ts';
import { readSecret, trustOf } from './credentials.ts';
import { AdapterError, adapterSession, apiGetter } from './fetch-json.ts';
import { concurrencyOf, requestTimeoutOf } from './limits.ts';
import { isNextcloudStatus, nextcloudAsset } from './nextcloud-asset.ts';

/**
 * Nextcloud over HTTPS, for when `occ` cannot be run (the appliance's hardened service
 * forbids `sudo`, or Nextcloud is on another host). As Nextcloud's admin manual documents
 * them (User provisioning API, "Instruction set for apps"; OCS API overview):
 *   GET <url>/status.php                      the same status `occ status` prints
 *   GET <url>/ocs/v2.php/cloud/apps?filter=enabled   {"ocs":{"meta":{..},"data":{"apps":[ids]}}}
 *   GET <url>/ocs/v2.php/cloud/apps/<id>      {"ocs":{"meta":{..},"data":{<info.xml>,"version"}}}
 * OCS requests carry `OCS-APIRequest: true`, `?format=json` and Basic auth with the
 * user and an app password; the app endpoints need an admin. The asset is the one the
 * `occ` source makes of the same server (nextcloud-asset.ts). The apps are asked side by
 * side, at most `concurrency` at once, each request with its own deadline
 * (`request_timeout`); an app whose info fails is reported at version `unknown`.
 */

/** The version reported for an app whose info could not be read: no version, and shown as such. */
export const UNKNOWN_VERSION = 'unknown';

interface OcsAnswer {
  ocs: { meta?: { status?: unknown; statuscode?: unknown; message?: unknown }; data: unknown };
}

function isOcs(value: unknown): value is OcsAnswer {
  const ocs = (value as { ocs?: unknown } | null)?.ocs;
  return ocs !== null && typeof ocs === 'object' && 'data' in ocs;
}

/** The ids of `data.apps`: a list, or (as PHP encodes a list with gaps) an object of ids. */
function appIds(data: unknown): string[] | undefined {
  const apps = (data as { apps?: unknown } | null)?.apps;
  const list = Array.isArray(apps)
    ? apps
    : apps && typeof apps === 'object'
      ? Object.values(apps)
      : undefined;
  return list?.every((id) => typeof id === 'string') ? (list as string[]) : undefined;
}

export async function collectNextcloudApi(
  source: NextcloudApiSource,
  inventoryFile: string,
  timeoutMs: number,
  deadline?: AbortSignal,
): Promise<Asset[]> {
  const password = await readSecret(inventoryFile, source.app_password_file, 'an app password');
  const requestMs = requestTimeoutOf(source, timeoutMs);
  const trust = await trustOf(inventoryFile, source);
  const session = adapterSession(trust, requestMs, deadline, concurrencyOf(source));
  const base = source.url.replace(/\/+$/, '');
  const get = apiGetter(session, {
    source: source.name,
    timeoutMs: requestMs,
    headers: {
      authorization: `Basic ${Buffer.from(`${source.user}:${password}`).toString('base64')}`,
      'ocs-apirequest': 'true',
    },
    refused: {
      401: `user ${source.user} or its app password was refused`,
      403: `user ${source.user} is not an admin (the apps API needs one)`,
    },
  });
  /** An OCS answer's `data`. */
  const ocs = async (path: string): Promise<unknown> => {
    const url = `${base}/ocs/v2.php/${path}${path.includes('?') ? '&' : '?'}format=json`;
    const answer = await get(url);
    if (!isOcs(answer)) throw new AdapterError(`${source.name}: ${url}: not an OCS answer`);
    return answer.ocs.data;
  };
  try {
    const status = await get(`${base}/status.php`);
    if (!isNextcloudStatus(status))
      throw new AdapterError(`${source.name}: ${base}/status.php: not the status of a Nextcloud`);
    if (!status.installed) throw new AdapterError(`${source.name}: Nextcloud is not installed`);
    const ids = appIds(await ocs('cloud/apps?filter=enabled'));
    if (!ids) throw new AdapterError(`${source.name}: ${base}/ocs/v2.php/cloud/apps: not a list of apps`);
    // Side by side, as many at once as the session allows (fetch-json.ts).
    const versions = await Promise.all(
      ids.map(async (id): Promise<[string, unknown] | undefined> => {
        try {
          const info = (await ocs(`cloud/apps/${encodeURIComponent(id)}`)) as { version?: unknown } | null;
          return [id, info?.version];
        } catch (error) {
          if (session.signal.aborted) throw error;
          // Enabled but its code is gone (the API answers 404): no version to report, as
          // no code runs.
          if (error instanceof AdapterError && error.status === 404) return undefined;
          // Any other failure (an error in the app's code, no answer within the request's
          // deadline) costs this app only: its version is unknown, which matches no
          // advisory and is shown as not a version.
          return [id, UNKNOWN_VERSION];
        }
      }),
    );
    const enabledApps: Record<string, unknown> = Object.fromEntries(versions.filter((v) => v !== undefined));
    return [nextcloudAsset(source, status, enabledApps)];
  } finally {
    await session.end();
  }
}
