import { describe, expect, it } from 'vitest';
import { checkAdvisory } from '../../../src/feed/format/advisory-rules.ts';

/** A valid advisory document, as the YAML parser hands it over; `undefined` removes a field. */
function advisory(fields: Record<string, unknown> = {}): Record<string, unknown> {
  const merged: Record<string, unknown> = {
    id: 'TEST-1',
    title: 'A test advisory',
    product: 'widget',
    affects: '>=1.0.0 <2.0.0',
    verdict: 'eol',
    recommended_version: '2.1',
    effective: '2026-01-01',
    expires: '2027-12-31',
    summary: 'Something happened.',
    references: ['https://example.org/advisory'],
    ...fields,
  };
  return Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined));
}

const cve = (n: number, extra: Record<string, unknown> = {}) => ({ id: `CVE-2025-${1000 + n}`, ...extra });

describe('checkAdvisory: a valid advisory', () => {
  it('has no problems, with a verdict or with a reminder', () => {
    expect(checkAdvisory(advisory())).toEqual([]);
    expect(
      checkAdvisory(
        advisory({
          verdict: undefined,
          recommended_version: undefined,
          reminder: { from: 'last_restore_test', every: 'P90D', task: 'restore a backup' },
          cves: [cve(1, { cvss: 10 }), cve(2, { cvss: 0 })],
          requires: [{ product: 'php', version: '>=8.2.0', reason: 'needs PHP 8.2' }],
        }),
      ),
    ).toEqual([]);
  });

  it('a window of one millisecond is not empty', () => {
    expect(checkAdvisory(advisory({ effective: '2027-01-01', expires: '2027-01-01T00:00:00.001Z' }))).toEqual(
      [],
    );
  });
});

describe('checkAdvisory: the document as a whole', () => {
  it.each([[null], [undefined], [42], ['an advisory'], [true], [[advisory()]]])(
    '%j is not a mapping of fields',
    (value) => {
      expect(checkAdvisory(value)).toEqual([
        { rule: 'schema', field: '', message: 'an advisory must be a mapping of fields' },
      ]);
    },
  );

  it('names one missing required field, and several together', () => {
    expect(checkAdvisory(advisory({ title: undefined }))).toEqual([
      { rule: 'schema', field: 'title', message: 'missing required field title' },
    ]);
    expect(checkAdvisory(advisory({ title: undefined, summary: undefined }))).toEqual([
      { rule: 'schema', field: 'title, summary', message: 'missing required field title, summary' },
    ]);
  });

  it('stops at schema problems: dates, ranges and versions are not checked on top', () => {
    expect(
      checkAdvisory(
        advisory({ effective: undefined, affects: '>>1', recommended_version: 'latest', verdict: undefined }),
      ),
    ).toEqual([{ rule: 'schema', field: 'effective', message: 'missing required field effective' }]);
  });

  it('names a missing field inside a list item by its path', () => {
    expect(checkAdvisory(advisory({ requires: [{ product: 'php' }] }))).toEqual([
      {
        rule: 'schema',
        field: 'requires[0].version, reason',
        message: 'missing required field requires[0].version, reason',
      },
    ]);
  });

  it('reports every field of the wrong shape, by its dotted path', () => {
    expect(
      checkAdvisory(
        advisory({
          title: '',
          product: 'Widget',
          references: 'https://example.org',
          reminder: { from: 'last_backup', every: 'P3Q', task: 'check' },
        }),
      ),
    ).toEqual([
      { rule: 'schema', field: 'title', message: 'title: must not have fewer than 1 characters' },
      {
        rule: 'schema',
        field: 'product',
        message: 'product: must match pattern "^[a-z0-9][a-z0-9-]{0,63}$"',
      },
      {
        rule: 'schema',
        field: 'reminder.every',
        message: 'reminder.every: must match pattern "^P[0-9YMWD]{2,16}$"',
      },
      { rule: 'schema', field: 'references', message: 'references: must be array' },
    ]);
  });

  it('numbers list items from 0, also past 9', () => {
    const cves = Array.from({ length: 11 }, (_, n) => cve(n, n === 10 ? { cvss: 11 } : {}));
    expect(checkAdvisory(advisory({ cves }))).toEqual([
      { rule: 'schema', field: 'cves[10].cvss', message: 'cves[10].cvss: must be <= 10' },
    ]);
  });

  it('reports cves[10] as well as cves[1] (a field is not hidden by another that merely starts alike)', () => {
    const cves: unknown[] = Array.from({ length: 11 }, (_, n) => cve(n, n === 10 ? { cvss: 11 } : {}));
    cves[1] = 'CVE-2025-1001';
    expect(checkAdvisory(advisory({ cves }))).toEqual([
      { rule: 'schema', field: 'cves[1]', message: 'cves[1]: must be object' },
      { rule: 'schema', field: 'cves[10].cvss', message: 'cves[10].cvss: must be <= 10' },
    ]);
  });
});

