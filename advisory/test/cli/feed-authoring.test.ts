import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFeedCli } from '../../src/cli/feed/main.ts';
import { advisoryYaml, makeFeed } from '../support/feed.ts';

/** `advisory-feed new` and `advisory-feed lint`: authoring without publishing. */
const NOW = new Date('2026-11-26T10:00:00Z');

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runFeedCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, NOW);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const tmp = () => mkdtempSync(path.join(tmpdir(), 'authoring-'));

/** Every file under `dir` with its size and modification time: what "writes nothing" compares. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((name) => {
      const info = statSync(path.join(dir, name));
      return `${name} ${info.size} ${info.mtimeMs}`;
    });
}

/** The template with its placeholders filled in as an author would. */
function fillIn(template: string): string {
  const values: Record<string, string> = {
    title: '"Widget 1 is end of life"',
    product: 'widget',
    affects: '"<2.0.0"',
    verdict: 'eol',
    recommended_version: '"2.5"',
  };
  return template
    .split('\n')
    .map((line) => {
      const key = /^(\w+): "<<fill in/.exec(line)?.[1];
      return key && values[key] ? `${key}: ${values[key]}` : line;
    })
    .join('\n')
    .replace('  <<fill in: what to do, in a paragraph>>', '  Upgrade to widget 2.5.')
    .replace('"<<fill in: the URL of the source, https://...>>"', 'https://example.org/widget-eol');
}

