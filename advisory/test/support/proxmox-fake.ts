import type { ServerResponse } from 'node:http';
import type { ProxmoxSource } from '../../src/inventory/config.ts';
import { type AnswerGate, answerGate } from './answer-gate.ts';
import { listenTls } from './tls.ts';

/**
 * A Proxmox VE API on this machine, for the adapter's tests: HTTPS with a self-signed
 * certificate (as a fresh PVE host has), API-token authentication, and the documented
 * answers of the endpoints the adapter reads. The payload shapes replay Proxmox's API
 * (the pve-docs API viewer; pve-manager PVE/API2/Nodes.pm, qemu-server PVE/API2/Qemu.pm
 * and PVE/API2/Qemu/Agent.pm, pve-container PVE/API2/LXC.pm):
 *   GET /api2/json/version            {"data":{"version","release","repoid"}}
 *   GET /api2/json/nodes              {"data":[{"id","node","type","status","level","cpu",...}]}
 *   GET /api2/json/nodes/{node}/version  {"data":{"version","release","repoid"}}
 *   GET /api2/json/nodes/{node}/qemu  {"data":[{"vmid":101,"name","status","cpus","maxmem",...,"template":1?}]}
 *   GET /api2/json/nodes/{node}/lxc   {"data":[{"vmid","name","status","type":"lxc",...}]}
 *   GET /api2/json/nodes/{node}/{qemu|lxc}/{vmid}/config  {"data":{"ostype","agent"?,"name"|"hostname",...}}
 *   GET /api2/json/nodes/{node}/qemu/{vmid}/agent/get-osinfo
 *       {"data":{"result":{<guest-get-osinfo: id, name, pretty-name, version, version-id,
 *       kernel-release, kernel-version, machine>}}}; HTTP 500 "QEMU guest agent is not
 *       running" when it is not, 403 without VM.Monitor.
 * Unauthenticated requests get 401, as PVE answers them. It counts the TLS connections
 * it accepts, so a test can tell reused connections from new ones.
 */
export interface FakeGuest {
  vmid: number;
  kind: 'qemu' | 'lxc';
  name: string;
  status: 'running' | 'stopped';
  ostype: string;
  template?: boolean;
  /** VMs: the agent option in the config (`enabled=1` style when a string). */
  agent?: string;
  /** VMs with a running agent: the guest's os-release as guest-get-osinfo reports it. */
  osinfo?: Record<string, string> | 'not-running' | 'forbidden';
}

export interface FakeNode {
  node: string;
  status: 'online' | 'offline' | 'unknown';
  version: string;
  guests?: FakeGuest[];
}

export interface ProxmoxFake {
  url: string;
  /** PEM of the self-signed certificate (for ca_file). */
  cert: string;
  /** `AB:CD:...` as Proxmox shows it. */
  fingerprint: string;
  tokenId: string;
  secret: string;
  nodes: FakeNode[];
  /** Every request's path and Authorization header. */
  seen: { path: string; authorization: string | undefined }[];
  /** TLS connections accepted (`secureConnection` events) since the fake started. */
  connections: number;
  /**
   * How the next answers behave: normal, slow (never answer in time), failing (500),
   * malformed (not JSON), oversized (a JSON answer of 5 MiB), garbage (JSON, but not
   * Proxmox's shapes).
   */
  mode: 'normal' | 'slow' | 'failing' | 'malformed' | 'oversized' | 'garbage';
  /** Answers given instead of the usual one, by path: odd shapes a test feeds the adapter. */
  answers: Record<string, { status?: number; body: unknown }>;
  /** Each answer waits this long (0 by default), so requests that overlap can be seen. */
  delayMs: number;
  /** TLS connections open now (accepted and not yet closed by either side). */
  open: number;
  /** Holds the requests a test names until it releases them; counts the requests open at once. */
  gate: AnswerGate;
  close(): Promise<void>;
}

/** A Debian 12 guest's answer, as guest-get-osinfo gives it from /etc/os-release. */
export const debian12OsInfo = {
  id: 'debian',
  'kernel-release': '6.1.0-28-amd64',
  'kernel-version': '#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)',
  machine: 'x86_64',
  name: 'Debian GNU/Linux',
  'pretty-name': 'Debian GNU/Linux 12 (bookworm)',
  version: '12 (bookworm)',
  'version-id': '12',
};

