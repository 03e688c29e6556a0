import { describe, expect, it } from 'vitest';
import { isInstant } from '../../src/time/instant.ts';

/** The one reading of `date-time` every request field gets (time/instant.ts). */
describe('isInstant', () => {
  it.each([
    '2030-07-02T10:00:00Z',
    '2030-07-02t10:00:00z',
    '2030-07-02T10:00:00.123456789+02:00',
    '2028-02-29T23:59:59-15:59',
    '2030-07-02T10:00:00+15:59',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '0001-01-01T23:00:00-01:00',
  ])('accepts %s', (text) => {
    expect(isInstant(text)).toBe(true);
  });

  it.each([
    ['a leap second', '2030-06-30T23:59:60Z'],
    ['year 0', '0000-01-01T00:00:00Z'],
    ['year 0 once in UTC', '0001-01-01T00:30:00+01:00'],
    ['year 10000 once in UTC', '9999-12-31T23:00:00-15:59'],
    // RFC 3339 allows offsets to ±23:59; PostgreSQL reads none past ±15:59.
    ['an offset of +16:00', '2030-07-02T10:00:00+16:00'],
    ['an offset of -16:00', '2030-07-02T10:00:00-16:00'],
    ['an offset of +23:59', '2030-07-02T10:00:00+23:59'],
    ['an offset of -23:59', '2028-02-29T23:59:59-23:59'],
    ['a space for T', '2030-07-02 10:00:00Z'],
    ['no offset', '2030-07-02T10:00:00'],
    ['an offset without colon', '2030-07-02T10:00:00+0200'],
    ['no seconds', '2030-07-02T10:00Z'],
    ['February 30', '2030-02-30T10:00:00Z'],
    ['February 29 of a common year', '2029-02-29T10:00:00Z'],
    ['1900 was not a leap year', '1900-02-29T10:00:00Z'],
    ['month 13', '2030-13-01T10:00:00Z'],
    ['month 0', '2030-00-01T10:00:00Z'],
    ['day 0', '2030-01-00T10:00:00Z'],
    ['day 32', '2030-01-32T10:00:00Z'],
    ['hour 24', '2030-07-02T24:00:00Z'],
    ['minute 60', '2030-07-02T10:60:00Z'],
    ['offset hour 24', '2030-07-02T10:00:00+24:00'],
    ['offset minute 60', '2030-07-02T10:00:00+01:60'],
    ['ten fraction digits', '2030-07-02T10:00:00.1234567890Z'],
    ['a date alone', '2030-07-02'],
    ['trailing text', '2030-07-02T10:00:00Z '],
  ])('refuses %s', (_why, text) => {
    expect(isInstant(text)).toBe(false);
  });
});
