import { describe, expect, it } from 'vitest';
import { DurationError, describeDuration, parseDuration } from '../../src/time/durations.ts';
import { formatInstant, parseInstant } from '../../src/time/instants.ts';
import { addPeriod, parsePeriod } from '../../src/time/periods.ts';

const instant = (text: string) => parseInstant(text)?.toISOString() ?? null;
const wide = { min: 1, max: Number.MAX_SAFE_INTEGER };

describe('durations (command line and environment): m is minutes', () => {
  it.each([
    ['30s', 30_000],
    ['6m', 6 * 60_000],
    ['15m', 15 * 60_000],
    ['6h', 6 * 3_600_000],
    ['14d', 14 * 86_400_000],
    ['2w', 2 * 604_800_000],
    [' 7d ', 7 * 86_400_000],
    ['999999999s', 999_999_999_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text, wide)).toBe(ms);
  });

  it.each([
    [''],
    ['d'],
    ['0d'],
    ['07d'],
    ['1000000000s'],
    ['14'],
    ['14y'],
    ['14M'],
    ['14D'],
    ['14dd'],
    ['x14d'],
    ['1.5d'],
    ['P3M'],
    ['-1h'],
  ])('%j is not a duration', (text) => {
    expect(() => parseDuration(text, wide)).toThrow(DurationError);
  });

  it('keeps to its bounds, both inclusive, and says them in its own units', () => {
    const bounds = { min: 60_000, max: 366 * 86_400_000 };
    expect(parseDuration('1m', bounds)).toBe(60_000);
    expect(parseDuration('366d', bounds)).toBe(366 * 86_400_000);
    expect(() => parseDuration('59s', bounds)).toThrow('59s is outside 1m to 366d');
    expect(() => parseDuration('367d', bounds)).toThrow('367d is outside 1m to 366d');
    expect(() => parseDuration('999999w', bounds)).toThrow(DurationError);
  });

  it('describes a duration in its largest exact unit', () => {
    expect(describeDuration(900_000)).toBe('15m');
    expect(describeDuration(6 * 3_600_000)).toBe('6h');
    expect(describeDuration(14 * 86_400_000)).toBe('2w');
    expect(describeDuration(90_000)).toBe('90s');
    expect(describeDuration(1500)).toBe('1500ms');
  });
});

describe('reminder periods (advisories): ISO 8601, M is months', () => {
  it.each([
    ['P3M', { years: 0, months: 3, weeks: 0, days: 0 }],
    ['P1Y', { years: 1, months: 0, weeks: 0, days: 0 }],
    ['P12W', { years: 0, months: 0, weeks: 12, days: 0 }],
    ['P90D', { years: 0, months: 0, weeks: 0, days: 90 }],
    ['P1Y6M', { years: 1, months: 6, weeks: 0, days: 0 }],
  ])('%s', (text, period) => {
    expect(parsePeriod(text)).toEqual(period);
  });

  it.each([
    [''],
    ['P'],
    ['P0M'],
    ['3m'],
    ['6m'],
    ['P3m'],
    ['P1.5M'],
    ['PT3M'],
    ['P3M1Y'],
    ['p3m'],
    ['P-1D'],
    ['P10000Y'],
  ])('%j is not a period', (text) => {
    expect(parsePeriod(text)).toBeNull();
  });

  it('adds months on the calendar, keeping the time of day', () => {
    const add = (start: string, text: string) =>
      addPeriod(new Date(start), parsePeriod(text) as never).toISOString();
    expect(add('2026-01-31T00:00:00Z', 'P1M')).toBe('2026-02-28T00:00:00.000Z');
    expect(add('2028-01-31T00:00:00Z', 'P1M')).toBe('2028-02-29T00:00:00.000Z');
    expect(add('2026-05-02T00:00:00Z', 'P3M')).toBe('2026-08-02T00:00:00.000Z');
    expect(add('2026-11-30T10:15:00Z', 'P3M')).toBe('2027-02-28T10:15:00.000Z');
    expect(add('2028-02-29T00:00:00Z', 'P1Y')).toBe('2029-02-28T00:00:00.000Z');
    expect(add('2026-01-01T00:00:00Z', 'P2W')).toBe('2026-01-15T00:00:00.000Z');
    expect(add('2026-03-28T12:00:00Z', 'P1D')).toBe('2026-03-29T12:00:00.000Z');
  });
});

describe('instants as feeds write them', () => {
  it('are UTC, in whole seconds', () => {
    expect(formatInstant(new Date('2026-11-21T10:30:15.987Z'))).toBe('2026-11-21T10:30:15Z');
  });
});

describe('instants', () => {
  it.each([
    ['2026-01-01', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T10:30Z', '2026-01-01T10:30:00.000Z'],
    ['2026-01-01T10:30:15Z', '2026-01-01T10:30:15.000Z'],
    ['2026-01-01T10:30:15.250Z', '2026-01-01T10:30:15.250Z'],
    ['2026-01-01T10:30:15+02:00', '2026-01-01T08:30:15.000Z'],
    ['2026-01-01T10:30-01:30', '2026-01-01T12:00:00.000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000Z'],
    ['2026-12-31T23:59:59-23:59', '2027-01-01T23:58:59.000Z'],
  ])('%s is %s', (text, expected) => {
    expect(instant(text)).toBe(expected);
  });

  it.each([
    [''],
    ['2026-1-01'],
    ['26-01-01'],
    ['2026-01-1'],
    [' 2026-01-01'],
    ['2026-01-01 '],
    ['x2026-01-01'],
    ['2026-01-01x'],
    ['2026/01/01'],
    ['2027-13-45'],
    ['2026-01-01T10:30'],
    ['2026-01-01T10:30:15'],
    ['2026-01-01 10:30Z'],
    ['2026-01-01T1:30Z'],
    ['2026-01-01T10:3Z'],
    ['2026-01-01T10:30:1Z'],
    ['2026-01-01T10:30:15.Z'],
    ['2026-01-01T10:30+0200'],
    ['2026-01-01T10:30+2:00'],
    ['2026-01-01T10:30z'],
    ['2026-01-01T10:30ZZ'],
    ['x2026-01-01T10:30Z'],
    // Extended years, which Date itself would read.
    ['+002026-01-01'],
    ['+002026-01-01T10:30Z'],
    ['2026-01-01T25:00Z'],
    ['tomorrow'],
    // Impossible dates and times, which Date would roll over into other days.
    ['2026-02-30'],
    ['2026-02-29'],
    ['2026-04-31'],
    ['2026-00-10'],
    ['0000-01-01'],
    ['2026-02-30T10:00Z'],
    ['2026-01-01T24:00Z'],
    ['2026-01-01T10:60Z'],
    ['2026-06-30T23:59:60Z'],
    ['2026-01-01T10:30+24:00'],
    ['2026-01-01T10:30+01:60'],
  ])('%j is not an instant', (text) => {
    expect(parseInstant(text)).toBeNull();
  });
});
