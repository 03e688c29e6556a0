import { resolveFrom } from '../config.ts';
import { AdapterError, type TlsTrust } from './fetch-json.ts';
import { readNamed } from './limits.ts';

/**
 * A secret a source reads from a file (an API token secret, an app password): surrounding
 * white space dropped, the rest printable ASCII without spaces, so it cannot break the
 * header it goes into. The file is named in errors; the secret never is.
 */
export async function readSecret(inventoryFile: string, file: string, what: string): Promise<string> {
  const secret = (await readNamed(resolveFrom(inventoryFile, file))).trim();
  if (!/^[\x21-\x7e]+$/.test(secret)) throw new AdapterError(`${file}: not ${what}`);
  return secret;
}

/** The TLS trust a source's `ca_file` or `fingerprint` asks for (the system's CAs without either). */
export async function trustOf(
  inventoryFile: string,
  source: { ca_file?: string | undefined; fingerprint?: string | undefined },
): Promise<TlsTrust> {
  const ca = source.ca_file ? await readNamed(resolveFrom(inventoryFile, source.ca_file)) : undefined;
  return { ...(ca ? { ca } : {}), ...(source.fingerprint ? { fingerprint: source.fingerprint } : {}) };
}