describe('checkAdvisory: verdicts and CVE ids', () => {
  it('an unknown verdict is named once, with the verdicts there are', () => {
    expect(checkAdvisory(advisory({ verdict: 'maybe' }))).toEqual([
      {
        rule: 'unknown-verdict',
        field: 'verdict',
        message: 'unknown verdict "maybe" (expected one of blocked, eol, wait-for-patch, hold, install)',
      },
    ]);
  });

  it('a verdict that is not a string is a schema problem', () => {
    expect(checkAdvisory(advisory({ verdict: 5 }))).toEqual([
      { rule: 'schema', field: 'verdict', message: 'verdict: must be string' },
    ]);
  });

  it('a malformed CVE id is named at its index; other problems are still reported', () => {
    expect(
      checkAdvisory(
        advisory({ verdict: 'maybe', title: undefined, cves: [cve(1), { id: 'CVE-25-1' }, cve(3)] }),
      ),
    ).toEqual([
      {
        rule: 'unknown-verdict',
        field: 'verdict',
        message: 'unknown verdict "maybe" (expected one of blocked, eol, wait-for-patch, hold, install)',
      },
      {
        rule: 'cve-id',
        field: 'cves[1].id',
        message: 'malformed CVE id "CVE-25-1" (expected CVE-YYYY-NNNN)',
      },
      { rule: 'schema', field: 'title', message: 'missing required field title' },
    ]);
  });

  it('CVE entries that are not mappings, or ids that are not strings, are schema problems', () => {
    expect(checkAdvisory(advisory({ cves: [null, { id: 5 }, 'CVE-2025-1000', { id: 'CVE-1' }] }))).toEqual([
      { rule: 'cve-id', field: 'cves[3].id', message: 'malformed CVE id "CVE-1" (expected CVE-YYYY-NNNN)' },
      { rule: 'schema', field: 'cves[0]', message: 'cves[0]: must be object' },
      { rule: 'schema', field: 'cves[1].id', message: 'cves[1].id: must be string' },
      { rule: 'schema', field: 'cves[2]', message: 'cves[2]: must be object' },
    ]);
  });
});

describe('checkAdvisory: meaning', () => {
  it('needs exactly one of verdict and reminder', () => {
    const problem = {
      rule: 'schema',
      field: 'verdict',
      message: 'an advisory has either a verdict or a reminder (exactly one)',
    };
    expect(checkAdvisory(advisory({ verdict: undefined }))).toEqual([problem]);
    expect(
      checkAdvisory(advisory({ reminder: { from: 'last_backup', every: 'P1Y', task: 'check the backup' } })),
    ).toEqual([problem]);
  });

  it('reminder periods are ISO 8601 periods: 3m (minutes or months?) is refused', () => {
    const reminder = (every: string) =>
      checkAdvisory(
        advisory({ verdict: undefined, reminder: { from: 'last_backup', every, task: 'check' } }),
      );
    expect(reminder('P3M')).toEqual([]);
    expect(reminder('3m')).toEqual([
      {
        rule: 'schema',
        field: 'reminder.every',
        message: 'reminder.every: must match pattern "^P[0-9YMWD]{2,16}$"',
      },
    ]);
    expect(reminder('P3M1Y')).toEqual([
      {
        rule: 'reminder-period',
        field: 'reminder.every',
        message: 'reminder.every: "P3M1Y" is not an ISO 8601 period such as P90D, P12W, P3M or P1Y',
      },
    ]);
  });

  it('dates that are not dates', () => {
    expect(
      checkAdvisory(advisory({ effective: '2027-02-30', expires: '2026-12-31' })).map((p) => p.message),
    ).toEqual(['effective: not a date (YYYY-MM-DD or RFC 3339): "2027-02-30"']);
    expect(checkAdvisory(advisory({ effective: '2027-13-45', expires: 'next year!' }))).toEqual([
      {
        rule: 'window',
        field: 'effective',
        message: 'effective: not a date (YYYY-MM-DD or RFC 3339): "2027-13-45"',
      },
      {
        rule: 'window',
        field: 'expires',
        message: 'expires: not a date (YYYY-MM-DD or RFC 3339): "next year!"',
      },
    ]);
  });

  it('an empty and a reversed window', () => {
    expect(checkAdvisory(advisory({ effective: '2027-01-01', expires: '2027-01-01T00:00:00Z' }))).toEqual([
      {
        rule: 'window',
        field: 'expires',
        message: 'the window is empty: expires 2027-01-01T00:00:00Z is not after effective 2027-01-01',
      },
    ]);
    expect(checkAdvisory(advisory({ effective: '2027-06-01', expires: '2027-05-31T23:59:59Z' }))).toEqual([
      {
        rule: 'window',
        field: 'expires',
        message: 'the window is reversed: expires 2027-05-31T23:59:59Z is not after effective 2027-06-01',
      },
    ]);
  });

  it('invalid version ranges, in affects and in each requirement', () => {
    expect(
      checkAdvisory(
        advisory({
          affects: '>>1.0',
          recommended_version: '2.1',
          requires: [
            { product: 'php', version: '>=8.2.0', reason: 'fine' },
            { product: 'mariadb', version: 'newest', reason: 'not a range' },
          ],
        }),
      ),
    ).toEqual([
      { rule: 'version-range', field: 'affects', message: 'affects: invalid version range ">>1.0"' },
      {
        rule: 'version-range',
        field: 'requires[1].version',
        message: 'requires[1].version: invalid version range "newest"',
      },
    ]);
  });

  it('a recommended version that is not a version, or inside the affected range', () => {
    expect(checkAdvisory(advisory({ recommended_version: 'latest' }))).toEqual([
      {
        rule: 'recommended-version',
        field: 'recommended_version',
        message: 'recommended_version: not a version: "latest"',
      },
    ]);
    expect(checkAdvisory(advisory({ recommended_version: '1.9.9' }))).toEqual([
      {
        rule: 'recommended-version',
        field: 'recommended_version',
        message: 'recommended_version 1.9.9 is itself inside the affected range ">=1.0.0 <2.0.0"',
      },
    ]);
    expect(checkAdvisory(advisory({ recommended_version: '2.0' }))).toEqual([]);
  });

  it('reports all problems of meaning together, in field order of the checks', () => {
    expect(
      checkAdvisory(
        advisory({
          verdict: undefined,
          effective: '2027-02-01',
          expires: '2027-01-01',
          affects: '>>1',
          recommended_version: 'latest',
        }),
      ).map((p) => p.rule),
    ).toEqual(['schema', 'window', 'version-range', 'recommended-version']);
  });
});
