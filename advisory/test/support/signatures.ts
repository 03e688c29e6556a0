import { keyId, parseSecretKey, signMessage } from '../../src/crypto/signify.ts';
import type { TestKey } from './feed.ts';

/**
 * The rule for a signature file of several blocks (docs/advisory/feed.md, "Several
 * signatures"): a block counts when its key is trusted; every block that counts must
 * verify, and at least one must count. Every file of one and two blocks, each block one
 * of: V valid and trusted, D damaged and trusted, U valid and untrusted, X damaged and
 * untrusted (each block by a key of its own).
 */
export const KINDS = ['V', 'D', 'U', 'X'] as const;
export type Kind = (typeof KINDS)[number];
export const SIGNATURE_CASES: Kind[][] = [
  ...KINDS.map((k) => [k]),
  ...KINDS.flatMap((first) => KINDS.map((second) => [first, second])),
];

/** What the rule says of a file of these blocks. */
export function expectedCheck(kinds: readonly Kind[]): { ok: boolean; problem?: 'invalid' | 'unknown-key' } {
  if (kinds.includes('D')) return { ok: false, problem: 'invalid' };
  if (!kinds.includes('V')) return { ok: false, problem: 'unknown-key' };
  return { ok: true };
}

/** A signature block of `key` over `signed`, damaged (one signature byte flipped) for D and X. */
export function blockOf(kind: Kind, key: TestKey, signed: Buffer): string {
  const text = signMessage(
    parseSecretKey(key.secretText),
    signed,
    `verify with ${keyId(key.publicKey.keynum)}.pub`,
  );
  if (kind === 'V' || kind === 'U') return text;
  const [comment, encoded] = text.split('\n') as [string, string];
  const data = Buffer.from(encoded, 'base64');
  data[40] = (data[40] as number) ^ 0x01;
  return `${comment}\n${data.toString('base64')}\n`;
}
