import { buffer } from 'node:stream/consumers';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvStream } from '../../src/time-tracking/csv.ts';
import {
  balanceCells,
  balanceHeader,
  balancesFileName,
  decimalHours,
  entriesFileName,
  entryCells,
} from '../../src/time-tracking/payroll.ts';

describe('decimalHours', () => {
  it('writes minutes as hours to 2 places, with the mark given, the sign only where it shows', () => {
    const cases: [number, string][] = [
      [0, '0.00'],
      [1, '0.02'],
      [-1, '-0.02'],
      [15, '0.25'],
      [-15, '-0.25'],
      [20, '0.33'],
      [40, '0.67'],
      [375, '6.25'],
      [600, '10.00'],
      [-10_080, '-168.00'],
    ];
    expect(cases.map(([minutes]) => decimalHours(minutes, '.').text)).toEqual(cases.map(([, text]) => text));
    expect(decimalHours(-15, ',').text).toBe('-0,25');
  });
});

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

/** The cells of a file's rows: every time with the offset that makes it one instant. */
describe('cells', () => {
  const written = async (rows: Parameters<typeof csvStream>[0]) =>
    parse((await buffer(csvStream(rows))).toString('utf8'), { bom: true }) as string[][];

  it('writes when a balance last changed with its offset, the repeated hour of a fall-back night told apart', async () => {
    const row = {
      user_id: 'u',
      user_name: 'Ada',
      user_email: null,
      role: 'employee',
      credited_minutes: 20,
      paid_out_minutes: 0,
      balance_minutes: 20,
    };
    const [header, first, second, never] = await written([
      balanceHeader('Europe/Berlin'),
      balanceCells({ ...row, updated_at: '2027-10-31T00:30:00.000Z' }, 'Europe/Berlin'),
      balanceCells({ ...row, updated_at: '2027-10-31T01:30:00.000Z' }, 'Europe/Berlin'),
      balanceCells({ ...row, updated_at: null }, 'Europe/Berlin'),
    ]);
    expect(header?.[7]).toBe('updated_at (Europe/Berlin)');
    expect(first?.[7]).toBe('2027-10-31 02:30 +02:00');
    expect(second?.[7]).toBe('2027-10-31 02:30 +01:00');
    expect(never?.[7]).toBe('');
  });

  it('writes an entry’s start and end with their offsets, which differ across a change of offset', () => {
    const entry = {
      id: 'e',
      user_id: 'u',
      user_name: 'Ada',
      user_email: null,
      event_name: 'Night',
      shift_name: 'Bar',
      break_minutes: 0,
      worked_minutes: 60,
      scheduled_minutes: 60,
      overtime_minutes: 0,
    };
    expect(
      entryCells(
        { ...entry, started_at: '2027-11-07T05:30:00.000Z', ended_at: '2027-11-07T06:30:00.000Z' },
        'America/New_York',
      ).slice(5, 7),
    ).toEqual(['2027-11-07 01:30 -04:00', '2027-11-07 01:30 -05:00']);
  });
});
