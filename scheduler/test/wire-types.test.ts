import { describe, expect, it } from 'vitest';
import { int8ToNumber, timestamptzToWire, uuidToWire } from '../src/db/wire-types.ts';
import { newId, parseId } from '../src/ids.ts';

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

  it('parses path ids in both spellings and refuses anything else', () => {
    expect(parseId('3F2504E0-4F89-41D3-9A0C-0305E82C3301')).toBe('3f2504e04f8941d39a0c0305e82c3301');
    expect(parseId('3f2504e04f8941d39a0c0305e82c3301')).toBe('3f2504e04f8941d39a0c0305e82c3301');
    for (const bad of [
      '',
      'x',
      '3f2504e04f8941d39a0c0305e82c330',
      '3f2504e0-4f8941d3-9a0c-0305e82c3301',
      'g'.repeat(32),
    ]) {
      expect(parseId(bad)).toBeNull();
    }
  });

  it('makes new ids as time-ordered UUIDv7 in wire form', () => {
    const first = newId();
    const second = newId();
    expect(first).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(second > first || second.slice(0, 12) === first.slice(0, 12)).toBe(true);
  });
});
