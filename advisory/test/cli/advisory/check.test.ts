import { describe, expect, it } from 'vitest';
import { printable } from '../../../src/cli/io.ts';
import { setup } from '../../support/appliance.ts';
import { runAdvisory } from '../../support/cli.ts';
import { advisoryYaml } from '../../support/feed.ts';

const check = (env: NodeJS.ProcessEnv) => runAdvisory(['check'], env);

describe('advisory check', () => {
  it('prints outside text without its control characters', async () => {
    expect(printable('ok\u001b[2J\u001b]0;pwned\u0007 \u202eevil\r\nnext')).toBe(
      'ok\\u{1b}[2J\\u{1b}]0;pwned\\u{7} \\u{202e}evil\\u{d}\\u{a}next',
    );
    const s = setup({
      publishedAt: new Date(Date.now() - 86_400_000),
      assets: 'assets:\n  - { name: box, products: { widget: "\\e[2J\\e]0;pwned\\a2.5" } }\n',
    });
    const result = await check(s.env);
    // No control character but the newlines between lines.
    expect([...result.out].filter((c) => c !== '\n' && (c.codePointAt(0) as number) < 0x20)).toEqual([]);
    expect(result.out).toContain('widget "\\u{1b}[2J\\u{1b}]0;pwned\\u{7}2.5" is not a version');
  });

  it('counts an unreadable version as needing action (exit 1), never as nothing to do', async () => {
    const s = setup({
      publishedAt: new Date(Date.now() - 86_400_000),
      assets: 'assets:\n  - { name: box, products: { widget: "two point five" } }\n',
    });
    const result = await check(s.env);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/^1 asset needs action$/m);
  });
});

describe('advisory check --verbose', () => {
  it('prints each advisory of an asset under its line: what to do, references, CVEs', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000) });
    const plain = await check(s.env);
    const result = await runAdvisory(['check', '--verbose'], s.env);
    expect(result.code).toBe(plain.code);
    expect(result.code).toBe(1);
    expect(result.out).toContain(
      [
        'old-box   eol             widget 1.9 -> 2.5 (W-EOL-1)',
        '    eol: Widget 1 is end of life (W-EOL-1)',
        '      Something happened.',
        '      https://example.org/advisory',
        'new-box   install         widget 2.1 -> 2.5 (W-2.5)',
        '    install: Widget 2.5 (W-2.5)',
        '      Something happened.',
        '      https://example.org/advisory',
        '      CVE-2026-0001 (CVSS 7.5) https://www.cve.org/CVERecord?id=CVE-2026-0001',
        'done-box  -               ',
        '',
        '2 assets need action',
      ].join('\n'),
    );
    // Without --verbose the table alone, as before.
    expect(plain.out).not.toContain('Something happened.');
  });

  it('keeps a summary of several lines as several indented lines', async () => {
    const s = setup({
      publishedAt: new Date(Date.now() - 86_400_000),
      files: {
        'widgets/eol.yaml': advisoryYaml({
          id: 'W-EOL-1',
          affects: '"<2.0.0"',
          recommended_version: '"2.5"',
          summary: '|\n  Move to 2.5.\n  Back up first.',
          references: '\n  - https://example.org/a\n  - http://example.org/b',
        }),
      },
      assets: 'assets:\n  - { name: box, products: { widget: "1.0" } }\n',
    });
    const result = await runAdvisory(['check', '-v'], s.env);
    expect(result.out).toContain(
      [
        '    eol: A test advisory (W-EOL-1)',
        '      Move to 2.5.',
        '      Back up first.',
        '      https://example.org/a',
        '      http://example.org/b',
      ].join('\n'),
    );
  });
});
