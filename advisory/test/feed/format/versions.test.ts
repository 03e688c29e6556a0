import { describe, expect, it } from 'vitest';
import { inRange, parseRange, parseVersion } from '../../../src/feed/format/versions.ts';

const version = (text: string) => parseVersion(text)?.version ?? null;

describe('product versions', () => {
  it.each([
    ['1.2.3', '1.2.3'],
    ['16.6', '16.6.0'],
    ['12', '12.0.0'],
    ['1.2.3.4', '1.2.3'],
    [' 1.2 ', '1.2.0'],
    ['8.1.2-1ubuntu2.14', '8.1.2'],
    ['8.4-1', '8.4.0'],
    ['1.2+build.5', '1.2.0'],
    ['1.2~rc1', '1.2.0'],
    ['1.2-', '1.2.0'],
    // The styles the sample feed's products report themselves in.
    ['8.2.4', '8.2.4'],
    ['29.0.3', '29.0.3'],
    ['29.0.3.2', '29.0.3'],
    ['16.4', '16.4.0'],
    ['10.11.8', '10.11.8'],
    ['10.11.8-MariaDB-0+deb12u1', '10.11.8'],
    ['12.7', '12.7.0'],
    ['9.0-3', '9.0.0'],
    ['7.4-3', '7.4.0'],
  ])('%s reads as %s', (text, expected) => {
    expect(version(text)).toBe(expected);
  });

  it.each([
    [''],
    ['   '],
    ['unknown'],
    ['v1.2.3'],
    ['x1.2'],
    ['1.2.3x'],
    ['1.2.3.4.5'],
    ['1..2'],
    ['1.'],
    ['.1'],
    ['1.2-a b'],
    ['1.2_3'],
    ['1.2-beta!'],
    // Shown as it is, never guessed at.
    ['16.4 (Debian 16.4-1.pgdg120+2)'],
    ['latest'],
  ])('%j is not a version', (text) => {
    expect(parseVersion(text)).toBeNull();
  });
});

describe('version ranges', () => {
  it('parses npm semver ranges', () => {
    expect(parseRange('>=16.0.0 <16.15.0')?.range).toBe('>=16.0.0 <16.15.0');
    expect(parseRange('16.x')?.range).toBe('>=16.0.0 <17.0.0-0');
  });

  it('refuses an empty range (semver would read it as "anything") and invalid ones', () => {
    expect(parseRange('')).toBeNull();
    expect(parseRange('   ')).toBeNull();
    expect(parseRange('>>1.0')).toBeNull();
    expect(parseRange('not a range')).toBeNull();
  });

  it('parses each distinct text once', () => {
    const first = parseRange('>=3.1.0 <3.9.0');
    expect(parseRange('<3.2.0')).not.toBe(first);
    expect(parseRange('>=3.1.0 <3.9.0')).toBe(first);
    expect(parseRange('>>3')).toBeNull();
    expect(parseRange('>>3')).toBeNull();
  });

  it('keeps at most 10,001 parsed ranges, then starts afresh', () => {
    let n = 0;
    const fresh = () => {
      n += 1;
      parseRange(`<=${n}.0.0`);
    };
    // Whatever earlier tests left behind: parse new ranges until the cache starts afresh.
    let probe = parseRange('>=7.7.7');
    for (let i = 0; i <= 10_002 && parseRange('>=7.7.7') === probe; i++) fresh();
    const after = parseRange('>=7.7.7');
    expect(after).not.toBe(probe);
    // Now it holds the range that was being added and the probe: 9,999 more fit.
    probe = after;
    for (let i = 0; i < 9_999; i++) fresh();
    expect(parseRange('>=7.7.7')).toBe(probe);
    fresh();
    expect(parseRange('>=7.7.7')).not.toBe(probe);
  });

  it('a version is in a range only when both parse and the range contains it', () => {
    expect(inRange('1.5', '<2')).toBe(true);
    expect(inRange('2.0', '<2')).toBe(false);
    expect(inRange('8.1.2-1ubuntu2.14', '<8.2.0')).toBe(true);
    expect(inRange('unknown', '<2')).toBe(false);
    expect(inRange('unknown', '*')).toBe(false);
    expect(inRange('1.0', '>>1')).toBe(false);
    expect(inRange('1.0', '')).toBe(false);
  });
});
