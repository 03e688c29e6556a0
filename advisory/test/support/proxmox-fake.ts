import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import selfsigned from 'selfsigned';

/**
 * A Proxmox VE API on this machine, for the adapter's tests: HTTPS with a self-signed
 * certificate (as a fresh PVE host has), API-token authentication, and the documented
 * answers of the three endpoints the adapter reads. The payload shapes replay Proxmox's
 * API (pve-manager PVE/API2/Nodes.pm and the API viewer's `version` schema):
 *   GET /api2/json/version            {"data":{"version","release","repoid"}}
 *   GET /api2/json/nodes              {"data":[{"id","node","type","status","level","cpu",...}]}
 *   GET /api2/json/nodes/{node}/version  {"data":{"version","release","repoid"}}
 * Unauthenticated requests get 401, as PVE answers them.
 */
export interface FakeNode {
  node: string;
  status: 'online' | 'offline' | 'unknown';
  version: string;
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
  /** How the next answers behave: normal, slow (never answer in time), failing (500), malformed (not JSON). */
  mode: 'normal' | 'slow' | 'failing' | 'malformed';
  close(): Promise<void>;
}

export async function startProxmoxFake(nodes: FakeNode[]): Promise<ProxmoxFake> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'pve1.lan' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const tokenId = 'advisory@pve!monitor';
  const secret = 'aaaaaaaa-bbbb-cccc-dddd-ef0123456789';
  const fake = {
    nodes,
    seen: [] as ProxmoxFake['seen'],
    mode: 'normal' as ProxmoxFake['mode'],
  };
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (request, response) => {
    const path = request.url ?? '';
    fake.seen.push({ path, authorization: request.headers.authorization });
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json;charset=UTF-8' });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (request.headers.authorization !== `PVEAPIToken=${tokenId}=${secret}`)
      return send(401, { data: null });
    if (fake.mode === 'slow') return; // never answers; the adapter's deadline must end it
    if (fake.mode === 'failing') return send(500, { data: null, message: 'internal error' });
    if (fake.mode === 'malformed') return send(200, '<html>maintenance</html>');
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
    const match = /^\/api2\/json\/nodes\/([^/]+)\/version$/.exec(path);
    const node = match && fake.nodes.find((n) => n.node === decodeURIComponent(match[1] as string));
    if (node) {
      const release = node.version.split(/[.-]/).slice(0, 2).join('.');
      return send(200, { data: { version: node.version, release, repoid: '5ac30304265fbd8e' } });
    }
    return send(501, { data: null, message: `Method '${path}' not implemented` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(fake, {
    url: `https://127.0.0.1:${port}`,
    cert: pems.cert,
    fingerprint: new X509Certificate(pems.cert).fingerprint256,
    tokenId,
    secret,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
