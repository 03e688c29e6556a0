import { describe, expect, it } from 'vitest';
import type { AcceptedState } from '../../../src/feed/format/accepted-state.ts';
import { StateError } from '../../../src/feed/format/accepted-state.ts';
import { makeFeed, type TestFeed, verifyDir } from '../../support/feed.ts';

/**
 * Feeds of both version forms against a remembered state: YYYY.MM.DD.N is newer than the
 * day's YYYY.MM.DD and older than the next day's, and N counts as a number.
 */
const AT = new Date('2026-11-27T12:00:00Z');

const remembered = (feed_version: string, published_at: string): AcceptedState => ({
  feed_version,
  published_at,
  manifest_sha256: 'a'.repeat(64),
});

const verify = (feed: TestFeed, lastAccepted: AcceptedState) =>
  verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey], now: AT, lastAccepted });

const outcome = async (feed: TestFeed, lastAccepted: AcceptedState) => {
  const result = await verify(feed, lastAccepted);
  if (result.ok) return 'accepted';
  return 'rejection' in result ? result.rejection : result;
};

describe('out-of-band versions against the last accepted feed', () => {
  it('YYYY.MM.DD.N follows the regular feed of its day and precedes the next day', async () => {
    const first = makeFeed(undefined, { feedVersion: '2026.11.26.1', now: new Date('2026-11-26T15:00:00Z') });
    expect(await outcome(first, remembered('2026.11.26', '2026-11-26T08:00:00Z'))).toBe('accepted');
    const nextDay = makeFeed(undefined, { feedVersion: '2026.11.27', now: new Date('2026-11-27T08:00:00Z') });
    expect(await outcome(nextDay, remembered('2026.11.26.1', '2026-11-26T15:00:00Z'))).toBe('accepted');
    const regular = makeFeed(undefined, { feedVersion: '2026.11.26', now: new Date('2026-11-26T08:00:00Z') });
    expect(await outcome(regular, remembered('2026.11.26.1', '2026-11-26T15:00:00Z'))).toEqual({
      reason: 'rollback',
      message: 'feed 2026.11.26 is older than the accepted 2026.11.26.1; a rollback is refused',
    });
  });

  it('compares N as a number: .10 is newer than .9', async () => {
    const tenth = makeFeed(undefined, {
      feedVersion: '2026.11.26.10',
      now: new Date('2026-11-26T20:00:00Z'),
    });
    expect(await outcome(tenth, remembered('2026.11.26.9', '2026-11-26T19:00:00Z'))).toBe('accepted');
    const ninth = makeFeed(undefined, { feedVersion: '2026.11.26.9', now: new Date('2026-11-26T19:00:00Z') });
    expect(await outcome(ninth, remembered('2026.11.26.10', '2026-11-26T20:00:00Z'))).toEqual({
      reason: 'rollback',
      message: 'feed 2026.11.26.9 is older than the accepted 2026.11.26.10; a rollback is refused',
    });
  });

  it('the same extra release with another manifest is the alarm; a newer one published earlier is refused', async () => {
    const feed = makeFeed(undefined, { feedVersion: '2026.11.26.2', now: new Date('2026-11-26T16:00:00Z') });
    expect(await outcome(feed, remembered('2026.11.26.2', '2026-11-26T16:00:00Z'))).toEqual({
      reason: 'version-conflict',
      message:
        'feed 2026.11.26.2 differs from the feed of the same version accepted before; this should never happen and is refused',
    });
    expect(await outcome(feed, remembered('2026.11.26.1', '2026-11-26T17:00:00Z'))).toEqual({
      reason: 'rollback',
      message: 'feed 2026.11.26.2 claims a newer version but was published before the accepted feed',
    });
  });

  it('a remembered version that is not one is an error of the state, never a guess', async () => {
    const feed = makeFeed(undefined, { feedVersion: '2026.11.26.1', now: new Date('2026-11-26T15:00:00Z') });
    await expect(verify(feed, remembered('2026.11.26.01', '2026-11-26T08:00:00Z'))).rejects.toThrow(
      StateError,
    );
  });
});
