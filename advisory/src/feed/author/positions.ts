import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';

/**
 * Where a field of an advisory file is, for findings: the `yaml` package parses the text
 * into nodes that keep their source ranges, and its LineCounter turns an offset into a
 * line. It is several times slower than js-yaml, which reads every file for its values
 * (build and verify of large feeds), so a file is parsed here only when a finding needs a
 * line, and at most once.
 */
export type LineOf = (field: string) => number;

interface Parsed {
  root: unknown;
  lines: LineCounter;
}

/** A lookup of lines in `text`, parsing it at its first use. */
export function lineLocator(text: string): LineOf {
  let parsed: Parsed | null = null;
  return (field) => {
    if (parsed === null) {
      const lines = new LineCounter();
      parsed = { root: parseDocument(text, { lineCounter: lines }).contents, lines };
    }
    return lineIn(parsed, field);
  };
}

/**
 * The line of a field such as `cves[1].id`: each step looks only inside the node found
 * before it, so a field that is not there is placed at the nearest enclosing one (line 1
 * for the whole document), never at a field of the same name elsewhere, such as in the
 * next list item. A key's line is that of the key, an item's that of its first character.
 */
function lineIn({ root, lines }: Parsed, field: string): number {
  let node: unknown = root;
  let offset: number | null = null;
  for (const token of field.match(/[^.[\]]+/g) ?? []) {
    if (isSeq(node) && /^\d+$/.test(token)) {
      const item: unknown = node.items[Number(token)];
      const range = (item as { range?: [number, number, number] } | undefined)?.range;
      if (!range) break;
      offset = range[0];
      node = item;
    } else if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === token);
      const range = isScalar(pair?.key) ? pair.key.range : undefined;
      if (!pair || !range) break;
      offset = range[0];
      node = pair.value;
    } else {
      break;
    }
  }
  return offset === null ? 1 : lines.linePos(offset).line;
}
