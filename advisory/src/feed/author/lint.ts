import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseYaml, YamlError } from '../../storage/yaml.ts';
import { parseInstant } from '../../time/instants.ts';
import { type AdvisoryRule, checkAdvisory } from '../format/advisory-rules.ts';
import type { Advisory } from '../format/schema.ts';
import { scanFeed } from './layout.ts';

/** One authoring mistake, located for the author. */
export interface Finding {
  severity: 'error' | 'warning';
  rule:
    | AdvisoryRule
    | 'yaml'
    | 'expired'
    | 'duplicate-id'
    | 'unknown-product'
    | 'empty-feed'
    | 'layout'
    | 'manifest';
  file: string;
  line: number;
  message: string;
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/** Where a line's content starts, past a list item's dash (`  - id:` and `    id:` are 4). */
const columnOf = (line: string) => line.length - line.replace(/^\s*(?:-\s+)?/, '').length;

/** Not blank and not a comment. */
const isContent = (line: string) => !/^\s*(#|$)/.test(line);

/**
 * Where the block of a node whose line starts at `column` ends (exclusive): at the first
 * later content line indented no further than that, except list items at the very column
 * of a key (a key's list may be written at the key's own indentation).
 */
function blockEnd(lines: string[], start: number, column: number, itemsBelong: boolean): number {
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!isContent(line)) continue;
    const indent = indentOf(line);
    if (indent < column || (indent === column && !(itemsBelong && line.startsWith('- ', indent)))) return i;
  }
  return lines.length;
}

/** The line of key `key` among the keys of the mapping on lines from..end-1, or -1. */
function findKey(lines: string[], from: number, end: number, key: string): number {
  let column = -1;
  for (let i = from; i < end; i++) {
    const line = lines[i] as string;
    if (!isContent(line)) continue;
    const at = columnOf(line);
    if (column === -1) column = at;
    if (at === column && line.startsWith(key, at) && /^\s*:/.test(line.slice(at + key.length))) return i;
  }
  return -1;
}

/** The line of item `index` of the list on lines from..end-1, or -1. */
function findItem(lines: string[], from: number, end: number, index: number): number {
  let seen = -1;
  let itemIndent = -1;
  for (let i = from; i < end; i++) {
    const match = /^(\s*)- /.exec(lines[i] as string);
    if (!match) continue;
    const indent = (match[1] as string).length;
    if (itemIndent === -1) itemIndent = indent;
    if (indent !== itemIndent) continue;
    seen += 1;
    if (seen === index) return i;
  }
  return -1;
}

/**
 * The line of a field such as `cves[1].id` in an advisory file. Advisory files are small
 * block-style YAML, so following keys and list items down by indentation is enough. Each
 * step looks only inside the node found before it: a field that is not there is placed at
 * the nearest enclosing one (line 1 for the whole document), never at a field of the same
 * name elsewhere, such as in the next list item.
 */
export function lineOf(text: string, field: string): number {
  const lines = text.split('\n');
  const tokens = field.match(/[^.[\]]+/g) ?? [];
  let from = 0;
  let end = lines.length;
  let found = 0;
  for (const token of tokens) {
    const item = /^\d+$/.test(token);
    const at = item ? findItem(lines, from, end, Number(token)) : findKey(lines, from, end, token);
    if (at === -1) break;
    found = at;
    // An item's mapping starts on its own line (`- id: ...`), a key's value on the next; the
    // block of an item ends at its dash's column, that of a key at the key's.
    const line = lines[at] as string;
    from = item ? at : at + 1;
    end = item ? blockEnd(lines, at, indentOf(line), false) : blockEnd(lines, at, columnOf(line), true);
  }
  return found + 1;
}

export interface LintResult {
  findings: Finding[];
  /** Module -> the advisory files a manifest would list. */
  modules: Map<string, string[]>;
}

/**
 * Every finding of the feed's layout (feed/author/layout.ts) and of every advisory file under
 * its module folders, sorted by file and line.
 */
export function lintFeed(feedDir: string, now: Date): LintResult {
  const parsed: { file: string; text: string; advisory: Advisory }[] = [];
  const { modules, problems } = scanFeed(feedDir);
  const findings: Finding[] = problems.map((problem) => ({
    severity: problem.severity,
    rule: 'layout',
    file: problem.file,
    line: 1,
    message: problem.message,
  }));
  let count = 0;
  for (const files of modules.values()) {
    for (const file of files) {
      count += 1;
      const text = readFileSync(path.join(feedDir, file), 'utf8');
      let document: unknown;
      try {
        document = parseYaml(text);
      } catch (error) {
        if (!(error instanceof YamlError)) throw error;
        findings.push({
          severity: 'error',
          rule: 'yaml',
          file,
          line: error.line ?? 1,
          message: error.message,
        });
        continue;
      }
      const problems = checkAdvisory(document);
      for (const problem of problems) {
        findings.push({
          severity: 'error',
          rule: problem.rule,
          file,
          line: lineOf(text, problem.field),
          message: problem.message,
        });
      }
      if (problems.length > 0) continue;
      const advisory = document as Advisory;
      const expires = parseInstant(advisory.expires);
      if (expires && expires.getTime() <= now.getTime()) {
        findings.push({
          severity: 'error',
          rule: 'expired',
          file,
          line: lineOf(text, 'expires'),
          message: `advisory ${advisory.id} already expired on ${advisory.expires}; remove it or extend its window`,
        });
      }
      parsed.push({ file, text, advisory });
    }
  }
  if (count === 0) {
    findings.push({
      severity: 'error',
      rule: 'empty-feed',
      file: '.',
      line: 1,
      message: 'no advisory files found under any module folder',
    });
  }

  const firstById = new Map<string, string>();
  const products = new Set(parsed.map((p) => p.advisory.product));
  for (const { file, text, advisory } of parsed) {
    const earlier = firstById.get(advisory.id);
    if (earlier) {
      findings.push({
        severity: 'error',
        rule: 'duplicate-id',
        file,
        line: lineOf(text, 'id'),
        message: `advisory id ${advisory.id} is also used by ${earlier}`,
      });
    } else {
      firstById.set(advisory.id, file);
    }
    advisory.requires?.forEach((requirement, index) => {
      if (!products.has(requirement.product)) {
        findings.push({
          severity: 'error',
          rule: 'unknown-product',
          file,
          line: lineOf(text, `requires[${index}].product`),
          message: `requires names product "${requirement.product}", which no advisory of any module covers`,
        });
      }
    });
  }
  findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { findings, modules };
}
