import canonicalizeModule from 'canonicalize';
import { sha256 } from '../crypto/digest.ts';

// canonicalize is CommonJS (`module.exports = serialize`) but its types declare an ES
// default export, which TypeScript then reads as `module.exports.default`: the default
// import is the function itself at run time.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/**
 * The decision log's entries and how each is bound to the one before it: the SHA-256 of
 * the entry's canonical JSON (RFC 8785, so any implementation can recompute it) without
 * its own hash, where `prev` is the previous entry's hash (64 zeros for the first).
 */
export type DecisionKind =
  | 'feed-accepted'
  | 'feed-rejected'
  | 'initial-evaluation'
  | 'verdict-changed'
  | 'reminder-due'
  | 'log-repaired';

export interface DecisionEntry {
  /** 1, 2, 3…: the entry's place in the log. */
  seq: number;
  at: string;
  kind: DecisionKind;
  data: Record<string, unknown>;
  prev: string;
  hash: string;
}

export const GENESIS = '0'.repeat(64);

export function entryHash(entry: Omit<DecisionEntry, 'hash'>): string {
  const { seq, at, kind, data, prev } = entry;
  return sha256(canonicalize({ seq, at, kind, data, prev }) as string);
}

export function chainEntry(
  previous: { seq: number; hash: string } | null,
  at: string,
  kind: DecisionKind,
  data: Record<string, unknown>,
): DecisionEntry {
  const body = { seq: (previous?.seq ?? 0) + 1, at, kind, data, prev: previous?.hash ?? GENESIS };
  return { ...body, hash: entryHash(body) };
}
