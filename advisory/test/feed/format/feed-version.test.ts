import { describe, expect, it } from 'vitest';
import {
  compareFeedVersions,
  type FeedVersion,
  feedDateOf,
  nextFeedVersion,
  parseFeedVersion,
} from '../../../src/feed/format/feed-version.ts';

const version = (text: string): FeedVersion => {
  const parsed = parseFeedVersion(text);
  if (!parsed) throw new Error(`not a feed version: ${text}`);
  return parsed;
};

describe('feed versions', () => {
  it.each([
    ['2026.11.21'],
    ['2024.02.29'],
    ['1999.12.31'],
    ['2026.01.01'],
    ['2026.11.26.1'],
    ['2026.11.26.99'],
  ])('%s is a feed version', (text) => {
    expect(parseFeedVersion(text)).not.toBeNull();
  });

  it('reads the date and the release number', () => {
    expect(parseFeedVersion('2026.11.26')).toEqual({
      date: '2026.11.26',
      year: 2026,
      month: 11,
      day: 26,
      release: 0,
    });
    expect(parseFeedVersion('2026.11.26.10')).toEqual({
      date: '2026.11.26',
      year: 2026,
      month: 11,
      day: 26,
      release: 10,
    });
  });

  it.each([
    ['2026.13.01'],
    ['2026.00.10'],
    ['2026.02.30'],
    ['2025.02.29'],
    ['2026.04.31'],
    ['2026.11.1'],
    ['2026-11-21'],
    ['26.11.21'],
    ['x2026.11.21'],
    ['2026.11.21x'],
    ['2026.11.21.0'],
    ['2026.11.21.01'],
    ['2026.11.21.100'],
    ['2026.11.21.'],
    ['2026.11.21.1.1'],
    ['2026.02.30.1'],
    ['0000.01.01'],
    [''],
  ])('%j is not a feed version', (text) => {
    expect(parseFeedVersion(text)).toBeNull();
  });

  it('orders by date, then release number, numerically', () => {
    const sorted = [
      '2026.11.27',
      '2026.11.26.10',
      '2026.11.26',
      '2026.11.26.9',
      '2026.11.26.1',
      '2025.12.31.99',
    ].sort((a, b) => compareFeedVersions(version(a), version(b)));
    expect(sorted).toEqual([
      '2025.12.31.99',
      '2026.11.26',
      '2026.11.26.1',
      '2026.11.26.9',
      '2026.11.26.10',
      '2026.11.27',
    ]);
    expect(compareFeedVersions(version('2026.11.26.10'), version('2026.11.26.9'))).toBeGreaterThan(0);
    expect(compareFeedVersions(version('2026.11.26.1'), version('2026.11.26.1'))).toBe(0);
  });

  it('is of the UTC date of an instant', () => {
    expect(feedDateOf(new Date('2026-11-21T23:59:59.999Z'))).toBe('2026.11.21');
    expect(feedDateOf(new Date('2026-11-22T00:00:00+01:00'))).toBe('2026.11.21');
  });
});

describe('the next free version', () => {
  const now = new Date('2026-11-26T09:00:00Z');

  it('is today with no previous feed or one of an earlier day', () => {
    expect(nextFeedVersion(null, now)).toEqual({ ok: true, version: '2026.11.26' });
    expect(nextFeedVersion(version('2026.11.25.7'), now)).toEqual({ ok: true, version: '2026.11.26' });
  });

  it("is the next extra release of today when today's feed exists", () => {
    expect(nextFeedVersion(version('2026.11.26'), now)).toEqual({ ok: true, version: '2026.11.26.1' });
    expect(nextFeedVersion(version('2026.11.26.9'), now)).toEqual({ ok: true, version: '2026.11.26.10' });
    expect(nextFeedVersion(version('2026.11.26.98'), now)).toEqual({ ok: true, version: '2026.11.26.99' });
  });

  it('does not exist after the 99th extra release, or after a feed of a later day', () => {
    expect(nextFeedVersion(version('2026.11.26.99'), now)).toEqual({
      ok: false,
      message:
        "2026.11.26.99 was built already: a day has at most 99 extra releases; publish tomorrow's version",
    });
    expect(nextFeedVersion(version('2026.11.27'), now)).toEqual({
      ok: false,
      message:
        'the last manifest has version 2026.11.27, of a later day than today (2026.11.26); check the clock',
    });
  });
});
