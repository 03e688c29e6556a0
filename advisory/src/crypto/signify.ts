import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from 'node:crypto';
import { InputProblem } from '../errors.ts';

/**
 * Ed25519 keys and signatures in OpenBSD signify's formats, so operators can check a
 * feed with `signify -V` as well as with our own tool:
 *
 *   public key:  base64("Ed" | keynum[8] | publickey[32])
 *   secret key:  base64("Ed" | "BK" | kdfrounds[4] | salt[16] | checksum[8] | keynum[8] | secretkey[64])
 *   signature:   base64("Ed" | keynum[8] | signature[64])
 *
 * each on the line after an "untrusted comment: " line. Secret keys are accepted only
 * unencrypted (kdfrounds 0, as `signify -G -n` writes them); the checksum is the first 8
 * bytes of SHA-512 over the 64-byte secret key.
 */
export class SignifyFormatError extends InputProblem {
  override name = 'SignifyFormatError';
}

const PKALG = Buffer.from('Ed');
const KDFALG = Buffer.from('BK');
const COMMENT = 'untrusted comment: ';

export interface PublicKey {
  keynum: Buffer;
  key: KeyObject;
  raw: Buffer;
  comment: string;
}

export interface SecretKey {
  keynum: Buffer;
  privateKey: KeyObject;
  comment: string;
}

export interface SignatureBlock {
  keynum: Buffer;
  signature: Buffer;
  comment: string;
}

/**
 * Reads `untrusted comment:` + base64 line pairs; several blocks may follow each other.
 * Strict: every line ends in a newline and nothing else follows, so there is exactly one
 * spelling of a given set of signatures.
 */
function readBlocks(text: string, what: string): { comment: string; data: Buffer }[] {
  if (!text.endsWith('\n')) throw new SignifyFormatError(`${what}: the last line must end with a newline`);
  const lines = text.slice(0, -1).split('\n');
  if (lines.length % 2 !== 0) {
    throw new SignifyFormatError(`${what}: expected pairs of comment and base64 lines`);
  }
  const blocks: { comment: string; data: Buffer }[] = [];
  for (let i = 0; i < lines.length; i += 2) {
    const comment = lines[i] as string;
    const encoded = lines[i + 1] as string;
    if (!comment.startsWith(COMMENT))
      throw new SignifyFormatError(`${what}: line ${i + 1} must start with "${COMMENT.trim()}"`);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded))
      throw new SignifyFormatError(`${what}: line ${i + 2} is not base64`);
    const data = Buffer.from(encoded, 'base64');
    // Canonical base64 only: unused padding bits must not give a second spelling of the same bytes.
    if (data.toString('base64') !== encoded)
      throw new SignifyFormatError(`${what}: line ${i + 2} is not canonical base64`);
    blocks.push({ comment: comment.slice(COMMENT.length), data });
  }
  return blocks;
}

function ed25519Public(raw: Buffer): KeyObject {
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
    format: 'jwk',
  });
}

export function parsePublicKey(text: string): PublicKey {
  const blocks = readBlocks(text, 'public key');
  const block = blocks[0];
  if (!block || blocks.length !== 1) throw new SignifyFormatError('public key: expected exactly one key');
  const { data } = block;
  if (data.length !== 42 || !data.subarray(0, 2).equals(PKALG)) {
    throw new SignifyFormatError('public key: not an Ed25519 signify public key');
  }
  const raw = Buffer.from(data.subarray(10, 42));
  return { keynum: Buffer.from(data.subarray(2, 10)), key: ed25519Public(raw), raw, comment: block.comment };
}

export function parseSecretKey(text: string): SecretKey {
  const blocks = readBlocks(text, 'secret key');
  const block = blocks[0];
  if (!block || blocks.length !== 1) throw new SignifyFormatError('secret key: expected exactly one key');
  const { data } = block;
  if (data.length !== 104 || !data.subarray(0, 2).equals(PKALG) || !data.subarray(2, 4).equals(KDFALG)) {
    throw new SignifyFormatError('secret key: not an Ed25519 signify secret key');
  }
  if (data.readUInt32BE(4) !== 0) {
    throw new SignifyFormatError(
      'secret key: passphrase-protected keys are not supported (make one with signify -G -n)',
    );
  }
  const checksum = data.subarray(24, 32);
  const keynum = Buffer.from(data.subarray(32, 40));
  const secret = data.subarray(40, 104);
  if (!createHash('sha512').update(secret).digest().subarray(0, 8).equals(checksum)) {
    throw new SignifyFormatError('secret key: checksum mismatch (damaged key file)');
  }
  const seed = secret.subarray(0, 32);
  const publicRaw = secret.subarray(32, 64);
  const privateKey = createPrivateKey({
    key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: publicRaw.toString('base64url') },
    format: 'jwk',
  });
  return { keynum, privateKey, comment: block.comment };
}

