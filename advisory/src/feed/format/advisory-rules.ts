import { Compile } from 'typebox/compile';
import { parseInstant } from '../../time/instants.ts';
import { parsePeriod } from '../../time/periods.ts';
import { Advisory, CveId, Verdicts } from './schema.ts';
import { parseRange, parseVersion } from './versions.ts';

/**
 * Every rule an advisory file must satisfy on its own. The appliance refuses a feed on
 * the first problem (fail closed); the feed builder reports all of them with lines.
 */
export type AdvisoryRule =
  | 'schema'
  | 'unknown-verdict'
  | 'cve-id'
  | 'window'
  | 'version-range'
  | 'recommended-version'
  | 'reminder-period';

export interface AdvisoryProblem {
  rule: AdvisoryRule;
  /** Dotted field path, e.g. `cves[1].id`; empty for the whole document. */
  field: string;
  message: string;
}

const advisoryValidator = Compile(Advisory);
const cveValidator = Compile(CveId);

function fieldOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function schemaProblems(value: unknown): AdvisoryProblem[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return [{ rule: 'schema', field: '', message: 'an advisory must be a mapping of fields' }];
  }
  const record = value as Record<string, unknown>;
  const problems: AdvisoryProblem[] = [];
  if (typeof record.verdict === 'string' && !(Verdicts as readonly string[]).includes(record.verdict)) {
    problems.push({
      rule: 'unknown-verdict',
      field: 'verdict',
      message: `unknown verdict "${record.verdict}" (expected one of ${Verdicts.join(', ')})`,
    });
  }
  if (Array.isArray(record.cves)) {
    record.cves.forEach((cve: unknown, index) => {
      const id = cve && typeof cve === 'object' ? (cve as Record<string, unknown>).id : undefined;
      if (typeof id === 'string' && !cveValidator.Check(id)) {
        problems.push({
          rule: 'cve-id',
          field: `cves[${index}].id`,
          message: `malformed CVE id "${id}" (expected CVE-YYYY-NNNN)`,
        });
      }
    });
  }
  // Errors() explains; Check() is the fast path that almost every advisory takes.
  if (problems.length === 0 && advisoryValidator.Check(value)) return problems;
  const reported = new Set(problems.map((p) => p.field));
  for (const error of advisoryValidator.Errors(value)) {
    const field = fieldOf(error.instancePath);
    const missing = (error as { params?: { requiredProperties?: string[] } }).params?.requiredProperties;
    const name = missing?.length ? `${field ? `${field}.` : ''}${missing.join(', ')}` : field;
    if (reported.has(name)) continue;
    reported.add(name);
    problems.push({
      rule: 'schema',
      field: name,
      message: missing?.length ? `missing required field ${name}` : `${name || 'document'}: ${error.message}`,
    });
  }
  return problems;
}

/** The problems of one parsed advisory document; empty means valid. */
export function checkAdvisory(value: unknown): AdvisoryProblem[] {
  const problems = schemaProblems(value);
  if (problems.length > 0) return problems;
  const advisory = value as Advisory;
  if ((advisory.verdict === undefined) === (advisory.reminder === undefined)) {
    problems.push({
      rule: 'schema',
      field: 'verdict',
      message: 'an advisory has either a verdict or a reminder (exactly one)',
    });
  }

  const effective = parseInstant(advisory.effective);
  const expires = parseInstant(advisory.expires);
  if (!effective)
    problems.push({
      rule: 'window',
      field: 'effective',
      message: `effective: not a date (YYYY-MM-DD or RFC 3339): "${advisory.effective}"`,
    });
  if (!expires)
    problems.push({
      rule: 'window',
      field: 'expires',
      message: `expires: not a date (YYYY-MM-DD or RFC 3339): "${advisory.expires}"`,
    });
  if (effective && expires && expires.getTime() <= effective.getTime()) {
    problems.push({
      rule: 'window',
      field: 'expires',
      message: `the window is ${expires.getTime() === effective.getTime() ? 'empty' : 'reversed'}: expires ${advisory.expires} is not after effective ${advisory.effective}`,
    });
  }

  if (advisory.reminder && !parsePeriod(advisory.reminder.every)) {
    problems.push({
      rule: 'reminder-period',
      field: 'reminder.every',
      message: `reminder.every: "${advisory.reminder.every}" is not an ISO 8601 period such as P90D, P12W, P3M or P1Y`,
    });
  }

  const affects = parseRange(advisory.affects);
  if (!affects)
    problems.push({
      rule: 'version-range',
      field: 'affects',
      message: `affects: invalid version range "${advisory.affects}"`,
    });
  advisory.requires?.forEach((requirement, index) => {
    if (!parseRange(requirement.version)) {
      problems.push({
        rule: 'version-range',
        field: `requires[${index}].version`,
        message: `requires[${index}].version: invalid version range "${requirement.version}"`,
      });
    }
  });

  if (advisory.recommended_version !== undefined) {
    const recommended = parseVersion(advisory.recommended_version);
    if (!recommended) {
      problems.push({
        rule: 'recommended-version',
        field: 'recommended_version',
        message: `recommended_version: not a version: "${advisory.recommended_version}"`,
      });
    } else if (affects?.test(recommended)) {
      problems.push({
        rule: 'recommended-version',
        field: 'recommended_version',
        message: `recommended_version ${advisory.recommended_version} is itself inside the affected range "${advisory.affects}"`,
      });
    }
  }
  return problems;
}
