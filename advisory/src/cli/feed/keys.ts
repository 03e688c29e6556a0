import {
  type PublicKey,
  parsePublicKey,
  parseSecretKey,
  type SecretKey,
  SignifyFormatError,
} from '../../crypto/signify.ts';
import { readInputFile } from '../inputs.ts';
import { UsageError } from '../io.ts';

/** A key file (signify format), checked before use; a bad one is a usage error naming it. */
async function readKey<T>(what: string, file: string, parse: (text: string) => T): Promise<T> {
  const text = await readInputFile(what, file, 64 * 1024);
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof SignifyFormatError) throw new UsageError(`${what} ${file}: ${error.message}`);
    throw error;
  }
}

export const readPublicKey = (file: string): Promise<PublicKey> =>
  readKey('public key', file, parsePublicKey);

export const readSecretKey = (file: string): Promise<SecretKey> =>
  readKey('secret key', file, parseSecretKey);
