import { describe, expect, it } from 'vitest';
import { parseYaml, YamlError } from '../src/feed/yaml.ts';

describe('hardened YAML', () => {
  it('parses plain block YAML with the core schema (dates stay strings)', () => {
    expect(parseYaml('a: 1\nb: 2026-01-01\nc: [x, y]\nd: true\n')).toEqual({
      a: 1,
      b: '2026-01-01',
      c: ['x', 'y'],
      d: true,
    });
  });

  it.each([
    ['an anchor', 'a: &x 1\n'],
    ['an alias to an undefined anchor', 'a: *x\n'],
    ['the billion-laughs bomb', 'a: &a [x,x,x]\nb: &b [*a,*a,*a]\nc: [*b,*b,*b]\n'],
    ['duplicate keys', 'a: 1\na: 2\n'],
    ['a custom tag', 'a: !exec "rm -rf"\n'],
    ['a binary tag', 'a: !!binary aGVsbG8=\n'],
  ])('refuses %s', (_label, text) => {
    expect(() => parseYaml(text)).toThrow(YamlError);
  });

  it('refuses a document above the size cap before parsing it', () => {
    expect(() => parseYaml(`a: "${'x'.repeat(2000)}"\n`, 1000)).toThrow(/larger than 1000 bytes/);
  });

  it('reports the line of a syntax error', () => {
    try {
      parseYaml('a: 1\nb: [unclosed\nc: 3\n');
      throw new Error('expected a YamlError');
    } catch (error) {
      expect(error).toBeInstanceOf(YamlError);
      expect((error as YamlError).line).toBeGreaterThanOrEqual(2);
    }
  });
});
