import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/crypto/digest.ts';
import { buildFeed } from '../../../src/feed/author/build.ts';
import { type Finding, lintFeed } from '../../../src/feed/author/lint.ts';
import { lineLocator } from '../../../src/feed/author/positions.ts';
import { nearest } from '../../../src/feed/author/unknown-keys.ts';
import { MANIFEST_FILE } from '../../../src/feed/format/rules.ts';
import { Verdicts } from '../../../src/feed/format/schema.ts';
import { advisoryYaml, makeFeed, NOW, signFeed, verifyDir } from '../../support/feed.ts';

const lintFindings = (dir: string, now: Date) => lintFeed(dir, now).findings;

function feedWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'lint-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

function lintOne(fields: Record<string, string | undefined>, extra: Record<string, string> = {}): Finding[] {
  return lintFindings(feedWith({ 'widgets/one.yaml': advisoryYaml(fields), ...extra }), NOW);
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
    const findings = lintFindings(
      feedWith({ 'widgets/one.yaml': 'id: X-1\ntitle: [unclosed\nproduct: widget\n' }),
      NOW,
    );
    expect(only(findings, 'yaml').line).toBeGreaterThanOrEqual(2);
  });

  it('YAML anchors are refused at authoring time too', () => {
    const findings = lintFindings(
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

/** The line of `field` in `text` (one lookup). */
const lineOf = (text: string, field: string): number => lineLocator(text)(field);

describe("lineLocator: the line of a field (from the yaml package's node ranges)", () => {
  const text = [
    'id: X-1', // 1
    'cves:', // 2
    '  - id: CVE-2025-0001', // 3
    '    cvss: 5.0', // 4
    '    notes:', // 5
    '      - first', // 6
    '      - second', // 7
    '  - id: CVE-2025-0002', // 8
    '    summary: before  - after', // 9
    '    notes:', // 10
    '  - cvss: 7.5', // 11
    '    id: CVE-2025-0003', // 12
    '  - id: CVE-2025-0004', // 13
    '    meta:', // 14
    '      cvss: 1.0', // 15
    '    cvss: 9.8', // 16
    'extra:', // 17
    '    summary: deep', // 18
    'reminder:', // 19
    '', // 20
    '  # when the backup was last tested', // 21
    '  from: last_backup', // 22
    'task: top-level', // 23
  ].join('\n');

  it.each([
    ['', 1],
    ['id', 1],
    ['cves', 2],
    ['cves[0]', 3],
    ['cves[0].id', 3],
    ['cves[0].cvss', 4],
    ['cves[0].notes[1]', 7],
    ['cves[1]', 8],
    ['cves[1].id', 8],
    ['cves[1].notes', 10],
    ['cves[2]', 11],
    ['cves[2].cvss', 11],
    ['cves[2].id', 12],
    ['cves[3].cvss', 16],
    ['cves[3].meta.cvss', 15],
    ['extra.summary', 18],
    ['reminder', 19],
    ['reminder.from', 22],
    ['task', 23],
  ])('%s is on line %i', (field, line) => {
    expect(lineOf(text, field)).toBe(line);
  });

  it('a field that is not there: the line of the nearest enclosing one, or 1', () => {
    expect(lineOf(text, 'nothing')).toBe(1);
    expect(lineOf(text, 'cves[7]')).toBe(2);
    expect(lineOf(text, 'cves[0].notes[5]')).toBe(5);
    expect(lineOf(text, 'cves[1].notes[0]')).toBe(10);
    expect(lineOf(text, 'reminder.from.at')).toBe(22);
  });

  it('never the same key of a later list item, or of a later mapping', () => {
    expect(lineOf(text, 'cves[1].cvss')).toBe(8);
    expect(lineOf(text, 'cves[0].summary')).toBe(3);
    expect(lineOf(text, 'cves[3].summary')).toBe(13);
    expect(lineOf(text, 'reminder.task')).toBe(19);
    expect(lineOf(text, 'reminder.id')).toBe(19);
  });

  it('list items are counted at the indentation of the first item, from 0 past 9', () => {
    const items = ['refs:', ...Array.from({ length: 12 }, (_, n) => `  - https://example.org/${n}`)].join(
      '\n',
    );
    expect(lineOf(items, 'refs[0]')).toBe(2);
    expect(lineOf(items, 'refs[10]')).toBe(12);
    expect(lineOf(items, 'refs[11]')).toBe(13);
  });

  it('list items written at the indentation of their key, and blank or comment lines within a block', () => {
    const compact = ['cves:', '- id: A', '', '  # a comment', '- id: B', '  cvss: 1', 'cvss: 2'].join('\n');
    expect(lineOf(compact, 'cves[1].id')).toBe(5);
    expect(lineOf(compact, 'cves[1].cvss')).toBe(6);
    expect(lineOf(compact, 'cves[0].cvss')).toBe(2);
    const spaced = ['list:', '  -   name: x', '      value: 1', '  -   name: y'].join('\n');
    expect(lineOf(spaced, 'list[0].value')).toBe(3);
    expect(lineOf(spaced, 'list[1].name')).toBe(4);
  });

  it('a key inside a nested mapping must be indented under it', () => {
    const nested = ['a:', '  b:', '    d: 1', '  e: 2', 'c:', '  c: 3', 'b:', '  c: 4'].join('\n');
    expect(lineOf(nested, 'a.b.d')).toBe(3);
    expect(lineOf(nested, 'a.b.c')).toBe(2);
    expect(lineOf(nested, 'a.e')).toBe(4);
    expect(lineOf(nested, 'a.c')).toBe(1);
    expect(lineOf(nested, 'b.c')).toBe(8);
  });

  it('keys that look like indexes or regular expressions are matched literally', () => {
    const odd = ['list:', '  - one', '  - two', 'v2: a', '2x: b', 'aab: c', 'a+bc: d', 'a+b : e'].join('\n');
    expect(lineOf(odd, 'list[1]')).toBe(3);
    expect(lineOf(odd, 'v2')).toBe(4);
    expect(lineOf(odd, '2x')).toBe(5);
    expect(lineOf(odd, 'a+b')).toBe(8);
  });
});

describe('lint: exact findings', () => {
  it('a document that is not a mapping: one schema finding at line 1', () => {
    expect(lintFindings(feedWith({ 'widgets/one.yaml': '- a\n- list\n' }), NOW)).toEqual([
      {
        severity: 'error',
        rule: 'schema',
        file: 'widgets/one.yaml',
        line: 1,
        message: 'an advisory must be a mapping of fields',
      },
    ]);
  });

  it('a YAML error names its line; one over the size cap has none and is put at line 1', () => {
    const findings = lintFindings(
      feedWith({
        'widgets/one.yaml': 'id: X-1\ntitle: [unclosed\n',
        'widgets/two.yaml': `summary: "${'x'.repeat(1024 * 1024)}"\n`,
      }),
      NOW,
    );
    expect(findings).toEqual([
      {
        severity: 'error',
        rule: 'yaml',
        file: 'widgets/one.yaml',
        line: 3,
        message: 'unexpected end of the stream within a flow collection',
      },
      {
        severity: 'error',
        rule: 'yaml',
        file: 'widgets/two.yaml',
        line: 1,
        message: 'document larger than 1048576 bytes',
      },
    ]);
  });

  it('findings are sorted by file, then line', () => {
    const findings = lintOne(
      {
        verdict: 'install',
        recommended_version: '"2.1"',
        requires: '\n  - product: nowhere\n    version: ">=1"\n    reason: r',
      },
      {
        'gadgets/two.yaml': advisoryYaml({
          id: 'TEST-2',
          effective: '2027-06-01',
          expires: '2027-01-01',
          affects: '">>1"',
        }),
      },
    );
    expect(findings.map((f) => [f.file, f.line, f.rule])).toEqual([
      ['gadgets/two.yaml', 4, 'version-range'],
      ['gadgets/two.yaml', 8, 'window'],
      ['widgets/one.yaml', 13, 'unknown-product'],
    ]);
  });

  it('an advisory with problems is not checked further (expiry, ids, products)', () => {
    const findings = lintOne(
      {
        effective: '2025-01-01',
        expires: '2026-01-01',
        affects: '">>1"',
        requires: '\n  - product: nowhere\n    version: ">=1"\n    reason: r',
      },
      { 'widgets/two.yaml': advisoryYaml({}) },
    );
    expect(findings).toEqual([
      {
        severity: 'error',
        rule: 'version-range',
        file: 'widgets/one.yaml',
        line: 4,
        message: 'affects: invalid version range ">>1"',
      },
    ]);
  });

  it('an advisory expires at the first instant of its expires date', () => {
    const dir = feedWith({ 'widgets/one.yaml': advisoryYaml({ expires: '2027-12-31' }) });
    expect(lintFindings(dir, new Date('2027-12-30T23:59:59.999Z'))).toEqual([]);
    expect(lintFindings(dir, new Date('2027-12-31T00:00:00Z'))).toEqual([
      {
        severity: 'error',
        rule: 'expired',
        file: 'widgets/one.yaml',
        line: 8,
        message: 'advisory TEST-1 already expired on 2027-12-31; remove it or extend its window',
      },
    ]);
  });

  it('a duplicate id is reported on the later file, at the line of its id', () => {
    const findings = lintFindings(
      feedWith({
        'alpha/one.yaml': advisoryYaml({}),
        'beta/two.yaml': `# the same advisory again\n${advisoryYaml({ product: 'gadget' })}`,
      }),
      NOW,
    );
    expect(findings).toEqual([
      {
        severity: 'error',
        rule: 'duplicate-id',
        file: 'beta/two.yaml',
        line: 2,
        message: 'advisory id TEST-1 is also used by alpha/one.yaml',
      },
    ]);
  });

  it('a field missing from one list item is placed at that item, not at the same field of the next', () => {
    const findings = lintOne({
      verdict: 'install',
      requires:
        '\n  - product: widget\n    version: ">=1"\n  - product: widget\n    version: ">=1"\n    reason: r',
    });
    expect(findings).toEqual([
      {
        severity: 'error',
        rule: 'schema',
        file: 'widgets/one.yaml',
        line: 13,
        message: 'missing required field requires[0].reason',
      },
    ]);
  });

  it('each unknown product of requires, at its own line', () => {
    const findings = lintOne({
      verdict: 'install',
      requires:
        '\n  - product: widget\n    version: ">=1"\n    reason: r\n  - product: nowhere\n    version: ">=1"\n    reason: r',
    });
    expect(findings).toEqual([
      {
        severity: 'error',
        rule: 'unknown-product',
        file: 'widgets/one.yaml',
        line: 16,
        message: 'requires names product "nowhere", which no advisory of any module covers',
      },
    ]);
  });

  it('a feed without advisory files', () => {
    const empty = {
      severity: 'error',
      rule: 'empty-feed',
      file: '.',
      line: 1,
      message: 'no advisory files found under any module folder',
    };
    expect(lintFindings(feedWith({}), NOW)).toEqual([empty]);
    expect(lintFindings(feedWith({ 'widgets/README.md': 'no advisories yet', 'top.yaml': '' }), NOW)).toEqual(
      [
        empty,
        {
          severity: 'warning',
          rule: 'layout',
          file: 'widgets/README.md',
          line: 1,
          message: 'not an advisory file (.yaml or .yml): not listed in the manifest',
        },
      ],
    );
  });
});

describe('lint: unknown keys are errors for the author, with the line and the key meant', () => {
  it('a misspelled recommended_version: the key, its line and a suggestion; build writes no manifest', () => {
    const dir = feedWith({
      'widgets/one.yaml': advisoryYaml({ recommended_version: undefined, recomended_version: '"2.1"' }),
    });
    const finding = {
      severity: 'error',
      rule: 'unknown-key',
      file: 'widgets/one.yaml',
      // advisoryYaml writes extra fields last: after references (9-10 without line 6).
      line: 11,
      message: 'unknown key `recomended_version`: did you mean `recommended_version`?',
    };
    expect(lintFindings(dir, NOW)).toEqual([finding]);
    const built = buildFeed({ feedDir: dir, expiresInMs: 86_400_000, now: NOW });
    expect(built).toEqual({ ok: false, findings: [finding] });
    expect(existsSync(path.join(dir, MANIFEST_FILE))).toBe(false);
  });

  it('`verdikt: install` names the key (and still says a verdict is missing)', () => {
    expect(lintOne({ verdict: undefined, verdikt: 'install' })).toEqual([
      {
        severity: 'error',
        rule: 'schema',
        file: 'widgets/one.yaml',
        line: 1,
        message: 'an advisory has either a verdict or a reminder (exactly one)',
      },
      {
        severity: 'error',
        rule: 'unknown-key',
        file: 'widgets/one.yaml',
        line: 11,
        message: 'unknown key `verdikt`: did you mean `verdict`?',
      },
    ]);
  });

  it('inside list items and nested mappings, block or flow style, at the line of the key', () => {
    const findings = lintOne({
      verdict: 'install',
      cves: '\n  - id: CVE-2025-0001\n    cvs: 5.0',
      requires: '[{product: widget, version: ">=1", reason: r,\n    resaon: typo}]',
      reminder: undefined,
    });
    expect(findings.map((f) => [f.line, f.rule, f.message])).toEqual([
      [14, 'unknown-key', 'unknown key `cvs` (at cves[0].cvs): did you mean `cvss`?'],
      [16, 'unknown-key', 'unknown key `resaon` (at requires[0].resaon): did you mean `reason`?'],
    ]);
  });

  it('a key far from every known one gets no guess', () => {
    expect(lintOne({ colour: 'blue' }).map((f) => f.message)).toEqual(['unknown key `colour`']);
    expect(lintOne({ Summary: 'twice' }).map((f) => f.message)).toEqual([
      'unknown key `Summary`: did you mean `summary`?',
    ]);
  });

  // Names every plain object inherits: a lookup in the schema's properties must not find them.
  const inherited = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'];

  it.each(inherited)('`%s` at the top level is an unknown key; build writes no manifest', (key) => {
    const dir = feedWith({ 'widgets/one.yaml': advisoryYaml({ [key]: 'x' }) });
    const finding = {
      severity: 'error',
      rule: 'unknown-key',
      file: 'widgets/one.yaml',
      line: 12,
      message: `unknown key \`${key}\``,
    };
    expect(lintFindings(dir, NOW)).toEqual([finding]);
    expect(buildFeed({ feedDir: dir, expiresInMs: 86_400_000, now: NOW })).toEqual({
      ok: false,
      findings: [finding],
    });
    expect(existsSync(path.join(dir, MANIFEST_FILE))).toBe(false);
  });

  it.each(inherited)('`%s` inside a list item and a nested mapping is an unknown key', (key) => {
    const findings = lintOne({
      verdict: undefined,
      recommended_version: undefined,
      cves: `\n  - id: CVE-2025-0001\n    ${key}: 1`,
      reminder: `\n  from: installed_on\n  every: P3M\n  task: check\n  ${key}: 2`,
    });
    expect(findings.map((f) => [f.line, f.rule, f.message])).toEqual([
      [12, 'unknown-key', `unknown key \`${key}\` (at cves[0].${key})`],
      [17, 'unknown-key', `unknown key \`${key}\` (at reminder.${key})`],
    ]);
  });

  it('values of the wrong shape are schema errors, never unknown keys (nor a crash)', () => {
    const findings = lintOne({
      verdict: undefined,
      recommended_version: undefined,
      title: '{x: 1}',
      cves: '"none"',
      requires: '[~, "text", [1]]',
      reminder: '~',
    });
    expect(findings.length).toBeGreaterThan(0);
    expect(findings.filter((f) => f.rule !== 'schema')).toEqual([]);
  });

  it('the appliance ignores unknown keys (forward compatibility): a signed feed with one verifies', async () => {
    const feed = makeFeed();
    const file = path.join(feed.dir, 'widgets/one.yaml');
    const before = readFileSync(file);
    const after = Buffer.concat([before, Buffer.from('added_in_2_1: something new\n')]);
    writeFileSync(file, after);
    const manifest = path.join(feed.dir, MANIFEST_FILE);
    writeFileSync(
      manifest,
      readFileSync(manifest, 'utf8')
        .replace(sha256(before), sha256(after))
        .replace(`size: ${before.length}`, `size: ${after.length}`),
    );
    signFeed(feed.dir, feed.key);
    const result = await verifyDir(feed.dir, { trustedKeys: [feed.key.publicKey] });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(lintFindings(feed.dir, NOW).map((f) => f.message)).toEqual(['unknown key `added_in_2_1`']);
  });
});

describe('the nearest known key', () => {
  const keys = ['id', 'title', 'summary', 'verdict', 'recommended_version', 'effective', 'expires', 'cves'];
  it.each([
    ['verdikt', 'verdict'],
    ['recomended_version', 'recommended_version'],
    ['efefctive', 'effective'],
    ['Title', 'title'],
    ['sumary', 'summary'],
    ['cve', 'cves'],
    // A third of a long key's length: three edits away.
    ['recommended_vrsn', 'recommended_version'],
  ])('%s: %s', (key, expected) => {
    expect(nearest(key, keys)).toBe(expected);
  });

  it('a tie goes to the key listed first', () => {
    expect(nearest('ab', ['abc', 'abd'])).toBe('abc');
    expect(nearest('ab', ['abd', 'abc'])).toBe('abd');
  });

  it('suggests nothing for a key too far from every known one', () => {
    expect(nearest('colour', keys)).toBeNull();
    expect(nearest('publisher_notes', keys)).toBeNull();
  });
});
