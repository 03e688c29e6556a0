import { describe, expect, it } from 'vitest';
import { int8ToNumber, timestamptzToWire, uuidToWire } from '../../src/db/wire-types.ts';

describe('wire forms of database values', () => {
  it('turns uuids into 32 lowercase hex digits', () => {
    expect(uuidToWire('3f2504e0-4f89-41d3-9a0c-0305e82c3301')).toBe('3f2504e04f8941d39a0c0305e82c3301');
  });

  it.each([
    ['2026-11-21 23:32:42.908123+00', '2026-11-21T23:32:42.908Z'],
    ['2026-11-21 23:32:42.9+00', '2026-11-21T23:32:42.900Z'],
    ['2026-11-21 23:32:42+00', '2026-11-21T23:32:42.000Z'],
    ['2026-11-22 01:02:03.5+01', '2026-11-22T00:02:03.500Z'],
    ['2026-11-21 20:02:03+05:30', '2026-11-21T14:32:03.000Z'],
  ])('turns timestamptz %s into RFC 3339 UTC %s', (text, wire) => {
    expect(timestamptzToWire(text)).toBe(wire);
  });

  it('reads int8 as a number', () => {
    expect(int8ToNumber('-1234567890123')).toBe(-1234567890123);
  });
});
