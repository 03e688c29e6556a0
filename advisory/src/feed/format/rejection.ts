import { RejectedError } from '../../errors.ts';

/**
 * Why a feed was refused: a stable machine-readable reason and a sentence an operator
 * understands. The appliance keeps its last good feed and shows this.
 */
export type RejectionReason =
  | 'manifest-missing'
  | 'manifest-too-large'
  | 'signature-missing'
  | 'signature-too-large'
  | 'signature-malformed'
  | 'signature-unknown-key'
  | 'signature-invalid'
  | 'manifest-malformed'
  | 'schema-unsupported'
  | 'unsafe-path'
  | 'file-missing'
  | 'file-too-large'
  | 'file-size-mismatch'
  | 'file-hash-mismatch'
  | 'advisory-malformed'
  | 'published-in-future'
  | 'expired'
  | 'rollback'
  | 'version-conflict'
  /** The feed host answered 304 Not Modified to a request that sent no validators (feed/sources/http.ts). */
  | 'not-modified-unasked';

export interface Rejection {
  reason: RejectionReason;
  message: string;
  /** The feed file concerned, relative to the feed directory. */
  file?: string;
}

export class FeedRejectedError extends RejectedError {
  constructor(readonly rejection: Rejection) {
    super(rejection.message);
    this.name = 'FeedRejectedError';
  }
}

export function reject(reason: RejectionReason, message: string, file?: string): never {
  throw new FeedRejectedError(file === undefined ? { reason, message } : { reason, message, file });
}
