import type { Asset } from '../asset.ts';
import type { ProxmoxSource } from '../config.ts';
import { readSecret, trustOf } from './credentials.ts';
import { AdapterError, adapterSession, apiGetter } from './fetch-json.ts';
import { concurrencyOf, requestTimeoutOf } from './limits.ts';

/**
 * Proxmox VE through its API with an API token (read-only is enough: PVEAuditor), as the
 * admin guide documents it: `Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET`. The
 * endpoints and answers (pve-docs API viewer; pve-manager PVE/API2/Nodes.pm, qemu-server
 * PVE/API2/Qemu.pm and Qemu/Agent.pm, pve-container PVE/API2/LXC.pm):
 *   GET /api2/json/nodes                          {"data":[{"node","status",...}]}
 *   GET /api2/json/nodes/{node}/version           {"data":{"version","release","repoid"}}
 *   GET /api2/json/nodes/{node}/qemu              {"data":[{"vmid","name","status","template"?,...}]}
 *   GET /api2/json/nodes/{node}/lxc               {"data":[{"vmid","name","status","type":"lxc",...}]}
 *   GET /api2/json/nodes/{node}/{qemu|lxc}/{vmid}/config   {"data":{"ostype","agent"?,...}}
 *   GET /api2/json/nodes/{node}/qemu/{vmid}/agent/get-osinfo
 *       {"data":{"result":{"id","name","pretty-name","version","version-id",...}}}
 *       (the guest's os-release, through the QEMU guest agent; HTTP 500 when the agent
 *       does not run, 403 when the token may not use it)
 * One asset per node, `<source>/<node>` (pve-manager's version as `proxmox-ve`); one per
 * guest, `<source>/vm-<vmid>-<name>` or `<source>/ct-<vmid>-<name>` (named by VMID, which
 * a migration keeps, and the guest's name, for people), with the guest's OS as the
 * product `<os id>` at its `version-id` when the guest agent reports it. Templates are
 * left out. Everything is asked side by side, at most `concurrency` requests at once over
 * as many keep-alive connections (fetch-json.ts), each request with its own deadline
 * (`request_timeout`). A part that fails degrades that part: a node's version, a guest's
 * configuration or its agent make that node's or guest's asset unknown; only what names
 * the assets (the node list, a node's guest lists) fails the source.
 */
interface NodesAnswer {
  data: { node: string; status?: string }[];
}
interface VersionAnswer {
  data: { version: string; release?: string; repoid?: string };
}
interface Guest {
  vmid: number | string;
  name?: string;
  status?: string;
  template?: number | string | boolean;
}
interface GuestConfig {
  ostype?: string;
  agent?: string | number;
}
interface OsInfo {
  id?: unknown;
  'version-id'?: unknown;
  'pretty-name'?: unknown;
}

function isNodes(value: unknown): value is NodesAnswer {
  const data = (value as { data?: unknown })?.data;
  return Array.isArray(data) && data.every((n) => typeof (n as { node?: unknown })?.node === 'string');
}

function isVersion(value: unknown): value is VersionAnswer {
  return typeof (value as { data?: { version?: unknown } })?.data?.version === 'string';
}

function guestsOf(value: unknown): Guest[] | undefined {
  const data = (value as { data?: unknown })?.data;
  if (!Array.isArray(data)) return undefined;
  const valid = data.every((g) => {
    const vmid = (g as { vmid?: unknown })?.vmid;
    return (
      (typeof vmid === 'number' && Number.isInteger(vmid)) || (typeof vmid === 'string' && /^\d+$/.test(vmid))
    );
  });
  return valid ? (data as Guest[]) : undefined;
}

/** PVE's boolean property strings: 1, on, yes, true (and `enabled=1,...` for the agent). */
function agentEnabled(agent: GuestConfig['agent']): boolean {
  if (agent === undefined) return false;
  const parts = String(agent).split(',');
  const flag = parts.find((p) => !p.includes('=')) ?? parts.find((p) => p.startsWith('enabled='))?.slice(8);
  return /^(1|on|yes|true)$/i.test(flag ?? '');
}

const isTemplate = (guest: Guest) =>
  guest.template === 1 || guest.template === '1' || guest.template === true;

/** A guest's name as part of an asset name: the asset name's characters only. */
function namePart(name: string | undefined): string {
  const cleaned = (name ?? '').replace(/[^A-Za-z0-9.-]+/g, '-').replace(/^-+|-+$/g, '');
  return cleaned.slice(0, 100);
}

/** Text from inside a guest shown as a fact: printable, at most 200 characters. */
const printable = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);

/**
 * The OS product the guest agent reports: os-release `ID` as the product key (`debian`,
 * `ubuntu`, lowercased, `_` -> `-`), `VERSION_ID` as its version (`12`, `24.04`). A
 * value that would not be a product key or a plain version is left out: it comes from
 * inside the guest.
 */
function osProduct(info: OsInfo): Record<string, string> {
  const id = typeof info.id === 'string' ? info.id.toLowerCase().replaceAll('_', '-') : '';
  const version = typeof info['version-id'] === 'string' ? info['version-id'].trim() : '';
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(id) || !/^[A-Za-z0-9.+~-]{1,100}$/.test(version)) return {};
  return { [id]: version };
}

