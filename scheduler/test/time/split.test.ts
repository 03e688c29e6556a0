import { describe, expect, it } from 'vitest';
import { splitBoundaries } from '../../src/time/split.ts';

describe('splitBoundaries', () => {
  it.each([
    [2, ['10:00', '11:00', '12:00']],
    [3, ['10:00', '10:40', '11:20', '12:00']],
    [7, ['10:00', '10:17', '10:34', '10:51', '11:08', '11:25', '11:42', '12:00']],
  ])(
    'cuts 120 minutes into %i pieces equal to the minute, the later ones taking the remainder',
    (n, times) => {
      const boundaries = splitBoundaries('2030-07-02T10:00:00.000Z', '2030-07-02T12:00:00.000Z', n);
      expect(boundaries?.map((b) => b.slice(11, 16))).toEqual(times);
    },
  );

  it('refuses pieces shorter than a minute', () => {
    expect(splitBoundaries('2030-07-02T10:00:00Z', '2030-07-02T10:02:00Z', 3)).toBeNull();
    expect(splitBoundaries('2030-07-02T10:00:00Z', '2030-07-02T10:03:00Z', 3)).toHaveLength(4);
  });
});
