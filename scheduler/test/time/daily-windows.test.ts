import { describe, expect, it } from 'vitest';
import { dailyWindows } from '../../src/time/daily-windows.ts';

const window = (w: { startsAt: string; endsAt: string }) => [w.startsAt, w.endsAt];

describe('dailyWindows: one window per local day, through daylight-saving changes', () => {
  it('Europe/Berlin in March: a start inside the gap moves forward by the gap', () => {
    // 2030-03-31 02:00 CET jumps to 03:00 CEST.
    const windows = dailyWindows(
      '2030-03-29T23:00:00Z',
      '2030-04-01T22:00:00Z',
      'Europe/Berlin',
      '02:30',
      '10:00',
    );
    expect(windows.map((w) => [w.day, ...window(w)])).toEqual([
      ['2030-03-30', '2030-03-30T01:30:00Z', '2030-03-30T09:00:00Z'],
      ['2030-03-31', '2030-03-31T01:30:00Z', '2030-03-31T08:00:00Z'], // 03:30 CEST to 10:00 CEST
      ['2030-04-01', '2030-04-01T00:30:00Z', '2030-04-01T08:00:00Z'],
    ]);
  });

  it('Europe/Berlin in October: a repeated wall time is its first occurrence, and the night is 25 hours apart', () => {
    // 2030-10-27 03:00 CEST falls back to 02:00 CET.
    const windows = dailyWindows(
      '2030-10-25T22:00:00Z',
      '2030-10-27T23:00:00Z',
      'Europe/Berlin',
      '02:30',
      '02:30',
    );
    expect(windows.map(window)).toEqual([
      ['2030-10-26T00:30:00Z', '2030-10-27T00:30:00Z'], // 02:30 CEST to the first 02:30 (CEST)
      ['2030-10-27T00:30:00Z', '2030-10-28T01:30:00Z'], // first 02:30 to 02:30 CET: 25 hours
    ]);
  });

  it('leaves out a day whose window is empty once the gap is resolved', () => {
    const windows = dailyWindows(
      '2030-03-30T23:00:00Z',
      '2030-03-31T22:00:00Z',
      'Europe/Berlin',
      '02:30',
      '03:00',
    );
    expect(windows).toEqual([]);
  });

  it('America/New_York, with an overnight window across the November change', () => {
    // 2030-11-03 02:00 EDT falls back to 01:00 EST.
    const windows = dailyWindows(
      '2030-11-02T04:00:00Z',
      '2030-11-04T05:00:00Z',
      'America/New_York',
      '22:00',
      '06:00',
    );
    expect(windows.map(window)).toEqual([
      ['2030-11-03T02:00:00Z', '2030-11-03T11:00:00Z'], // 22:00 EDT to 06:00 EST: 9 hours
      ['2030-11-04T03:00:00Z', '2030-11-04T11:00:00Z'],
    ]);
  });

  it.each([
    ['Asia/Kolkata', '+05:30', '2030-01-01T03:30:00Z', '2030-01-01T11:30:00Z'],
    ['Pacific/Chatham', '+13:45', '2029-12-31T19:15:00Z', '2030-01-01T03:15:00Z'],
  ])('%s (%s in January) keeps its odd offset', (zone, _offset, startsAt, endsAt) => {
    // The event is the local calendar day 2030-01-01.
    const local = dailyWindows(
      startsAt.replace(/T.*/, 'T00:00:00Z'),
      '2030-01-01T12:00:00Z',
      zone,
      '09:00',
      '17:00',
    );
    expect(local.find((w) => w.day === '2030-01-01')).toEqual({ day: '2030-01-01', startsAt, endsAt });
  });

  it('counts the local days an event touches: ending at a local midnight does not reach into that day', () => {
    const days = (from: string, until: string) =>
      dailyWindows(from, until, 'Europe/Berlin', '09:00', '17:00').map((w) => w.day);
    expect(days('2030-07-01T22:00:00Z', '2030-07-02T22:00:00Z')).toEqual(['2030-07-02']);
    expect(days('2030-07-01T22:00:00Z', '2030-07-02T22:00:01Z')).toEqual(['2030-07-02', '2030-07-03']);
    expect(days('2030-07-02T21:59:59Z', '2030-07-02T22:00:00Z')).toEqual(['2030-07-02']);
  });

  it('makes 366 windows for a leap year in UTC', () => {
    const windows = dailyWindows('2028-01-01T00:00:00Z', '2029-01-01T00:00:00Z', 'UTC', '09:00', '17:00');
    expect(windows).toHaveLength(366);
    expect(windows.at(-1)?.day).toBe('2028-12-31');
  });
});
