import { describe, expect, it } from 'vitest';
import { lastLocalDay, localDate, wallClock } from '../../src/time/local.ts';

/** How instants read in a tenant's zone: wall-clock times and calendar days. */
describe('wallClock', () => {
  it('writes an instant as the zone’s wall-clock time to the minute', () => {
    expect(wallClock('2030-07-02T09:50:00.000Z', 'Europe/Berlin')).toBe('2030-07-02 11:50');
    expect(wallClock('2030-01-02T09:50:59.999Z', 'Europe/Berlin')).toBe('2030-01-02 10:50');
    expect(wallClock('2030-07-02T09:50:00.000Z', 'UTC')).toBe('2030-07-02 09:50');
    expect(wallClock('2030-07-02T23:30:00.000Z', 'America/New_York')).toBe('2030-07-02 19:30');
    expect(wallClock('2030-07-02T23:30:00.000Z', 'Asia/Kolkata')).toBe('2030-07-03 05:00');
  });

  it('follows daylight saving: the repeated autumn hour reads alike twice', () => {
    // Berlin falls back at 03:00 CEST on 27 October 2030: 00:30Z and 01:30Z are both 02:30.
    expect(wallClock('2030-10-27T00:30:00Z', 'Europe/Berlin')).toBe('2030-10-27 02:30');
    expect(wallClock('2030-10-27T01:30:00Z', 'Europe/Berlin')).toBe('2030-10-27 02:30');
    // Spring forward on 31 March 2030: 01:00Z is 03:00 CEST, no 02:xx.
    expect(wallClock('2030-03-31T01:00:00Z', 'Europe/Berlin')).toBe('2030-03-31 03:00');
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