export async function collectProxmox(
  source: ProxmoxSource,
  inventoryFile: string,
  timeoutMs: number,
  deadline?: AbortSignal,
): Promise<Asset[]> {
  const secret = await readSecret(inventoryFile, source.token_secret_file, 'a token secret');
  const requestMs = requestTimeoutOf(source, timeoutMs);
  const trust = await trustOf(inventoryFile, source);
  const session = adapterSession(trust, requestMs, deadline, concurrencyOf(source));
  const base = source.url.replace(/\/+$/, '');
  const fromApi = apiGetter(session, {
    source: source.name,
    timeoutMs: requestMs,
    headers: { authorization: `PVEAPIToken=${source.token_id}=${secret}` },
    refused: { 401: `the API token ${source.token_id} was refused` },
  });
  const get = (path: string) => fromApi(`${base}/api2/json/${path}`);

  /** A guest: its config, and what the guest agent says of its OS when the agent runs. */
  const guestAsset = async (node: string, kind: 'qemu' | 'lxc', guest: Guest): Promise<Asset> => {
    const vmid = String(guest.vmid);
    const label = namePart(guest.name);
    const asset = {
      name: `${source.name}/${kind === 'qemu' ? 'vm' : 'ct'}-${vmid}${label ? `-${label}` : ''}`,
      source: source.name,
    };
    const at = `nodes/${encodeURIComponent(node)}/${kind}/${vmid}`;
    const facts: Record<string, string> = { ...source.facts, node };
    let config: GuestConfig;
    try {
      const answer = (await get(`${at}/config`)) as { data?: unknown } | null;
      if (!answer?.data || typeof answer.data !== 'object')
        throw new AdapterError(`${at}/config: no configuration`);
      config = answer.data as GuestConfig;
    } catch (error) {
      // The collection is over: no asset of it is wanted any more.
      if (session.signal.aborted) throw error;
      // One guest's configuration (deleted since the list was read, say) does not fail the cluster.
      return { ...asset, products: {}, facts, status: 'unknown', error: (error as Error).message };
    }
    if (typeof config.ostype === 'string') facts.ostype = printable(config.ostype);
    let products: Record<string, string> = {};
    if (kind === 'qemu' && guest.status === 'running' && agentEnabled(config.agent)) {
      try {
        const answer = (await get(`${at}/agent/get-osinfo`)) as { data?: { result?: unknown } } | null;
        const info = answer?.data?.result;
        if (info && typeof info === 'object') {
          products = osProduct(info as OsInfo);
          const pretty = (info as OsInfo)['pretty-name'];
          if (typeof pretty === 'string' && pretty.trim()) facts.os = printable(pretty.trim());
        }
      } catch (error) {
        if (session.signal.aborted) throw error;
        // Proxmox answered that the agent does not run or the token may not ask it (HTTP
        // 500, 403): the guest is reported from its configuration alone. Anything else (no
        // answer within the request's deadline, say) leaves its OS unknown, and with it the
        // guest: reported without its OS, it would seem to have lost its verdict.
        const status = (error as AdapterError).status;
        if (status !== 500 && status !== 403)
          return {
            ...asset,
            products: {},
            facts,
            status: 'unknown',
            error: `QEMU guest agent: ${(error as Error).message}`,
          };
      }
    }
    return { ...asset, products, facts, status: 'ok' };
  };

  /** A node's own asset: its pve-manager version, or unknown with the reason. */
  const nodeAsset = async (node: string, at: string): Promise<Asset> => {
    const asset = { name: `${source.name}/${node}`, source: source.name, facts: { ...source.facts } };
    try {
      const version = await get(`${at}/version`);
      if (!isVersion(version)) throw new AdapterError(`${base}: node ${node} gave no version`);
      return { ...asset, products: { ...source.products, 'proxmox-ve': version.data.version }, status: 'ok' };
    } catch (error) {
      if (session.signal.aborted) throw error;
      return { ...asset, products: {}, status: 'unknown', error: (error as Error).message };
    }
  };

  /** A node's guests (templates left out), in VMID order: without them no guest can be named. */
  const guestList = async (at: string): Promise<{ kind: 'qemu' | 'lxc'; guest: Guest }[]> => {
    const lists = await Promise.all(
      (['qemu', 'lxc'] as const).map(async (kind) => {
        const list = guestsOf(await get(`${at}/${kind}`));
        if (!list) throw new AdapterError(`${base}/api2/json/${at}/${kind}: not a guest list`);
        return list.filter((guest) => !isTemplate(guest)).map((guest) => ({ kind, guest }));
      }),
    );
    return lists.flat().sort((a, b) => Number(a.guest.vmid) - Number(b.guest.vmid));
  };

  /** A node and its guests. */
  const nodeAssets = async ({ node, status }: NodesAnswer['data'][number]): Promise<Asset[]> => {
    if (status !== undefined && status !== 'online')
      return [
        {
          name: `${source.name}/${node}`,
          source: source.name,
          facts: { ...source.facts },
          products: {},
          status: 'unknown',
          error: `node ${node} is ${status}`,
        },
      ];
    const at = `nodes/${encodeURIComponent(node)}`;
    const [own, guests] = await Promise.all([nodeAsset(node, at), guestList(at)]);
    return [own, ...(await Promise.all(guests.map(({ kind, guest }) => guestAsset(node, kind, guest))))];
  };

  try {
    const nodes = await get('nodes');
    if (!isNodes(nodes)) throw new AdapterError(`${base}/api2/json/nodes: not a Proxmox node list`);
    // A node whose guests cannot be listed fails the collection; session.end() then stops
    // the other requests.
    return (await Promise.all(nodes.data.map(nodeAssets))).flat();
  } finally {
    await session.end();
  }
}
