import {
  type PublicKey,
  parsePublicKey,
  parseSecretKey,
  type SecretKey,
  SignifyFormatError,
} from '../../crypto/signify.ts';
import { readInputFile } from '../inputs.ts';
import { UsageError } from '../io.ts';

/** A public key file (signify format), checked before use; a bad one is a usage error naming it. */
export async function readPublicKey(file: string): Promise<PublicKey> {
  const text = await readInputFile('public key', file, 64 * 1024);
  try {
    return parsePublicKey(text);
  } catch (error) {
    if (error instanceof SignifyFormatError) throw new UsageError(`public key ${file}: ${error.message}`);
    throw error;
  }
}

export async function readSecretKey(file: string): Promise<SecretKey> {
  const text = await readInputFile('secret key', file, 64 * 1024);
  try {
    return parseSecretKey(text);
  } catch (error) {
    if (error instanceof SignifyFormatError) throw new UsageError(`secret key ${file}: ${error.message}`);
    throw error;
  }
}
