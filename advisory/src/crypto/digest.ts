import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256 of the bytes. */
export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}
