import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { Stats } from 'node:fs';
import { createSecureContext, Server as TlsServer } from 'node:tls';
import { ConfigError, type TlsFiles } from '../appliance/config.ts';
import { FileReadError, readRegularFile } from '../storage/regular-file.ts';

/**
 * The dashboard's certificate and key (ADVISORY_TLS_CERT, ADVISORY_TLS_KEY), read and
 * checked as a pair: at start a problem stops start-up (exit 2, naming the setting and the
 * file); on SIGHUP the same checks decide whether the new pair replaces the one in use,
 * so a half-renewed pair (a new certificate beside the old key) never reaches a client.
 */
export interface TlsPair {
  /** PEM: the certificate, and any intermediate certificates after it. */
  cert: string;
  /** PEM: the private key, unencrypted. */
  key: string;
  /** The first certificate of `cert`: the one clients are shown. */
  certificate: X509Certificate;
}

/** Enough for a certificate chain or a key; anything larger is not one. */
const MAX_PEM_BYTES = 1024 * 1024;

async function readPem(
  setting: string,
  file: string,
  check?: (info: Stats) => string | null,
): Promise<string> {
  try {
    return await readRegularFile(file, MAX_PEM_BYTES, { check });
  } catch (error) {
    // Stryker disable next-line ConditionalExpression: readRegularFile throws FileReadError only (a failing close aside).
    if (error instanceof FileReadError) throw new ConfigError(setting, `${file}: ${error.message}`);
    throw error;
  }
}

function parseCertificate(files: TlsFiles, pem: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch {
    throw new ConfigError('ADVISORY_TLS_CERT', `${files.certFile}: no PEM certificate in it`);
  }
}

function parseKey(files: TlsFiles, pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    // Told by the PEM text: Node 20 reports a missing passphrase as an interrupted OpenSSL
    // call, newer ones by name; both forms of an encrypted key say so in their header.
    const encrypted = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem);
    const problem = encrypted
      ? 'the private key is encrypted; give it unencrypted, readable by the appliance alone'
      : 'no PEM private key in it';
    throw new ConfigError('ADVISORY_TLS_KEY', `${files.keyFile}: ${problem}`);
  }
}

/**
 * The private key is readable by the appliance alone: no access at all for others, no
 * write for the group, and group read only when the file belongs to root (a key shared
 * through a group such as Debian's ssl-cert, the rule PostgreSQL applies to its key).
 * Judged by the mode bits, not by whether a read fails: a daemon run as root reads any
 * file, whatever its mode. Judged on the file as opened for the read, so the key used is
 * the key whose mode was checked, even while the file is being replaced.
 */
function keyModeProblem(file: string): (info: Stats) => string | null {
  return ({ mode, uid }) => {
    const forbidden = uid === 0 ? 0o027 : 0o077;
    if ((mode & forbidden) === 0) return null;
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    return `mode ${octal} lets other users read or change the private key: chmod 600 ${file} (640 when the file belongs to root and its group is the appliance's)`;
  };
}

/** Reads both files and checks that they make one usable pair; a ConfigError says what is wrong. */
export async function readTlsPair(files: TlsFiles): Promise<TlsPair> {
  // One after the other: with both files wrong, the certificate's problem is the one told.
  const cert = await readPem('ADVISORY_TLS_CERT', files.certFile);
  const key = await readPem('ADVISORY_TLS_KEY', files.keyFile, keyModeProblem(files.keyFile));
  const certificate = parseCertificate(files, cert);
  const privateKey = parseKey(files, key);
  if (!certificate.checkPrivateKey(privateKey))
    throw new ConfigError(
      'ADVISORY_TLS_KEY',
      `${files.keyFile}: not the private key of the certificate in ${files.certFile}`,
    );
  try {
    // What the server will do with them, done once now: anything OpenSSL still refuses
    // (an unsupported key type, a broken chain entry) is found here, not at a handshake.
    createSecureContext({ cert, key });
  } catch (error) {
    throw new ConfigError('ADVISORY_TLS_CERT', `${files.certFile}: ${(error as Error).message}`);
  }
  return { cert, key, certificate };
}

/**
 * One line about a certificate, for the operator: whom it names, until when, which one.
 * An expired one is still served (the daemon's other work goes on) but said to be expired,
 * since clients will refuse it.
 */
export function describeCertificate(certificate: X509Certificate, now: Date = new Date()): string {
  // A certificate may name no subject (its names in subjectAltName alone): Node gives undefined.
  const subject = (certificate.subject ?? '').split('\n').join(', ') || '(no subject)';
  const until = new Date(certificate.validTo);
  const validTo = Number.isNaN(until.getTime()) ? certificate.validTo : until.toISOString();
  const expired = until.getTime() < now.getTime() ? ' (EXPIRED)' : '';
  return `${subject}, valid until ${validTo}${expired}, SHA-256 ${certificate.fingerprint256}`;
}

/**
 * Hands a new pair to a serving TLS server: connections made from now on get it, those
 * already open keep theirs (Node's `setSecureContext`). False when the server is plain HTTP.
 */
export function useTlsPair(server: unknown, pair: TlsPair): boolean {
  if (!(server instanceof TlsServer)) return false;
  server.setSecureContext({ cert: pair.cert, key: pair.key });
  return true;
}
