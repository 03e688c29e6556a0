import { describe, expect, it } from 'vitest';
import { balancesFileName, entriesFileName, localDate, wallClock } from '../../src/time-tracking/payroll.ts';

/** How the payroll files write times and name themselves, in the tenant's zone. */
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

describe('file names', () => {
  it('names an export by the local first and last day it covers (to is exclusive)', () => {
    const july = { from: '2030-06-30T22:00:00.000Z', to: '2030-07-31T22:00:00.000Z' };
    expect(entriesFileName(july, 'Europe/Berlin')).toBe('time-entries_2030-07-01_2030-07-31.csv');
    expect(entriesFileName(july, 'UTC')).toBe('time-entries_2030-06-30_2030-07-31.csv');
    expect(entriesFileName({ from: '2030-07-02T10:00:00.000Z', to: '2030-07-02T10:30:00.000Z' }, 'UTC')).toBe(
      'time-entries_2030-07-02_2030-07-02.csv',
    );
  });

  it('names the balances by today in the tenant’s zone', () => {
    expect(balancesFileName(new Date('2030-07-31T23:00:00Z'), 'Europe/Berlin')).toBe(
      'overtime-balances_2030-08-01.csv',
    );
    expect(localDate('2030-07-31T23:00:00.000Z', 'UTC')).toBe('2030-07-31');
  });
});
