import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { ConfigError } from '../../src/appliance/config.ts';
import { buildDashboard } from '../../src/dashboard/server.ts';
import { describeCertificate, readTlsPair, useTlsPair } from '../../src/dashboard/tls.ts';
import { type Demo, demoAppliance, demoSource } from '../support/dashboard.ts';
import { makePair, servedFingerprint, type TestPair, writePair } from '../support/tls.ts';

/**
 * The dashboard over HTTPS: the certificate and key read and checked as a pair (every
 * refusal with its message), served by the real server, and replaced while it serves:
 * new connections get the new certificate, a connection already open keeps its own.
 */
let demo: Demo;
let first: TestPair;
let second: TestPair;
let dir: string;
beforeAll(async () => {
  [demo, first, second] = await Promise.all([
    demoAppliance(),
    makePair('advisory.test'),
    makePair('advisory-renewed.test'),
  ]);
  dir = mkdtempSync(path.join(tmpdir(), 'dashboard-tls-'));
});
afterAll(async () => demo?.appliance.stop());

let files = 0;
/** Writes cert and key text to two new files; returns their paths as the settings name them. */
function pairFiles(cert: string, key: string) {
  files += 1;
  const certFile = path.join(dir, `cert-${files}.pem`);
  const keyFile = path.join(dir, `key-${files}.pem`);
  writePair({ cert, key }, certFile, keyFile);
  return { certFile, keyFile };
}

