import {
  checkSignatures,
  keyId,
  type PublicKey,
  parseSignatures,
  type SecretKey,
  SignifyFormatError,
  signMessage,
} from '../crypto/signify.ts';

/**
 * A checkpoint: the log's size and head hash at a moment, signed with the appliance's own
 * Ed25519 key. A hash chain alone cannot show that its tail was cut or that it was
 * rewritten whole; a signed checkpoint kept apart from the log, and carried in every
 * alert (whose recipients thereby witness the log), can. The signed message is plain
 * text and the signature a signify block, so a recipient can check one with
 * `signify -V -p appliance.pub -m checkpoint.txt -x checkpoint.sig`.
 */
export interface Checkpoint {
  size: number;
  head: string;
  at: string;
  /** The signify signature block (two lines) over `checkpointMessage(...)`. */
  signature: string;
}

export function checkpointMessage(checkpoint: Pick<Checkpoint, 'size' | 'head' | 'at'>): string {
  return `advisory decision log checkpoint\nsize: ${checkpoint.size}\nhead: ${checkpoint.head}\nat: ${checkpoint.at}\n`;
}

export function signCheckpoint(key: SecretKey, size: number, head: string, at: string): Checkpoint {
  const message = checkpointMessage({ size, head, at });
  return {
    size,
    head,
    at,
    signature: signMessage(key, Buffer.from(message), `verify with ${keyId(key.keynum)}.pub`),
  };
}

/** Whether the checkpoint's signature verifies under the appliance's public key. */
export function checkpointSignatureHolds(checkpoint: Checkpoint, key: PublicKey): boolean {
  try {
    const blocks = parseSignatures(checkpoint.signature);
    return checkSignatures(Buffer.from(checkpointMessage(checkpoint)), blocks, [key]).ok;
  } catch (error) {
    if (error instanceof SignifyFormatError) return false;
    throw error;
  }
}
