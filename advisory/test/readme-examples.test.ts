import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFeedCli } from '../src/cli/feed/main.ts';

/**
 * The README's examples against the committed sample feed hold on any date: the sample's
 * manifest expires (it must: a feed valid for ever would defeat freeze protection), so
 * the examples verify it as of its publication (`--now`), and these tests run them with
 * the command line's clock far before and far after the sample's validity.
 */
const repo = path.resolve(import.meta.dirname, '../..');

/** Every `npx advisory-feed ...` command of a document's bash blocks, its continuation lines joined. */
function feedExamples(file: string): string[][] {
  const text = readFileSync(path.join(repo, file), 'utf8');
  const commands: string[][] = [];
  for (const [, block] of text.matchAll(/```bash\n([\s\S]*?)```/g)) {
    const joined = (block as string).replace(/\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) {
      const command = line.replace(/\s+#.*$/, '').trim();
      if (command.startsWith('npx advisory-feed verify') && command.includes('advisory/sample-feed '))
        commands.push(command.split(/\s+/).slice(2));
    }
  }
  return commands;
}

const clocks = [new Date('2000-01-01T00:00:00Z'), new Date('2100-01-01T00:00:00Z')];

describe.each(['README.md', 'docs/advisory/inventory.md', 'advisory/sample-feed/README.md'])(
  'the sample feed examples of %s',
  (file) => {
    const examples = feedExamples(file);

    it('are there, and each gives the time it verifies as of', () => {
      expect(examples.length).toBeGreaterThan(0);
      for (const argv of examples) expect(argv).toContain('--now');
    });

    it.each(clocks.map((clock) => [clock.toISOString(), clock] as const))(
      'run as shown at %s',
      async (_, clock) => {
        for (const argv of examples) {
          const out: string[] = [];
          const err: string[] = [];
          // Paths in the examples are relative to the repository root.
          const rooted = argv.map((arg) => (arg.startsWith('advisory/') ? path.join(repo, arg) : arg));
          const code = await runFeedCli(rooted, { out: (l) => out.push(l), err: (l) => err.push(l) }, clock);
          expect(code, err.join('\n')).toBe(0);
          expect(out.join('\n')).toMatch(/^feed \S+ OK /);
          if (argv.includes('--inventory')) {
            for (const verdict of ['blocked', 'eol', 'wait-for-patch', 'hold', 'install'])
              expect(out.join('\n')).toMatch(new RegExp(`^ {2}\\S+: ${verdict}$`, 'm'));
          }
        }
      },
    );
  },
);