async function refusal(files: { certFile: string; keyFile: string }): Promise<string> {
  try {
    await readTlsPair(files);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('readTlsPair', () => {
  it('reads a certificate (a chain too) and its key, and describes the certificate', async () => {
    const pair = await readTlsPair(pairFiles(first.cert, first.key));
    expect(pair.certificate.fingerprint256).toBe(first.fingerprint);
    expect(describeCertificate(pair.certificate)).toBe(
      `CN=advisory.test, valid until ${new Date(pair.certificate.validTo).toISOString()}, SHA-256 ${first.fingerprint}`,
    );
    // Past its end it still serves (clients will refuse it), and the line says so.
    const end = new Date(pair.certificate.validTo);
    expect(describeCertificate(pair.certificate, new Date(end.getTime() + 1000))).toBe(
      `CN=advisory.test, valid until ${end.toISOString()} (EXPIRED), SHA-256 ${first.fingerprint}`,
    );
    // A chain: the server's certificate first, then what signed it; the first one counts.
    const chained = await readTlsPair(pairFiles(`${first.cert}\n${second.cert}\n`, first.key));
    expect(chained.certificate.fingerprint256).toBe(first.fingerprint);
  });

  it('refuses a file that is missing or a directory, naming the setting and the file', async () => {
    const good = pairFiles(first.cert, first.key);
    const missing = path.join(dir, 'missing.pem');
    expect(await refusal({ ...good, certFile: missing })).toBe(`ADVISORY_TLS_CERT: ${missing}: no such file`);
    expect(await refusal({ ...good, keyFile: missing })).toBe(`ADVISORY_TLS_KEY: ${missing}: no such file`);
    const folder = path.join(dir, 'a-folder');
    mkdirSync(folder);
    expect(await refusal({ ...good, keyFile: folder })).toBe(
      `ADVISORY_TLS_KEY: ${folder}: is a directory, expected a file`,
    );
  });

  it("tells the certificate's problem first when both files are wrong", async () => {
    const missing = (name: string) => path.join(dir, `${name}-missing.pem`);
    const both = { certFile: missing('cert'), keyFile: missing('key') };
    expect(await refusal(both)).toBe(`ADVISORY_TLS_CERT: ${both.certFile}: no such file`);
    const open = pairFiles(first.cert, first.key);
    chmodSync(open.keyFile, 0o644);
    expect(await refusal({ ...open, certFile: both.certFile })).toBe(
      `ADVISORY_TLS_CERT: ${both.certFile}: no such file`,
    );
  });

  it('judges a key reached through a symbolic link by the file it names (a certbot live/ link)', async () => {
    const target = pairFiles(first.cert, first.key);
    chmodSync(target.keyFile, 0o644);
    const link = path.join(dir, `live-${files}.pem`);
    symlinkSync(target.keyFile, link);
    expect(await refusal({ ...target, keyFile: link })).toMatch(
      new RegExp(`^ADVISORY_TLS_KEY: ${link}: mode 0644 lets other users read`),
    );
    chmodSync(target.keyFile, 0o600);
    expect((await readTlsPair({ ...target, keyFile: link })).certificate.fingerprint256).toBe(
      first.fingerprint,
    );
  });

  it('refuses a key file other users may read, naming the setting, the file and its mode', async () => {
    for (const mode of [0o644, 0o604, 0o601, 0o620, 0o660, 0o666]) {
      const files = pairFiles(first.cert, first.key);
      chmodSync(files.keyFile, mode);
      expect(await refusal(files), mode.toString(8)).toBe(
        `ADVISORY_TLS_KEY: ${files.keyFile}: mode 0${mode.toString(8)} lets other users read or change the private key: chmod 600 ${files.keyFile} (640 when the file belongs to root and its group is the appliance's)`,
      );
    }
    // The certificate is public: its mode is its owner's business.
    const open = pairFiles(first.cert, first.key);
    chmodSync(open.certFile, 0o644);
    expect((await readTlsPair(open)).certificate.fingerprint256).toBe(first.fingerprint);
    for (const mode of [0o600, 0o400]) {
      const files = pairFiles(first.cert, first.key);
      chmodSync(files.keyFile, mode);
      expect((await readTlsPair(files)).certificate.fingerprint256, mode.toString(8)).toBe(first.fingerprint);
    }
  });

  // Root reads any file whatever its mode: the check is on the mode bits, not on a failed
  // read, so it holds for a daemon run as root too; ownership decides whether the group may read.
  it(
    'lets the group read a key that belongs to root (the ssl-cert convention), no one else’s',
    runsIf(process.getuid?.() === 0, 'needs root (to give a file to another user)'),
    async () => {
      const rootOwned = pairFiles(first.cert, first.key);
      chmodSync(rootOwned.keyFile, 0o640);
      expect((await readTlsPair(rootOwned)).certificate.fingerprint256).toBe(first.fingerprint);
      const othersKey = pairFiles(first.cert, first.key);
      chmodSync(othersKey.keyFile, 0o640);
      chownSync(othersKey.keyFile, 65534, 65534);
      expect(await refusal(othersKey)).toMatch(/^ADVISORY_TLS_KEY: .*: mode 0640 lets other users read/);
    },
  );

  it('refuses files that hold no certificate or no key, the two swapped, and an encrypted key', async () => {
    const swapped = pairFiles(first.key, first.cert);
    expect(await refusal(swapped)).toBe(`ADVISORY_TLS_CERT: ${swapped.certFile}: no PEM certificate in it`);
    const noKey = pairFiles(first.cert, first.cert);
    expect(await refusal(noKey)).toBe(`ADVISORY_TLS_KEY: ${noKey.keyFile}: no PEM private key in it`);
    const empty = pairFiles('', first.key);
    expect(await refusal(empty)).toBe(`ADVISORY_TLS_CERT: ${empty.certFile}: no PEM certificate in it`);
    const encrypted = await selfsigned.generate([{ name: 'commonName', value: 'locked.test' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      passphrase: 'a passphrase',
    });
    const locked = pairFiles(encrypted.cert, encrypted.private);
    expect(await refusal(locked)).toBe(
      `ADVISORY_TLS_KEY: ${locked.keyFile}: the private key is encrypted; give it unencrypted, readable by the appliance alone`,
    );
  });

  it('says an encrypted key is encrypted in either PEM form, with either line ending', async () => {
    for (const type of ['pkcs8', 'sec1'] as const) {
      const { privateKey } = generateKeyPairSync('ec', {
        namedCurve: 'P-256',
        privateKeyEncoding: { type, format: 'pem', cipher: 'aes-256-cbc', passphrase: 'a passphrase' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      });
      for (const [ending, key] of [
        ['LF', privateKey],
        ['CRLF', privateKey.replace(/\n/g, '\r\n')],
      ] as const) {
        const locked = pairFiles(first.cert, key);
        expect(await refusal(locked), `${type} ${ending}`).toBe(
          `ADVISORY_TLS_KEY: ${locked.keyFile}: the private key is encrypted; give it unencrypted, readable by the appliance alone`,
        );
      }
    }
  });

  it('refuses a chain with an entry after the certificate that OpenSSL cannot use', async () => {
    const broken = pairFiles(
      `${first.cert}\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
      first.key,
    );
    expect(await refusal(broken)).toMatch(new RegExp(`^ADVISORY_TLS_CERT: ${broken.certFile}: \\S`));
    // The first certificate is fine: OpenSSL's own words say what is wrong with the rest.
    expect(await refusal(broken)).not.toContain('no PEM certificate');
  });

  it('refuses a certificate with the key of another one (a renewal half done)', async () => {
    const mismatched = pairFiles(second.cert, first.key);
    expect(await refusal(mismatched)).toBe(
      `ADVISORY_TLS_KEY: ${mismatched.keyFile}: not the private key of the certificate in ${mismatched.certFile}`,
    );
  });
});

describe('describeCertificate', () => {
  it('names every part of the subject, and says when a certificate names none', async () => {
    const named = await selfsigned.generate(
      [
        { name: 'commonName', value: 'advisory.example' },
        { name: 'organizationName', value: 'Example' },
      ],
      { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' },
    );
    const pair = await readTlsPair(pairFiles(named.cert, named.private));
    expect(describeCertificate(pair.certificate)).toMatch(/^CN=advisory\.example, O=Example, valid until /);
    // Its names in subjectAltName alone: served, and described without a subject.
    const nameless = await selfsigned.generate([], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', critical: true, altNames: [{ type: 2, value: 'localhost' }] }],
    });
    const bare = await readTlsPair(pairFiles(nameless.cert, nameless.private));
    expect(describeCertificate(bare.certificate)).toMatch(/^\(no subject\), valid until /);
  });

  it('calls a certificate expired only after its last valid instant', async () => {
    const { certificate } = await readTlsPair(pairFiles(first.cert, first.key));
    const end = new Date(certificate.validTo);
    // notAfter itself is within the validity period (RFC 5280).
    expect(describeCertificate(certificate, end)).not.toContain('EXPIRED');
    expect(describeCertificate(certificate, new Date(end.getTime() + 1))).toContain('(EXPIRED)');
  });
});

interface Answer {
  status: number;
  body: string;
  headers: IncomingMessage['headers'];
  socket: TLSSocket;
  /** The certificate the connection was shown (read before the socket goes back to the pool). */
  fingerprint: string | undefined;
  reused: boolean;
}

/** One GET over `agent`, with the connection it went over. */
function get(port: number, agent: Agent, urlPath: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: urlPath, agent }, (response) => {
      const socket = response.socket as TLSSocket;
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256;
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body,
          headers: response.headers,
          socket,
          fingerprint,
          reused: req.reusedSocket,
        }),
      );
    });
    req.once('error', reject);
    req.end();
  });
}

describe('the dashboard over HTTPS', () => {
  it('serves its pages with the certificate given, and not plain HTTP', async () => {
    const pair = await readTlsPair(pairFiles(first.cert, first.key));
    const app = await buildDashboard({
      source: demoSource(demo),
      credentials: null,
      version: '0.0.0-test',
      tls: pair,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    const agent = new Agent({ ca: [first.cert] });
    try {
      const health = await get(port, agent, '/health');
      expect(health.status).toBe(200);
      expect(health.fingerprint).toBe(first.fingerprint);
      expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });
      expect(health.headers['x-frame-options']).toBe('DENY');
      expect((await get(port, agent, '/')).status).toBe(200);
      // A client that does not trust the certificate is refused by its own TLS check.
      await expect(get(port, new Agent({}), '/health')).rejects.toMatchObject({
        code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      });
      // Plain HTTP to the TLS port gets no page.
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    } finally {
      agent.destroy();
      await app.close();
    }
  });

  it('gives a replaced certificate to new connections while an open one keeps its own', async () => {
    const app = await buildDashboard({
      source: demoSource(demo),
      credentials: null,
      version: '0.0.0-test',
      tls: await readTlsPair(pairFiles(first.cert, first.key)),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    // One kept-alive connection, trusting both certificates.
    const agent = new Agent({ ca: [first.cert, second.cert], keepAlive: true, maxSockets: 1 });
    try {
      const before = await get(port, agent, '/health');
      expect(before).toMatchObject({ status: 200, reused: false });
      expect(before.fingerprint).toBe(first.fingerprint);
      expect(useTlsPair(app.server, await readTlsPair(pairFiles(second.cert, second.key)))).toBe(true);
      expect(await servedFingerprint(port, [second.cert])).toBe(second.fingerprint);
      // The connection opened before (with the old certificate) is not dropped: it answers.
      const open = await get(port, agent, '/health');
      expect(open).toMatchObject({ status: 200, reused: true });
      expect(open.socket).toBe(before.socket);
    } finally {
      agent.destroy();
      await app.close();
    }
  });

  it('has nothing to replace on plain HTTP', async () => {
    const app = await buildDashboard({ source: demoSource(demo), credentials: null, version: '0.0.0-test' });
    try {
      expect(useTlsPair(app.server, await readTlsPair(pairFiles(first.cert, first.key)))).toBe(false);
    } finally {
      await app.close();
    }
  });
});
