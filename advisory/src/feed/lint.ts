import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type AdvisoryRule, checkAdvisory } from './advisory-check.ts';
import { listModuleFiles } from './files.ts';
import type { Advisory } from './schema.ts';
import { parseInstant } from './versions.ts';
import { parseYaml, YamlError } from './yaml.ts';

/** One authoring mistake, located for the author. */
export interface Finding {
  severity: 'error' | 'warning';
  rule: AdvisoryRule | 'yaml' | 'expired' | 'duplicate-id' | 'unknown-product' | 'empty-feed';
  file: string;
  line: number;
  message: string;
}

/**
 * The line of a field such as `cves[1].id` in an advisory file. Advisory files are small
 * block-style YAML, so following keys and list items down by indentation is enough.
 */
export function lineOf(text: string, field: string): number {
  const lines = text.split('\n');
  const tokens = field.match(/[^.[\]]+/g) ?? [];
  let from = 0;
  let found = 0;
  let minIndent = -1;
  for (const token of tokens) {
    if (/^\d+$/.test(token)) {
      let seen = -1;
      let itemIndent = -1;
      for (let i = from; i < lines.length; i++) {
        const match = /^(\s*)- /.exec(lines[i] as string);
        if (!match) continue;
        const indent = match[1]?.length ?? 0;
        if (itemIndent === -1) itemIndent = indent;
        if (indent !== itemIndent) continue;
        seen += 1;
        if (seen === Number(token)) {
          found = i;
          from = i;
          minIndent = indent;
          break;
        }
      }
    } else {
      const pattern = new RegExp(`^(\\s*)(?:- )?${token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:`);
      for (let i = from; i < lines.length; i++) {
        const match = pattern.exec(lines[i] as string);
        if (match && (match[1]?.length ?? 0) >= minIndent) {
          found = i;
          from = i;
          minIndent = match[1]?.length ?? 0;
          break;
        }
      }
    }
  }
  return found + 1;
}

/** Every finding of every advisory file under the feed's module folders. */
export function lintFeed(feedDir: string, now: Date): Finding[] {
  const findings: Finding[] = [];
  const parsed: { file: string; text: string; advisory: Advisory }[] = [];
  const modules = listModuleFiles(feedDir);
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
  return findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}
