import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import selfsigned from 'selfsigned';

/**
 * Certificates for the dashboard's TLS tests, made by the `selfsigned` package: each one
 * self-signed for 127.0.0.1 and localhost, so a client can pin it as its only CA.
 */
export interface TestPair {
  cert: string;
  key: string;
  /** SHA-256 fingerprint, as Node's X509Certificate.fingerprint256 spells it. */
  fingerprint: string;
}

export async function makePair(commonName: string): Promise<TestPair> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private, fingerprint: new X509Certificate(pems.cert).fingerprint256 };
}

export function writePair(pair: Pick<TestPair, 'cert' | 'key'>, certFile: string, keyFile: string): void {
  writeFileSync(certFile, pair.cert);
  writeFileSync(keyFile, pair.key, { mode: 0o600 });
}

/**
 * The fingerprint of the certificate a new TLS connection to 127.0.0.1:port is shown,
 * verified against `ca` (the certificate expected, or any of several).
 */
export function servedFingerprint(port: number, ca: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? 'none';
      socket.end();
      resolve(fingerprint);
    });
    socket.once('error', reject);
  });
}

/**
 * An HTTPS server on 127.0.0.1 with a certificate of its own (the fakes of the inventory
 * APIs), counting into `counts` the TLS connections made and those open now.
 */
export async function listenTls(
  commonName: string,
  counts: { connections: number; open: number },
  handler: RequestListener,
): Promise<{ url: string; cert: string; fingerprint: string; close: () => Promise<void> }> {
  const pair = await makePair(commonName);
  const server = createServer({ key: pair.key, cert: pair.cert }, handler);
  server.on('secureConnection', (socket) => {
    counts.connections += 1;
    counts.open += 1;
    socket.once('close', () => {
      counts.open -= 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cert: pair.cert,
    fingerprint: pair.fingerprint,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