describe('advisory-feed new', () => {
  it('writes the template into the module folder; lint names each placeholder until it is filled in', async () => {
    const feed = tmp();
    expect(await run(['new', '--feed', feed, '--module', 'widgets', '--id', 'W-EOL-1'])).toEqual({
      code: 0,
      out: `wrote ${feed}/widgets/w-eol-1.yaml: fill in its placeholders, then run advisory-feed lint --feed ${feed}`,
      err: '',
    });
    const file = path.join(feed, 'widgets/w-eol-1.yaml');
    const template = readFileSync(file, 'utf8');
    expect(template).toContain('id: "W-EOL-1"\n');
    expect(template).toContain('effective: "2026-11-26"\nexpires: "2027-11-26"\n');

    const unfilled = await run(['lint', '--feed', feed]);
    expect(unfilled.code).toBe(1);
    const placeholders = unfilled.err.split('\n').filter((l) => l.includes('[placeholder]'));
    expect(placeholders).toEqual(
      [
        [6, 'title'],
        [8, 'product'],
        [10, 'affects'],
        [12, 'verdict'],
        [14, 'recommended_version'],
        [28, 'summary'],
        [31, 'references[0]'],
      ].map(
        ([line, field]) =>
          `widgets/w-eol-1.yaml:${line}: error [placeholder] ${field}: a placeholder of the template is left in; fill it in (or delete an optional field)`,
      ),
    );
    expect(unfilled.err.split('\n').at(-1)).toMatch(/^lint failed: \d+ errors$/);

    writeFileSync(file, fillIn(template));
    expect(await run(['lint', '--feed', feed])).toEqual({
      code: 0,
      out: 'lint: 1 advisory file in 1 module, no errors',
      err: '',
    });
    const built = await run(['build', '--feed', feed]);
    expect(built.code, built.err).toBe(0);
  });

  it('writes into the current directory without --feed (the process, as run by npx)', () => {
    const feed = tmp();
    const bin = path.resolve(import.meta.dirname, '../../bin/advisory-feed.mjs');
    const out = execFileSync(process.execPath, [bin, 'new', '--module', 'widgets', '--id', 'W-9'], {
      cwd: feed,
      encoding: 'utf8',
    });
    expect(out).toBe(
      'wrote widgets/w-9.yaml: fill in its placeholders, then run advisory-feed lint --feed .\n',
    );
    expect(readFileSync(path.join(feed, 'widgets/w-9.yaml'), 'utf8')).toMatch(/^id: "W-9"$/m);
  });

  it('never overwrites an advisory (exit 2), and adds to an existing module', async () => {
    const feed = tmp();
    mkdirSync(path.join(feed, 'widgets'));
    writeFileSync(path.join(feed, 'widgets/w-1.yaml'), 'mine\n');
    expect(await run(['new', '--feed', feed, '--module', 'widgets', '--id', 'W-1'])).toEqual({
      code: 2,
      out: '',
      err: `${feed}/widgets/w-1.yaml exists; refusing to overwrite an advisory (advisory-feed new --help shows how)`,
    });
    expect(readFileSync(path.join(feed, 'widgets/w-1.yaml'), 'utf8')).toBe('mine\n');
    expect((await run(['new', '--feed', feed, '--module', 'widgets', '--id', 'W-2'])).code).toBe(0);
    expect(readdirSync(path.join(feed, 'widgets')).sort()).toEqual(['w-1.yaml', 'w-2.yaml']);
  });

  it('refuses bad input with one clear line (exit 2) and writes nothing', async () => {
    const feed = tmp();
    const elsewhere = tmp();
    symlinkSync(elsewhere, path.join(feed, 'linked'));
    const cases: [string[], string][] = [
      [['new', '--feed', feed, '--module', 'widgets'], 'new needs --module <module> and --id <id>'],
      [['new', '--feed', feed, '--id', 'W-1'], 'new needs --module <module> and --id <id>'],
      [
        ['new', '--feed', feed, '--module', 'Platform', '--id', 'W-1'],
        '--module: module folder "Platform": lowercase ASCII letters, digits and "-" only, starting with a letter or digit (at most 64)',
      ],
      [
        ['new', '--feed', feed, '--module', 'widgets', '--id', '../W-1'],
        '--id: advisory id "../W-1": 3 to 64 ASCII letters, digits, ".", "_" and "-", starting with a letter or digit',
      ],
      [
        ['new', '--feed', feed, '--module', 'widgets', '--id', 'W'],
        '--id: advisory id "W": 3 to 64 ASCII letters, digits, ".", "_" and "-", starting with a letter or digit',
      ],
      [
        ['new', '--feed', path.join(feed, 'nowhere'), '--module', 'widgets', '--id', 'W-1'],
        `--feed ${feed}/nowhere: no such directory`,
      ],
      [['new', '--feed', feed, '--module', 'widgets', '--id', ''], '--id needs a value'],
      [
        ['new', '--feed', feed, '--module', 'linked', '--id', 'W-1'],
        `${feed}/linked exists and is not a folder; a module must be a real folder`,
      ],
    ];
    for (const [argv, message] of cases) {
      expect(await run(argv), argv.join(' ')).toEqual({
        code: 2,
        out: '',
        err: `${message} (advisory-feed new --help shows how)`,
      });
    }
    expect(await run(['new', '--module', 'widgets', '--id', 'W-1', '--verdict', 'eol'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^Unknown option '--verdict'/),
    });
    expect(readdirSync(feed)).toEqual(['linked']);
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe('advisory-feed lint', () => {
  it('checks a built and signed feed without writing anything (exit 0, warnings printed)', async () => {
    const feed = makeFeed({
      'widgets/one.yaml': advisoryYaml({}),
      'widgets/notes.txt': 'not an advisory',
    });
    const before = snapshot(feed.dir);
    expect(await run(['lint', '--feed', feed.dir])).toEqual({
      code: 0,
      out: 'lint: 1 advisory file in 1 module, no errors, 1 warning',
      err: 'widgets/notes.txt:1: warning [layout] not an advisory file (.yaml or .yml): not listed in the manifest',
    });
    expect(snapshot(feed.dir)).toEqual(before);
  });

  it('reports errors with file and line (exit 1), and still writes nothing', async () => {
    const feed = makeFeed();
    writeFileSync(
      path.join(feed.dir, 'widgets/two.yaml'),
      advisoryYaml({ id: 'TEST-2', recommended_version: undefined, recomended_version: '"2.1"' }),
    );
    const before = snapshot(feed.dir);
    expect(await run(['lint', '--feed', feed.dir])).toEqual({
      code: 1,
      out: '',
      err: [
        'widgets/two.yaml:11: error [unknown-key] unknown key `recomended_version`: did you mean `recommended_version`?',
        'lint failed: 1 error',
      ].join('\n'),
    });
    expect(snapshot(feed.dir)).toEqual(before);
  });

  it('usage: --feed is required and must be a directory (exit 2)', async () => {
    const feed = makeFeed();
    expect(await run(['lint'])).toEqual({
      code: 2,
      out: '',
      err: 'lint needs --feed <dir> (advisory-feed lint --help shows how)',
    });
    expect(await run(['lint', '--feed', path.join(feed.dir, 'manifest.yaml')])).toEqual({
      code: 2,
      out: '',
      err: `--feed ${feed.dir}/manifest.yaml: not a directory (advisory-feed lint --help shows how)`,
    });
  });

  it('new and lint have help texts, and the tool lists them', async () => {
    const tool = await run(['--help']);
    expect(tool.out).toMatch(/^ {2}new {6}write the template of a new advisory \(--module, --id\)$/m);
    expect(tool.out).toMatch(/^ {2}lint {5}check the feed directory as build does, writing nothing$/m);
    for (const command of ['new', 'lint']) {
      const help = await run([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.out).toMatch(new RegExp(`^Usage: advisory-feed ${command} `));
    }
  });
});
