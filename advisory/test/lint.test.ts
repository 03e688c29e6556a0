import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFeed } from '../src/feed/build.ts';
import { type Finding, lintFeed } from '../src/feed/lint.ts';
import { Verdicts } from '../src/feed/schema.ts';
import { advisoryYaml, NOW } from './support/feed.ts';

function feedWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'lint-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

function lintOne(fields: Record<string, string | undefined>, extra: Record<string, string> = {}): Finding[] {
  return lintFeed(feedWith({ 'widgets/one.yaml': advisoryYaml(fields), ...extra }), NOW);
}

/** The single finding of a rule, with its file and line. */
function only(findings: Finding[], rule: Finding['rule']): Finding {
  const matching = findings.filter((f) => f.rule === rule);
  expect(matching, JSON.stringify(findings)).toHaveLength(1);
  return matching[0] as Finding;
}

// advisoryYaml writes: id(1) title(2) product(3) affects(4) verdict(5) recommended_version(6)
// effective(7) expires(8) summary(9) references(10-11), then extra fields.
describe('lint: one test per finding, each with file and line', () => {
  it('a clean advisory has no findings, whatever its verdict', () => {
    for (const verdict of Verdicts)
      expect(lintOne({ verdict, recommended_version: '"2.1"' }), verdict).toEqual([]);
  });

  it('schema: a missing required field', () => {
    const finding = only(lintOne({ title: undefined }), 'schema');
    expect(finding).toMatchObject({ file: 'widgets/one.yaml', severity: 'error' });
    expect(finding.message).toMatch(/title/);
  });

  it('schema: a field of the wrong type, at its line', () => {
    const finding = only(lintOne({ references: '"not a list"' }), 'schema');
    expect(finding.line).toBe(10);
  });

  it('unknown verdict', () => {
    const finding = only(lintOne({ verdict: 'maybe' }), 'unknown-verdict');
    expect(finding).toMatchObject({ line: 5, message: expect.stringMatching(/unknown verdict "maybe"/) });
  });

  it('reversed window', () => {
    const finding = only(lintOne({ effective: '2027-06-01', expires: '2027-01-01' }), 'window');
    expect(finding).toMatchObject({ line: 8, message: expect.stringMatching(/reversed/) });
  });

  it('empty window', () => {
    expect(only(lintOne({ effective: '2027-01-01', expires: '2027-01-01' }), 'window').message).toMatch(
      /empty/,
    );
  });

  it('a date that is not a date', () => {
    expect(only(lintOne({ effective: '2027-13-45' }), 'window')).toMatchObject({ line: 7 });
  });

  it('already-expired advisory', () => {
    const finding = only(lintOne({ effective: '2025-01-01', expires: '2026-01-01' }), 'expired');
    expect(finding).toMatchObject({
      line: 8,
      message: expect.stringMatching(/already expired on 2026-01-01/),
    });
  });

  it('duplicate ids across modules', () => {
    const findings = lintOne({}, { 'gadgets/two.yaml': advisoryYaml({ product: 'gadget' }) });
    const finding = only(findings, 'duplicate-id');
    expect(finding).toMatchObject({ line: 1, message: expect.stringMatching(/TEST-1 is also used by/) });
  });

  it('invalid version range in affects', () => {
    expect(only(lintOne({ affects: '">=1.0.0 <<2"' }), 'version-range')).toMatchObject({ line: 4 });
  });

  it('invalid version range in requires', () => {
    const findings = lintOne({
      requires: '\n  - product: widget\n    version: "not a range"\n    reason: because',
    });
    expect(only(findings, 'version-range')).toMatchObject({
      line: 14,
      message: expect.stringMatching(/requires\[0\]\.version/),
    });
  });

  it('requires naming a product no module covers', () => {
    const findings = lintOne({
      verdict: 'install',
      recommended_version: '"2.1"',
      requires: '\n  - product: unobtainium\n    version: ">=1.0.0"\n    reason: because',
    });
    expect(only(findings, 'unknown-product')).toMatchObject({
      line: 13,
      message: expect.stringMatching(/"unobtainium"/),
    });
  });

  it('malformed CVE id, at the line of that CVE', () => {
    const findings = lintOne({ cves: '\n  - id: CVE-2025-1094\n    cvss: 8.1\n  - id: CVE-25-1' });
    expect(only(findings, 'cve-id')).toMatchObject({
      line: 15,
      message: expect.stringMatching(/malformed CVE id "CVE-25-1"/),
    });
  });

  it('recommended_version inside the range it is meant to fix', () => {
    const finding = only(
      lintOne({ affects: '">=1.0.0 <2.0.0"', recommended_version: '"1.9.9"' }),
      'recommended-version',
    );
    expect(finding).toMatchObject({ line: 6, message: expect.stringMatching(/inside the affected range/) });
  });

  it('recommended_version that is not a version', () => {
    expect(only(lintOne({ recommended_version: 'latest' }), 'recommended-version')).toMatchObject({
      line: 6,
    });
  });

  it('neither verdict nor reminder', () => {
    expect(only(lintOne({ verdict: undefined }), 'schema').message).toMatch(/either a verdict or a reminder/);
  });

  it('a YAML syntax error, at its line', () => {
    const findings = lintFeed(
      feedWith({ 'widgets/one.yaml': 'id: X-1\ntitle: [unclosed\nproduct: widget\n' }),
      NOW,
    );
    expect(only(findings, 'yaml').line).toBeGreaterThanOrEqual(2);
  });

  it('YAML anchors are refused at authoring time too', () => {
    const findings = lintFeed(
      feedWith({ 'widgets/one.yaml': `${advisoryYaml({})}base: &b {a: 1}\nother: *b\n` }),
      NOW,
    );
    expect(only(findings, 'yaml').message).toMatch(/anchors and aliases/);
  });

  it('build writes no manifest while there are errors', () => {
    const dir = feedWith({ 'widgets/one.yaml': advisoryYaml({ verdict: 'maybe' }) });
    const result = buildFeed({ feedDir: dir, feedVersion: '2026.11.21', expiresInMs: 86_400_000, now: NOW });
    expect(result.ok).toBe(false);
    expect(() => writeFileSync(path.join(dir, 'manifest.yaml'), '', { flag: 'wx' })).not.toThrow();
  });
});
