import { describe, expect, it } from 'vitest';
import { printable } from '../../../src/cli/io.ts';
import { setup } from '../../support/appliance.ts';
import { runAdvisory } from '../../support/cli.ts';

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
