import { type PublicKey, parsePublicKey, parseSecretKey, type SecretKey } from '../../crypto/signify.ts';
import { readInputFile } from '../inputs.ts';
import { forInput } from '../io.ts';

/** A key file (signify format), checked before use; a bad one is a usage error naming it. */
async function readKey<T>(what: string, file: string, parse: (text: string) => T): Promise<T> {
  const text = await readInputFile(what, file, 64 * 1024);
  return forInput(`${what} ${file}`, () => parse(text));
}

export const readPublicKey = (file: string): Promise<PublicKey> =>
  readKey('public key', file, parsePublicKey);

export const readSecretKey = (file: string): Promise<SecretKey> =>
  readKey('secret key', file, parseSecretKey);
