import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { dayStart, isCalendarDate, namesDay, windowInZone } from '../../src/time/window.ts';

const refusal = (action: () => unknown) => {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return { code: (error as AppError).code, message: (error as AppError).message };
  }
  throw new Error('not refused');
};

const hours = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 3_600_000;

describe('isCalendarDate', () => {
  it.each(['2026-12-01', '2028-02-29', '0001-01-01', '9999-12-31'])('accepts %s', (text) => {
    expect(isCalendarDate(text)).toBe(true);
  });

  it.each([
    ['February 30', '2026-02-30'],
    ['February 29 of a common year', '2026-02-29'],
    ['month 13', '2026-13-01'],
    ['day 0', '2026-12-00'],
    ['year 0', '0000-01-01'],
    ['a short year', '226-12-01'],
    ['no day', '2026-12'],
    ['a time', '2026-12-01T00:00:00Z'],
    ['slashes', '2026/12/01'],
    ['an extended year', '+002026-12-01'],
  ])('refuses %s', (_label, text) => {
    expect(isCalendarDate(text)).toBe(false);
  });
});

describe('dayStart', () => {
  it('is midnight in the zone, as an instant in UTC', () => {
    expect(dayStart('2026-12-01', 'UTC')).toBe('2026-12-01T00:00:00Z');
    expect(dayStart('2026-12-01', 'Europe/Berlin')).toBe('2026-11-30T23:00:00Z');
    // Far from UTC on both sides: Kiritimati is UTC+14, Pago Pago UTC-11.
    expect(dayStart('2026-12-01', 'Pacific/Kiritimati')).toBe('2026-11-30T10:00:00Z');
    expect(dayStart('2026-12-01', 'Pacific/Pago_Pago')).toBe('2026-12-01T11:00:00Z');
  });

  it('makes a day of 23 or 25 hours where the clocks change', () => {
    // Berlin springs forward on 29 March 2026 and falls back on 25 October 2026.
    expect(hours(dayStart('2026-03-29', 'Europe/Berlin'), dayStart('2026-03-30', 'Europe/Berlin'))).toBe(23);
    expect(hours(dayStart('2026-10-25', 'Europe/Berlin'), dayStart('2026-10-26', 'Europe/Berlin'))).toBe(25);
    expect(hours(dayStart('2026-10-24', 'Europe/Berlin'), dayStart('2026-10-25', 'Europe/Berlin'))).toBe(24);
  });

  it('is the first instant of a day whose midnight does not exist', () => {
    // Santiago springs forward at midnight: 6 September 2026 begins at 01:00 (-03:00).
    expect(dayStart('2026-09-06', 'America/Santiago')).toBe('2026-09-06T04:00:00Z');
  });
});

describe('windowInZone', () => {
  it('reads each date as its day’s start in the zone, and leaves instants as they are', () => {
    expect(windowInZone({ from: '2026-12-01', to: '2026-12-02' }, 'Pacific/Kiritimati')).toEqual({
      from: '2026-11-30T10:00:00Z',
      to: '2026-12-01T10:00:00Z',
    });
    expect(windowInZone({ from: '2026-12-01', to: '2026-12-01T12:00:00Z' }, 'Europe/Berlin')).toEqual({
      from: '2026-11-30T23:00:00Z',
      to: '2026-12-01T12:00:00Z',
    });
    expect(windowInZone({ to: '2026-12-02' }, 'Europe/Berlin')).toEqual({ to: '2026-12-01T23:00:00Z' });
    expect(windowInZone({}, 'Europe/Berlin')).toEqual({});
  });

  it('refuses (422 naming to) a to that is not after from once both are instants', () => {
    const mustBeAfter = { code: 'VALIDATION_FAILED', message: 'to: must be after from' };
    expect(refusal(() => windowInZone({ from: '2026-12-01', to: '2026-12-01' }, 'UTC'))).toEqual(mustBeAfter);
    expect(refusal(() => windowInZone({ from: '2026-12-02', to: '2026-12-01' }, 'UTC'))).toEqual(mustBeAfter);
    // 1 December's start in Berlin is 23:00 UTC the day before.
    expect(
      refusal(() => windowInZone({ from: '2026-11-30T23:00:00Z', to: '2026-12-01' }, 'Europe/Berlin')),
    ).toEqual(mustBeAfter);
    expect(windowInZone({ from: '2026-11-30T22:59:59Z', to: '2026-12-01' }, 'Europe/Berlin')).toEqual({
      from: '2026-11-30T22:59:59Z',
      to: '2026-11-30T23:00:00Z',
    });
  });

  it('refuses a day that begins before year 1 in UTC (422 naming the field)', () => {
    expect(refusal(() => windowInZone({ from: '0001-01-01' }, 'Asia/Tokyo'))).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'from: the day begins outside the years 1 to 9999 in UTC',
    });
    // The last day begins within year 9999 in every zone (the west's are hours behind).
    expect(windowInZone({ to: '9999-12-31' }, 'Pacific/Pago_Pago')).toEqual({ to: '9999-12-31T11:00:00Z' });
    expect(windowInZone({ from: '0001-01-01' }, 'UTC')).toEqual({ from: '0001-01-01T00:00:00Z' });
  });

  it('tells whether the tenant’s zone is needed at all', () => {
    expect(namesDay({ from: '2026-12-01T00:00:00Z' })).toBe(false);
    expect(namesDay({ from: '2026-12-01T00:00:00Z', to: '2026-12-02' })).toBe(true);
    expect(namesDay({})).toBe(false);
  });
});
