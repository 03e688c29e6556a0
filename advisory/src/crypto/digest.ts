import * as nodeCrypto from 'node:crypto';

/**
 * Lowercase hex SHA-256 of the bytes. The one-shot `crypto.hash` (Node 20.12 and later;
 * looked up, not imported by name, so older releases still load this) makes no Hash
 * object: about half the cost for the small files a feed holds thousands of. Not named
 * `crypto`: the single executable runs its bundle as a script, where a top-level `crypto`
 * would be the global one, which cannot be assigned.
 */
export const sha256: (data: Buffer | string) => string =
  typeof nodeCrypto.hash === 'function'
    ? (data) => nodeCrypto.hash('sha256', data, 'hex')
    : (data) => nodeCrypto.createHash('sha256').update(data).digest('hex');
