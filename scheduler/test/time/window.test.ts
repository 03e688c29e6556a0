import { describe, expect, it } from 'vitest';
import { checkFilterWindow, checkShiftWindow, checkWindow } from '../../src/time/window.ts';

/**
 * Windows are judged on the instants as the database keeps them: to the microsecond,
 * the digits past it rounded, not cut to the millisecond as `Date` would.
 */
describe('checkFilterWindow', () => {
  it.each([
    ['a window under a millisecond', '2030-07-02T10:00:00.0001Z', '2030-07-02T10:00:00.0009Z'],
    ['one microsecond', '2030-07-02T10:00:00.000001Z', '2030-07-02T10:00:00.000002Z'],
    ['an offset', '2030-07-02T12:00:00.0001+02:00', '2030-07-02T10:00:00.0002Z'],
    ['either end open', undefined, '2030-07-02T10:00:00Z'],
  ])('takes %s', (_why, from, to) => {
    expect(() => checkFilterWindow(from, to)).not.toThrow();
  });

  it.each([
    ['equal ends', '2030-07-02T10:00:00.0001Z', '2030-07-02T10:00:00.000100000Z'],
    ['the end first', '2030-07-02T10:00:00.0009Z', '2030-07-02T10:00:00.0001Z'],
    ['ends one rounded microsecond', '2030-07-02T10:00:00.0000001Z', '2030-07-02T10:00:00.0000004Z'],
  ])('refuses %s', (_why, from, to) => {
    expect(() => checkFilterWindow(from, to)).toThrow('must be after from');
  });
});

describe('checkWindow and checkShiftWindow', () => {
  it('take a body window under a millisecond', () => {
    expect(() => checkWindow('2030-07-02T10:00:00.0001Z', '2030-07-02T10:00:00.0009Z')).not.toThrow();
    expect(() => checkShiftWindow('2030-07-02T10:00:00.0001Z', '2030-07-02T10:00:00.0009Z')).not.toThrow();
  });

  it('refuse one that the database would store empty', () => {
    expect(() => checkWindow('2030-07-02T10:00:00.0000001Z', '2030-07-02T10:00:00.0000002Z')).toThrow(
      'must be after starts_at',
    );
  });

  it('bound a shift to 7 days to the microsecond', () => {
    expect(() => checkShiftWindow('2030-07-02T10:00:00Z', '2030-07-09T10:00:00Z')).not.toThrow();
    expect(() => checkShiftWindow('2030-07-02T10:00:00Z', '2030-07-09T10:00:00.000001Z')).toThrow(
      'a shift lasts at most 7 days',
    );
  });
});
