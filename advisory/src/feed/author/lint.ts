import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseYaml, YamlError } from '../../storage/yaml.ts';
import { parseInstant } from '../../time/instants.ts';
import { type AdvisoryRule, checkAdvisory } from '../format/advisory-rules.ts';
import type { Advisory } from '../format/schema.ts';
import { scanFeed } from './layout.ts';
import { type LineOf, lineLocator } from './positions.ts';
import { placeholderFields } from './template.ts';
import { unknownKeyMessage, unknownKeys } from './unknown-keys.ts';

/** One authoring mistake, located for the author. */
export interface Finding {
  severity: 'error' | 'warning';
  rule:
    | AdvisoryRule
    | 'yaml'
    | 'unknown-key'
    | 'placeholder'
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
  const parsed: { file: string; lineOf: LineOf; advisory: Advisory }[] = [];
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
      const lineOf = lineLocator(text);
      // The appliance ignores unknown keys (forward compatibility); for the author one is
      // most likely a typo that silently drops a field, so it is an error here.
      for (const unknown of unknownKeys(document)) {
        findings.push({
          severity: 'error',
          rule: 'unknown-key',
          file,
          line: lineOf(unknown.field),
          message: unknownKeyMessage(unknown),
        });
      }
      for (const field of placeholderFields(document)) {
        findings.push({
          severity: 'error',
          rule: 'placeholder',
          file,
          line: lineOf(field),
          message: `${field}: a placeholder of the template is left in; fill it in (or delete an optional field)`,
        });
      }
      const problems = checkAdvisory(document);
      for (const problem of problems) {
        findings.push({
          severity: 'error',
          rule: problem.rule,
          file,
          line: lineOf(problem.field),
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
          line: lineOf('expires'),
          message: `advisory ${advisory.id} already expired on ${advisory.expires}; remove it or extend its window`,
        });
      }
      parsed.push({ file, lineOf, advisory });
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
  for (const { file, lineOf, advisory } of parsed) {
    const earlier = firstById.get(advisory.id);
    if (earlier) {
      findings.push({
        severity: 'error',
        rule: 'duplicate-id',
        file,
        line: lineOf('id'),
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
          line: lineOf(`requires[${index}].product`),
          message: `requires names product "${requirement.product}", which no advisory of any module covers`,
        });
      }
    });
  }
  findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { findings, modules };
}
