import { describe, expect, it } from 'vitest';
import { applianceZone, instant, localTime } from '../../../src/dashboard/views/time.ts';

/** Instants in the appliance's zone, to the minute, with the zone's name. */
describe('localTime', () => {
  it('shows an instant in the zone given, with its short name or its offset', () => {
    const at = '2026-11-29T13:05:42.123Z';
    expect(localTime(at, 'Europe/Berlin')).toBe('2026-11-29 14:05 CET');
    expect(localTime('2026-07-01T12:00:00Z', 'Europe/Berlin')).toBe('2026-07-01 14:00 CEST');
    expect(localTime(at, 'UTC')).toBe('2026-11-29 13:05 UTC');
    expect(localTime(at, 'Europe/London')).toBe('2026-11-29 13:05 GMT');
    expect(localTime(at, 'America/New_York')).toBe('2026-11-29 08:05 GMT-5');
    expect(localTime(at, 'Asia/Kolkata')).toBe('2026-11-29 18:35 GMT+5:30');
    // The date moves with the zone, midnight is 00 (never 24).
    expect(localTime(at, 'Australia/Sydney')).toBe('2026-11-30 00:05 GMT+11');
    expect(localTime('2026-11-29T23:00:00Z', 'Europe/Berlin')).toBe('2026-11-30 00:00 CET');
  });

  it('reads an instant written with an offset as the same instant', () => {
    expect(localTime('2026-11-29T14:05:00+01:00', 'UTC')).toBe('2026-11-29 13:05 UTC');
  });

  it('gives back text that is not an instant as it is', () => {
    expect(localTime('now', 'UTC')).toBe('now');
    expect(localTime('', 'UTC')).toBe('');
  });

  it("uses the appliance's zone unless told", () => {
    const at = '2026-11-29T13:05:00Z';
    expect(localTime(at)).toBe(localTime(at, applianceZone()));
    expect(applianceZone()).toBe(new Intl.DateTimeFormat().resolvedOptions().timeZone);
  });
});

describe('instant', () => {
  it('keeps the ISO text and adds the local time; null stays null', () => {
    expect(instant('2026-11-29T13:05:00.000Z', 'Europe/Berlin')).toEqual({
      iso: '2026-11-29T13:05:00.000Z',
      local: '2026-11-29 14:05 CET',
    });
    expect(instant(null)).toBeNull();
    expect(instant(undefined)).toBeNull();
  });
});
