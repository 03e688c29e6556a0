import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { createSecureContext, Server as TlsServer } from 'node:tls';
import { ConfigError, type TlsFiles } from '../appliance/config.ts';
import { describeFileError, FileReadError, readRegularFile } from '../storage/regular-file.ts';

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

async function readPem(setting: string, file: string): Promise<string> {
  try {
    return await readRegularFile(file, MAX_PEM_BYTES);
  } catch (error) {
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
  } catch (error) {
    // Node 20 reports a missing passphrase as an interrupted OpenSSL call, newer ones by name.
    const encrypted =
      (error as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE' ||
      /^-----BEGIN ENCRYPTED PRIVATE KEY-----$|^Proc-Type: 4,ENCRYPTED$/m.test(pem);
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
 * file, whatever its mode.
 */
async function checkKeyMode(file: string): Promise<void> {
  let mode: number;
  let uid: number;
  try {
    ({ mode, uid } = await stat(file));
  } catch (error) {
    throw new ConfigError('ADVISORY_TLS_KEY', `${file}: ${describeFileError(error)}`);
  }
  const forbidden = uid === 0 ? 0o027 : 0o077;
  if ((mode & forbidden) === 0) return;
  const octal = (mode & 0o777).toString(8).padStart(4, '0');
  throw new ConfigError(
    'ADVISORY_TLS_KEY',
    `${file}: mode ${octal} lets other users read or change the private key: chmod 600 ${file} (640 when the file belongs to root and its group is the appliance's)`,
  );
}

/** Reads both files and checks that they make one usable pair; a ConfigError says what is wrong. */
export async function readTlsPair(files: TlsFiles): Promise<TlsPair> {
  const [cert, key] = await Promise.all([
    readPem('ADVISORY_TLS_CERT', files.certFile),
    readPem('ADVISORY_TLS_KEY', files.keyFile),
  ]);
  await checkKeyMode(files.keyFile);
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
  const subject = certificate.subject.split('\n').join(', ') || '(no subject)';
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
