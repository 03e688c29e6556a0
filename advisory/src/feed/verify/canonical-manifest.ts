/**
 * A fast path for reading a manifest exactly as `advisory-feed build` writes it: one
 * regular expression per line instead of a general YAML parser, about ten times faster on
 * a feed of 20,000 files (the YAML parser was the largest single cost of verifying one).
 *
 * It accepts only a narrow, unambiguous subset of YAML: the four dates and versions as
 * double-quoted strings of printable ASCII without `"` or `\` (so the text is the value),
 * module names as lowercase plain keys that cannot read as anything but a string, each
 * file as `path`, `sha256`, `size` in that order, no blank lines, no flow style, no
 * anchors, no duplicate keys, comments (printable ASCII) only before the first key. For such a text it
 * returns what the hardened YAML parser (storage/yaml.ts) returns; for anything else it
 * returns null and the caller parses with that parser, which also gives the errors. The
 * result is checked against the manifest schema like any other.
 */
// Sticky expressions, each matching whole lines from `lastIndex` on.
const COMMENT = /#[ -~]*\n/y;
const SCALAR = /(schema_version|feed_version|published_at|expires_at): "([ !#-[\]-~]*)"\n/y;
const MODULES = /modules:\n/y;
const MODULE = / {2}([a-z][a-z0-9-]{0,62}):\n {4}files:\n/y;
const FILE = / {6}- path: "([ !#-[\]-~]*)"\n {8}sha256: "([0-9a-f]{64})"\n {8}size: (0|[1-9][0-9]{0,14})\n/y;
/** Plain keys the core schema reads as something else (null, booleans): left to the parser. */
const NOT_STRINGS = new Set(['null', 'true', 'false']);

interface FileEntry {
  path: string;
  sha256: string;
  size: number;
}

/** Matches `pattern` at `at`; null when it does not match there. */
function at(pattern: RegExp, text: string, position: number): RegExpExecArray | null {
  pattern.lastIndex = position;
  return pattern.exec(text);
}

export function parseCanonicalManifest(text: string): Record<string, unknown> | null {
  const manifest: Record<string, unknown> = {};
  let position = 0;
  for (let comment = at(COMMENT, text, 0); comment; comment = at(COMMENT, text, position))
    position += comment[0].length;
  while (position < text.length) {
    const scalar = at(SCALAR, text, position);
    if (scalar) {
      const key = scalar[1] as string;
      if (Object.hasOwn(manifest, key)) return null;
      manifest[key] = scalar[2];
      position += scalar[0].length;
      continue;
    }
    const modulesLine = at(MODULES, text, position);
    if (!modulesLine || Object.hasOwn(manifest, 'modules')) return null;
    position += modulesLine[0].length;
    const modules: Record<string, { files: FileEntry[] }> = {};
    manifest.modules = modules;
    for (let module = at(MODULE, text, position); module; module = at(MODULE, text, position)) {
      const name = module[1] as string;
      if (NOT_STRINGS.has(name) || Object.hasOwn(modules, name)) return null;
      position += module[0].length;
      const files: FileEntry[] = [];
      for (let file = at(FILE, text, position); file; file = at(FILE, text, position)) {
        files.push({ path: file[1] as string, sha256: file[2] as string, size: Number(file[3]) });
        position += file[0].length;
      }
      // `files:` with no entries is null in YAML, not an empty list: the parser says so.
      if (files.length === 0) return null;
      modules[name] = { files };
    }
    if (Object.keys(modules).length === 0) return null;
  }
  // An empty document (or comments only) is no mapping at all: the parser says so.
  return Object.keys(manifest).length > 0 ? manifest : null;
}
