import { describe, expect, it } from 'vitest';
import { addDays, dateIn, formatter, startOfDay } from '../../src/i18n/format.ts';

describe('dates in the tenant’s time zone', () => {
  it('names the calendar day an instant falls on there, not in UTC', () => {
    const instant = new Date('2026-12-01T23:30:00Z');
    expect(dateIn('UTC', instant)).toBe('2026-12-01');
    expect(dateIn('Europe/Berlin', instant)).toBe('2026-12-02');
    expect(dateIn('America/Los_Angeles', instant)).toBe('2026-12-01');
  });

  it('adds calendar days across months and years', () => {
    expect(addDays('2026-12-25', 14)).toBe('2027-01-08');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
  });

  it('starts a day at its local midnight, on both sides of a clock change', () => {
    expect(startOfDay('Europe/Berlin', '2026-12-01')).toBe('2026-11-30T23:00:00.000Z');
    expect(startOfDay('Europe/Berlin', '2026-07-01')).toBe('2026-06-30T22:00:00.000Z');
    // The days of the changes themselves: 23 and 25 hours long.
    expect(startOfDay('Europe/Berlin', '2026-03-29')).toBe('2026-03-28T23:00:00.000Z');
    expect(startOfDay('Europe/Berlin', '2026-03-30')).toBe('2026-03-29T22:00:00.000Z');
    expect(startOfDay('Europe/Berlin', '2026-10-25')).toBe('2026-10-24T22:00:00.000Z');
    expect(startOfDay('Europe/Berlin', '2026-10-26')).toBe('2026-10-25T23:00:00.000Z');
    expect(startOfDay('Asia/Kolkata', '2026-12-01')).toBe('2026-11-30T18:30:00.000Z');
  });

  it('starts a day whose midnight does not exist at its first hour', () => {
    // Santiago moves its clocks from 00:00 to 01:00 on the first Sunday of September.
    expect(startOfDay('America/Santiago', '2026-09-06')).toBe('2026-09-06T04:00:00.000Z');
  });
});

describe('formatter', () => {
  it('writes a shift once, and an overnight shift with both days', () => {
    const en = formatter('en-GB', 'Europe/Berlin');
    const day = en.range('2026-12-04T07:00:00Z', '2026-12-04T13:00:00Z');
    expect(day).toMatch(/Fri.*4.*Dec.*08:00.*14:00/);
    expect(day.match(/Dec/g)).toHaveLength(1);
    const night = en.range('2026-12-04T21:00:00Z', '2026-12-05T05:00:00Z');
    expect(night).toMatch(/Fri.*4.*22:00.*Sat.*5.*06:00/);
  });

  it('speaks German in German', () => {
    const de = formatter('de', 'Europe/Berlin');
    expect(de.range('2026-12-04T07:00:00Z', '2026-12-04T13:00:00Z')).toMatch(/Fr.*4.*Dez.*08:00.*14:00/);
  });

  it('writes a day and a moment in the tenant’s zone', () => {
    const en = formatter('en-GB', 'Europe/Berlin');
    // 23:30 UTC is already Saturday in Berlin.
    expect(en.day('2026-12-04T23:30:00Z')).toBe('Sat 5 Dec');
    expect(en.dateTime('2026-12-04T07:00:00Z')).toBe('Fri 4 Dec, 08:00');
    expect(en.dateTime(new Date('2026-12-04T07:00:00Z'))).toBe('Fri 4 Dec, 08:00');
  });

  it('writes durations in hours and minutes, negative with a sign', () => {
    expect(formatter('en', 'UTC').minutes(0)).toBe('0 min');
    const en = formatter('en', 'UTC');
    expect(en.minutes(150)).toBe('2 hr 30 min');
    expect(en.minutes(45)).toBe('45 min');
    expect(en.minutes(120)).toBe('2 hr');
    expect(en.minutes(-90)).toBe('−1 hr 30 min');
    expect(formatter('de', 'UTC').minutes(150)).toBe('2 Std. 30 Min.');
  });
});
