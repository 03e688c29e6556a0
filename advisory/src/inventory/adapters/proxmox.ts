import type { Asset } from '../asset.ts';
import { type ProxmoxSource, resolveFrom } from '../config.ts';
import { AdapterError, adapterAgent, getJson } from './fetch-json.ts';
import { readNamed } from './limits.ts';

/**
 * Proxmox VE through its API with an API token (read-only is enough: PVEAuditor), as the
 * admin guide documents it: `Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET`.
 * `GET /api2/json/nodes` lists the nodes; `GET /api2/json/nodes/{node}/version` gives each
 * node's pve-manager version (`9.1.4`; `7.4-3` before 8.0). One asset per node,
 * `<source>/<node>`; an offline node is an unknown asset.
 */
interface NodesAnswer {
  data: { node: string; status?: string }[];
}
interface VersionAnswer {
  data: { version: string; release?: string; repoid?: string };
}

function isNodes(value: unknown): value is NodesAnswer {
  const data = (value as { data?: unknown })?.data;
  return Array.isArray(data) && data.every((n) => typeof (n as { node?: unknown })?.node === 'string');
}

function isVersion(value: unknown): value is VersionAnswer {
  return typeof (value as { data?: { version?: unknown } })?.data?.version === 'string';
}

export async function collectProxmox(
  source: ProxmoxSource,
  inventoryFile: string,
  timeoutMs: number,
): Promise<Asset[]> {
  const secret = (await readNamed(resolveFrom(inventoryFile, source.token_secret_file))).trim();
  if (!/^[\x21-\x7e]+$/.test(secret))
    throw new AdapterError(`${source.token_secret_file}: not a token secret`);
  const ca = source.ca_file ? await readNamed(resolveFrom(inventoryFile, source.ca_file)) : undefined;
  const dispatcher = adapterAgent(
    { ...(ca ? { ca } : {}), ...(source.fingerprint ? { fingerprint: source.fingerprint } : {}) },
    timeoutMs,
  );
  const base = source.url.replace(/\/+$/, '');
  const options = {
    dispatcher,
    timeoutMs,
    headers: { authorization: `PVEAPIToken=${source.token_id}=${secret}` },
  };
  try {
    const nodes = await getJson(`${base}/api2/json/nodes`, options);
    if (!isNodes(nodes)) throw new AdapterError(`${base}/api2/json/nodes: not a Proxmox node list`);
    return await Promise.all(
      nodes.data.map(async ({ node, status }): Promise<Asset> => {
        const asset = {
          name: `${source.name}/${node}`,
          source: source.name,
          facts: { ...source.facts },
        };
        if (status !== undefined && status !== 'online') {
          return { ...asset, products: {}, status: 'unknown', error: `node ${node} is ${status}` };
        }
        const answer = await getJson(`${base}/api2/json/nodes/${encodeURIComponent(node)}/version`, options);
        if (!isVersion(answer)) throw new AdapterError(`${base}: node ${node} gave no version`);
        return {
          ...asset,
          products: { ...source.products, 'proxmox-ve': answer.data.version },
          status: 'ok',
        };
      }),
    );
  } finally {
    await dispatcher.close();
  }
}
