import { describe, expect, it } from 'vitest';
import { newId, parseId } from '../src/ids.ts';

describe('ids', () => {
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
