import * as crypto from 'node:crypto';

/**
 * Lowercase hex SHA-256 of the bytes. The one-shot `crypto.hash` (Node 20.12 and later;
 * looked up, not imported by name, so older releases still load this) makes no Hash
 * object: about half the cost for the small files a feed holds thousands of.
 */
export const sha256: (data: Buffer | string) => string =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'hex')
    : (data) => crypto.createHash('sha256').update(data).digest('hex');
