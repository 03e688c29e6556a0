import { describe, expect, it } from 'vitest';
import { balancesFileName, entriesFileName } from '../../src/time-tracking/payroll.ts';

/** How the payroll files name themselves, in the tenant's zone. */
describe('file names', () => {
  it('names an export by the local first and last day it covers (to is exclusive)', () => {
    const july = { from: '2030-06-30T22:00:00.000Z', to: '2030-07-31T22:00:00.000Z' };
    expect(entriesFileName(july, 'Europe/Berlin')).toBe('time-entries_2030-07-01_2030-07-31.csv');
    expect(entriesFileName(july, 'UTC')).toBe('time-entries_2030-06-30_2030-07-31.csv');
    expect(entriesFileName({ from: '2030-07-02T10:00:00.000Z', to: '2030-07-02T10:30:00.000Z' }, 'UTC')).toBe(
      'time-entries_2030-07-02_2030-07-02.csv',
    );
    // A tenth of a millisecond past midnight reaches into 1 August: no digit is dropped.
    expect(entriesFileName({ from: july.from, to: '2030-07-31T22:00:00.0001Z' }, 'Europe/Berlin')).toBe(
      'time-entries_2030-07-01_2030-08-01.csv',
    );
  });

  it('names the balances by today in the tenant’s zone', () => {
    expect(balancesFileName(new Date('2030-07-31T23:00:00Z'), 'Europe/Berlin')).toBe(
      'overtime-balances_2030-08-01.csv',
    );
  });
});
