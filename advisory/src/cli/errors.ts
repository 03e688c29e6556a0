/** Exit codes of `advisory-feed`: 0 success, 1 the feed is bad, 2 usage. */
export const EXIT_OK = 0;
export const EXIT_BAD_FEED = 1;
export const EXIT_USAGE = 2;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** The feed (or a key or file it needs) is bad: exit 1 with this message. */
export class FeedError extends Error {
  override name = 'FeedError';
}

export interface Io {
  out(line: string): void;
  err(line: string): void;
}
