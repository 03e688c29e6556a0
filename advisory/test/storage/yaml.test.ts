import { describe, expect, it } from 'vitest';
import { MAX_YAML_BYTES, parseYaml, YamlError } from '../../src/storage/yaml.ts';

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

describe('hardened YAML: exact errors', () => {
  function yamlError(
    text: string,
    maxBytes?: number,
  ): { name: string; message: string; line: number | null } {
    try {
      parseYaml(text, maxBytes);
    } catch (error) {
      expect(error).toBeInstanceOf(YamlError);
      const { name, message, line } = error as YamlError;
      return { name, message, line };
    }
    throw new Error('expected a YamlError');
  }

  it.each([
    ['an anchor on a scalar', 'a: 1\nb: &x 2\n', 'anchors and aliases are not allowed (&x)', 2],
    ['an anchor on a flow list', 'a: 1\nb: &q [1, 2]\n', 'anchors and aliases are not allowed (&q)', 2],
    ['an alias', 'a: 1\nb: *x\n', 'unidentified alias "x"', 2],
    ['duplicate keys', 'a: 1\nb: 2\na: 3\n', 'duplicated mapping key', 3],
    ['a custom tag', 'a: 1\nb: !exec "rm -rf"\n', 'unknown tag !<!exec>', 2],
    ['a binary tag', 'a: !!binary aGVsbG8=\n', 'unknown tag !<tag:yaml.org,2002:binary>', 1],
    ['a syntax error', 'a: 1\nb: [unclosed\n', 'unexpected end of the stream within a flow collection', 3],
  ])('%s: the reason and its line', (_label, text, message, line) => {
    expect(yamlError(text)).toEqual({ name: 'YamlError', message, line });
  });

  it('an anchored block mapping or list is reported inside it, not at a later field', () => {
    expect(yamlError('a: 1\nbase: &b\n  x: 1\n  y: 2\nnext: 3\n')).toMatchObject({
      message: 'anchors and aliases are not allowed (&b)',
      line: 3,
    });
    expect(yamlError('list: &l\n  - 1\n  - 2\nnext: 3\n').line).toBe(2);
  });

  it('the size cap counts UTF-8 bytes, and a document at the cap is read', () => {
    expect(parseYaml('a: 1\n', 5)).toEqual({ a: 1 });
    expect(yamlError('a: 1\n', 4)).toEqual({
      name: 'YamlError',
      message: 'document larger than 4 bytes',
      line: null,
    });
    expect(parseYaml('a: é\n', 6)).toEqual({ a: 'é' });
    expect(yamlError('a: é\n', 5).message).toBe('document larger than 5 bytes');
  });

  it('the default cap is 1 MiB', () => {
    expect(MAX_YAML_BYTES).toBe(1024 * 1024);
    expect(yamlError(`a: "${'x'.repeat(1024 * 1024)}"\n`).message).toBe('document larger than 1048576 bytes');
  });
});
