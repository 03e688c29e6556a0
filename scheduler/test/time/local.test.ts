import { describe, expect, it } from 'vitest';
import { lastLocalDay, localDate, wallClockWithOffset } from '../../src/time/local.ts';

/** How instants read in a tenant's zone: wall-clock times with their offset, and calendar days. */
describe('wallClockWithOffset', () => {
  it('writes an instant as the zone’s wall-clock time to the minute, with the offset in force', () => {
    expect(wallClockWithOffset('2030-07-02T09:50:00.000Z', 'Europe/Berlin')).toBe('2030-07-02 11:50 +02:00');
    expect(wallClockWithOffset('2030-01-02T09:50:59.999Z', 'Europe/Berlin')).toBe('2030-01-02 10:50 +01:00');
    expect(wallClockWithOffset('2030-07-02T09:50:00.000Z', 'UTC')).toBe('2030-07-02 09:50 +00:00');
    expect(wallClockWithOffset('2030-07-02T23:30:00.000Z', 'America/New_York')).toBe(
      '2030-07-02 19:30 -04:00',
    );
    expect(wallClockWithOffset('2030-07-02T23:30:00.000Z', 'Asia/Kolkata')).toBe('2030-07-03 05:00 +05:30');
  });

  it('tells the repeated autumn hour apart, and follows the spring gap', () => {
    // Berlin falls back at 03:00 CEST on 31 October 2027: 00:30Z and 01:30Z are both 02:30.
    expect(wallClockWithOffset('2027-10-31T00:30:00Z', 'Europe/Berlin')).toBe('2027-10-31 02:30 +02:00');
    expect(wallClockWithOffset('2027-10-31T01:30:00Z', 'Europe/Berlin')).toBe('2027-10-31 02:30 +01:00');
    // New York falls back at 02:00 EDT on 7 November 2027: 05:30Z and 06:30Z are both 01:30.
    expect(wallClockWithOffset('2027-11-07T05:30:00Z', 'America/New_York')).toBe('2027-11-07 01:30 -04:00');
    expect(wallClockWithOffset('2027-11-07T06:30:00Z', 'America/New_York')).toBe('2027-11-07 01:30 -05:00');
    // Spring forward on 31 March 2030: 01:00Z is 03:00 CEST, no 02:xx.
    expect(wallClockWithOffset('2030-03-31T00:59:00Z', 'Europe/Berlin')).toBe('2030-03-31 01:59 +01:00');
    expect(wallClockWithOffset('2030-03-31T01:00:00Z', 'Europe/Berlin')).toBe('2030-03-31 03:00 +02:00');
  });

  it('reads back as the instant it stands for, to the minute', () => {
    for (const [instant, zone] of [
      ['2027-10-31T00:30:00Z', 'Europe/Berlin'],
      ['2027-10-31T01:30:00Z', 'Europe/Berlin'],
      ['2027-03-14T07:30:00Z', 'America/New_York'],
      ['2027-04-03T15:45:00Z', 'Australia/Lord_Howe'],
    ] as const) {
      const cell = wallClockWithOffset(instant, zone);
      expect(new Date(cell.replace(' ', 'T').replace(' ', '')).toISOString(), cell).toBe(
        new Date(instant).toISOString(),
      );
    }
  });
});

describe('localDate and lastLocalDay', () => {
  it('reads the day of an instant, and of the last instant before an exclusive end', () => {
    expect(localDate('2030-07-31T23:00:00.000Z', 'UTC')).toBe('2030-07-31');
    expect(localDate('2030-07-31T23:00:00.000Z', 'Europe/Berlin')).toBe('2030-08-01');
    // Ending at a local midnight reaches the day before, not the day it names.
    expect(lastLocalDay('2030-07-31T22:00:00.000Z', 'Europe/Berlin').toString()).toBe('2030-07-31');
    // A nanosecond past midnight is inside the next day: no millisecond is dropped.
    expect(lastLocalDay('2030-07-31T22:00:00.000000001Z', 'Europe/Berlin').toString()).toBe('2030-08-01');
  });
});
