import { describe, expect, it } from 'vitest';
import { type ApplianceStatus, feedOrigin } from '../../src/appliance/status.ts';

const inUse = (from: 'live' | 'cache') => ({ from, since: 'T' }) as unknown as ApplianceStatus['feed'];

describe('feedOrigin: where the feed in use came from, as every output says it', () => {
  it('tells the feed host, the feed directory and the cache apart, and none without a feed', () => {
    expect(feedOrigin({ feed: inUse('live'), feedSource: 'http' })).toBe('host');
    expect(feedOrigin({ feed: inUse('live'), feedSource: 'directory' })).toBe('directory');
    // The cache is the cache whatever ADVISORY_FEED_URL names.
    expect(feedOrigin({ feed: inUse('cache'), feedSource: 'http' })).toBe('cache');
    expect(feedOrigin({ feed: inUse('cache'), feedSource: 'directory' })).toBe('cache');
    expect(feedOrigin({ feed: null, feedSource: 'http' })).toBe('none');
    expect(feedOrigin({ feed: null, feedSource: 'directory' })).toBe('none');
  });
});
