import { describe, expect, it } from 'vitest';
import { parseDuration } from '../src/feed/duration.ts';

describe('durations', () => {
  it.each([
    ['30m', 30 * 60_000],
    ['12h', 12 * 3_600_000],
    ['14d', 14 * 86_400_000],
    ['2w', 2 * 604_800_000],
    ['1m', 60_000],
    [' 7d ', 7 * 86_400_000],
    ['999999h', 999_999 * 3_600_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    [''],
    ['d'],
    ['0d'],
    ['07d'],
    ['1000000h'],
    ['14'],
    ['14y'],
    ['14D'],
    ['14dd'],
    ['x14d'],
    ['1.5d'],
  ])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});
