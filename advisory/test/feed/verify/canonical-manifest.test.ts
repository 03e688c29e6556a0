import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE } from '../../../src/feed/format/rules.ts';
import { parseCanonicalManifest } from '../../../src/feed/verify/canonical-manifest.ts';
import { parseYaml } from '../../../src/storage/yaml.ts';
import { advisoryYaml, makeFeed } from '../../support/feed.ts';

/**
 * The manifest fast path (feed/verify/canonical-manifest.ts) must never read a text
 * differently from the hardened YAML parser: it returns the same value, or null (and the
 * parser then reads it).
 */
const built = readFileSync(
  path.join(
    makeFeed({
      'widgets/one.yaml': advisoryYaml({ id: 'W-1' }),
      'widgets/two.yaml': advisoryYaml({ id: 'W-2' }),
      'gadgets/three.yaml': advisoryYaml({ id: 'G-3', product: 'gadget' }),
    }).dir,
    MANIFEST_FILE,
  ),
  'utf8',
);

/** What the YAML parser reads, or undefined when it refuses the text. */
function yamlValue(text: string): unknown {
  try {
    return parseYaml(text, 1024 * 1024);
  } catch {
    return undefined;
  }
}

describe('the canonical manifest fast path', () => {
  it('reads a manifest as build writes it exactly as the YAML parser does', () => {
    const fast = parseCanonicalManifest(built);
    expect(fast).not.toBeNull();
    expect(fast).toEqual(yamlValue(built));
    expect(Object.keys((fast as { modules: object }).modules)).toEqual(['gadgets', 'widgets']);
  });

  it.each([
    ['Windows line ends', built.replaceAll('\n', '\r\n')],
    ['a trailing space', built.replace('modules:', 'modules: ')],
    ['no final newline', built.slice(0, -1)],
    ['a blank line', built.replace('modules:\n', '\nmodules:\n')],
    ['an unquoted version', built.replace(/feed_version: "([^"]+)"/, 'feed_version: $1')],
    ['an escape in a quoted path', built.replace('widgets/one.yaml', 'widgets/o\\x6ee.yaml')],
    ['a duplicate key', built.replace('modules:', 'schema_version: "2.0"\nmodules:')],
    ['a duplicate module', built.replace('  widgets:', '  gadgets:')],
    [
      'a second modules key',
      `${built}modules:\n  more:\n    files:\n      - path: "more/x.yaml"\n        sha256: "${'0'.repeat(64)}"\n        size: 1\n`,
    ],
    ['a module named null', built.replace('  widgets:', '  null:')],
    ['a module named like a number', built.replace('  widgets:', '  0x1f:')],
    ['a comment after the first key', built.replace('modules:', '# note\nmodules:')],
    ['an anchor', built.replace('  widgets:', '  widgets: &w')],
    [
      'files outside the modules',
      `${built}files:\n  - path: "README"\n    sha256: "${'0'.repeat(64)}"\n    size: 1\n`,
    ],
    ['an empty text', ''],
    ['comments only', '# nothing\n'],
  ])('leaves %s to the YAML parser', (_name, text) => {
    expect(parseCanonicalManifest(text)).toBeNull();
  });

  it('never reads an edited manifest differently from the YAML parser', () => {
    const printable = fc.oneof(
      fc.constantFrom('"', '\\', ' ', '\n', '\r', '\t', ':', '-', '#', '&', '*', '0', 'x', '\u00e9'),
      fc.string({ minLength: 1, maxLength: 3 }),
    );
    // Edits the fast path reads too (most it hands over): counted, so the comparison is
    // known to have run on a good share of them, not on a handful.
    let compared = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(built.length), fc.nat(4), printable), { minLength: 1, maxLength: 3 }),
        (edits) => {
          let text = built;
          for (const [at, cut, insert] of edits) {
            const position = at % (text.length + 1);
            text = text.slice(0, position) + insert + text.slice(position + cut);
          }
          const fast = parseCanonicalManifest(text);
          if (fast === null) return;
          compared += 1;
          expect(fast).toEqual(yamlValue(text));
        },
      ),
      { numRuns: 5000 },
    );
    expect(compared).toBeGreaterThan(200);
  });
});