export async function startProxmoxFake(nodes: FakeNode[]): Promise<ProxmoxFake> {
  const tokenId = 'advisory@pve!monitor';
  const secret = 'aaaaaaaa-bbbb-cccc-dddd-ef0123456789';
  const fake = {
    nodes,
    seen: [] as ProxmoxFake['seen'],
    connections: 0,
    mode: 'normal' as ProxmoxFake['mode'],
    delayMs: 0,
    open: 0,
    gate: answerGate(),
    answers: {} as ProxmoxFake['answers'],
  };
  const answer = (authorization: string | undefined, path: string, response: ServerResponse) => {
    const send = (status: number, body: unknown, reason?: string) => {
      response.writeHead(status, reason ?? '', { 'content-type': 'application/json;charset=UTF-8' });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (authorization !== `PVEAPIToken=${tokenId}=${secret}`)
      return send(401, { data: null }, 'invalid token value!');
    const given = fake.answers[path];
    if (given) return send(given.status ?? 200, JSON.stringify(given.body));
    if (fake.mode === 'slow') return; // never answers; the adapter's deadline must end it
    if (fake.mode === 'failing') return send(500, { data: null, message: 'internal error' });
    if (fake.mode === 'malformed') return send(200, '<html>maintenance</html>');
    if (fake.mode === 'oversized')
      return send(200, JSON.stringify({ data: [{ node: 'x'.repeat(5 * 1024 * 1024) }] }));
    if (fake.mode === 'garbage') return send(200, { data: { nodes: 'pve1' } });
    const first = fake.nodes[0];
    if (path === '/api2/json/version')
      return send(200, {
        data: { version: first?.version ?? '9.1.4', release: '9.1', repoid: '5ac30304265fbd8e' },
      });
    if (path === '/api2/json/nodes') {
      return send(200, {
        data: fake.nodes.map((n) => ({
          id: `node/${n.node}`,
          node: n.node,
          type: 'node',
          status: n.status,
          level: '',
          maxcpu: 16,
          maxmem: 67108864000,
          ...(n.status === 'online' ? { cpu: 0.0123, mem: 8589934592, uptime: 1209600 } : {}),
        })),
      });
    }
    const match = /^\/api2\/json\/nodes\/([^/]+)\/(.+)$/.exec(path);
    const node = match && fake.nodes.find((n) => n.node === decodeURIComponent(match[1] as string));
    const rest = match?.[2] ?? '';
    if (node && rest === 'version') {
      const release = node.version.split(/[.-]/).slice(0, 2).join('.');
      return send(200, { data: { version: node.version, release, repoid: '5ac30304265fbd8e' } });
    }
    if (node && (rest === 'qemu' || rest === 'lxc')) {
      return send(200, {
        data: (node.guests ?? [])
          .filter((g) => g.kind === rest)
          .map((g) => ({
            vmid: g.vmid,
            name: g.name,
            status: g.status,
            cpus: 2,
            maxmem: 4294967296,
            maxdisk: 34359738368,
            uptime: g.status === 'running' ? 86400 : 0,
            ...(g.kind === 'lxc' ? { type: 'lxc' } : {}),
            ...(g.template ? { template: 1 } : {}),
          })),
      });
    }
    const guestMatch = /^(qemu|lxc)\/(\d+)\/(config|agent\/get-osinfo)$/.exec(rest);
    const guest =
      node &&
      guestMatch &&
      node.guests?.find((g) => g.kind === guestMatch[1] && g.vmid === Number(guestMatch[2]));
    if (guest && guestMatch?.[3] === 'config') {
      return send(200, {
        data: {
          digest: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
          ostype: guest.ostype,
          memory: '4096',
          cores: 2,
          ...(guest.kind === 'qemu'
            ? { name: guest.name, ...(guest.agent !== undefined ? { agent: guest.agent } : {}) }
            : { hostname: guest.name, arch: 'amd64' }),
        },
      });
    }
    if (guest && guestMatch?.[3] === 'agent/get-osinfo') {
      if (guest.status !== 'running') return send(500, { data: null }, `VM ${guest.vmid} is not running`);
      if (guest.osinfo === 'forbidden')
        return send(403, { data: null }, `Permission check failed (/vms/${guest.vmid}, VM.Monitor)`);
      if (guest.osinfo === undefined || guest.osinfo === 'not-running')
        return send(500, { data: null }, 'QEMU guest agent is not running');
      return send(200, { data: { result: guest.osinfo } });
    }
    return send(501, { data: null, message: `Method '${path}' not implemented` });
  };
  const listening = await listenTls('pve1.lan', fake, (request, response) => {
    const path = request.url ?? '';
    fake.seen.push({ path, authorization: request.headers.authorization });
    fake.gate.admit(path, response, () => {
      if (fake.delayMs > 0)
        setTimeout(() => answer(request.headers.authorization, path, response), fake.delayMs);
      else answer(request.headers.authorization, path, response);
    });
  });
  return Object.assign(fake, listening, { tokenId, secret });
}

/** The inventory source for a fake: its address, token and pinned certificate (the secret in `pve.secret`). */
export function proxmoxSource(fake: ProxmoxFake, extra: Partial<ProxmoxSource> = {}): ProxmoxSource {
  return {
    type: 'proxmox',
    name: 'cluster',
    url: fake.url,
    token_id: fake.tokenId,
    token_secret_file: 'pve.secret',
    fingerprint: fake.fingerprint,
    ...extra,
  };
}