export function parseSignatures(text: string): SignatureBlock[] {
  const seen = new Set<string>();
  return readBlocks(text, 'signature').map(({ comment, data }, index) => {
    if (data.length !== 74 || !data.subarray(0, 2).equals(PKALG)) {
      throw new SignifyFormatError(`signature: block ${index + 1} is not an Ed25519 signify signature`);
    }
    const keynum = Buffer.from(data.subarray(2, 10));
    // One block per key: a repeated block has no purpose but to confuse.
    if (seen.has(keyId(keynum))) throw new SignifyFormatError(`signature: key ${keyId(keynum)} signs twice`);
    seen.add(keyId(keynum));
    return { keynum, signature: Buffer.from(data.subarray(10, 74)), comment };
  });
}

function publicKeyText(keynum: Buffer, raw: Buffer, comment: string): string {
  return `${COMMENT}${comment} public key\n${Buffer.concat([PKALG, keynum, raw]).toString('base64')}\n`;
}

/** The public key file that belongs to a secret key (the secret key holds the public half). */
export function publicKeyOf(secret: SecretKey, comment: string): string {
  const jwk = createPublicKey(secret.privateKey).export({ format: 'jwk' });
  return publicKeyText(secret.keynum, Buffer.from(String(jwk.x), 'base64url'), comment);
}

/** A new key pair as the text of the two files signify would write with `-G -n`. */
export function generateKeyPair(comment = 'advisory feed'): { publicKey: string; secretKey: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const seed = Buffer.from(String(jwk.d), 'base64url');
  const publicRaw = Buffer.from(String(jwk.x), 'base64url');
  const keynum = randomBytes(8);
  const secret = Buffer.concat([seed, publicRaw]);
  const checksum = createHash('sha512').update(secret).digest().subarray(0, 8);
  const secretData = Buffer.concat([
    PKALG,
    KDFALG,
    Buffer.alloc(4),
    randomBytes(16),
    checksum,
    keynum,
    secret,
  ]);
  return {
    publicKey: publicKeyText(keynum, publicRaw, comment),
    secretKey: `${COMMENT}${comment} secret key\n${secretData.toString('base64')}\n`,
  };
}

/** One signature block over `message`, in the `.sig` file format. */
export function signMessage(secret: SecretKey, message: Buffer, comment: string): string {
  const signature = sign(null, message, secret.privateKey);
  return `${COMMENT}${comment}\n${Buffer.concat([PKALG, secret.keynum, signature]).toString('base64')}\n`;
}

export function keyId(keynum: Buffer): string {
  return keynum.toString('hex');
}

/** What became of one block: checked and `verified` or `failed`, or `not-trusted` (not checked). */
export interface BlockOutcome {
  keyId: string;
  outcome: 'verified' | 'failed' | 'not-trusted';
}

export type SignatureCheck =
  | { ok: true; signedBy: string[]; blocks: BlockOutcome[] }
  | { ok: false; problem: 'unknown-key' | 'invalid'; blocks: BlockOutcome[] };

/**
 * The rule for a signature file of one or more blocks (docs/advisory/feed.md, "Several
 * signatures"): a block counts when its key number is that of a trusted key; every block
 * that counts must verify (under each trusted key of that number), and at least one must
 * count. A block of a key not trusted here cannot be checked and is passed over: during a
 * key rotation it is the other key's, for the clients that trust that one. So a feed is
 * accepted the same whatever the order of its blocks, and a damaged block of a trusted
 * key is refused whatever else verifies. Reports every block's outcome, in order.
 */
export function checkSignatures(
  message: Buffer,
  blocks: SignatureBlock[],
  trusted: PublicKey[],
): SignatureCheck {
  const outcomes = blocks.map((block): BlockOutcome => {
    const keys = trusted.filter((key) => key.keynum.equals(block.keynum));
    const id = keyId(block.keynum);
    if (keys.length === 0) return { keyId: id, outcome: 'not-trusted' };
    const holds = keys.every((key) => verify(null, message, key.key, block.signature));
    return { keyId: id, outcome: holds ? 'verified' : 'failed' };
  });
  if (outcomes.some((o) => o.outcome === 'failed'))
    return { ok: false, problem: 'invalid', blocks: outcomes };
  const signedBy = outcomes.filter((o) => o.outcome === 'verified').map((o) => o.keyId);
  if (signedBy.length === 0) return { ok: false, problem: 'unknown-key', blocks: outcomes };
  return { ok: true, signedBy, blocks: outcomes };
}
