import { InputProblem } from '../../errors.ts';
import type { FeedLimits } from '../format/limits.ts';
import type { ListedFile } from '../verify/verify-bytes.ts';

/**
 * Where a feed is read from: a directory or an HTTP(S) base URL. A source reads bytes
 * and nothing else: it caps every read (at most one byte more than allowed, so an
 * oversized file is seen without being read whole) and leaves judging them to the pure
 * steps of feed/verify/verify-bytes.ts.
 */
export interface FeedHead {
  manifest: Buffer;
  /** null when the feed has no manifest.yaml.sig. */
  signature: Buffer | null;
  /** What to send next time for a conditional request (HTTP); empty for a directory. */
  validators: Validators;
}

export interface Validators {
  etag?: string;
  lastModified?: string;
}

export interface FeedSource {
  /** For messages and the dashboard: the directory or URL. */
  readonly location: string;
  /** A local directory whose files parallel checkers may read themselves; null for HTTP. */
  readonly directory: string | null;
  /**
   * The manifest and signature; `unchanged` when the source can tell that the manifest is
   * the one of `previous` (HTTP 304) without sending it.
   */
  readHead(limits: FeedLimits, previous?: Validators | null): Promise<FeedHead | 'unchanged'>;
  /** A listed file, at most `size + 1` bytes; null when it does not exist. */
  readFile(file: ListedFile): Promise<Buffer | null>;
}

/**
 * The feed could not be read at all (unreachable host, timeout, permission denied): not a
 * judgement on the feed. The appliance keeps serving its cache and shows this message.
 */
export class SourceError extends InputProblem {
  override name = 'SourceError';
}
