import { describe, expect, it } from 'vitest';
import { advisoryCommands, runAdvisoryCli } from '../../src/cli/advisory/main.ts';
import {
  type CommandSpec,
  commandHelp,
  flag,
  HELP_WIDTH,
  parseCommand,
  wrap,
} from '../../src/cli/command-table.ts';
import { feedCommands, runFeedCli } from '../../src/cli/feed/main.ts';
import { UsageError } from '../../src/cli/io.ts';
import { NOW } from '../support/feed.ts';

async function output(run: (io: { out: (l: string) => void; err: (l: string) => void }) => Promise<number>) {
  const lines: string[] = [];
  const code = await run({ out: (l) => lines.push(l), err: (l) => lines.push(l) });
  return { code, text: lines.join('\n') };
}
const feedCli = (argv: string[]) => output((io) => runFeedCli(argv, io, NOW));
const advisoryCli = (argv: string[]) => output((io) => runAdvisoryCli(argv, io, {}));

/** The option names an Options section lists, in order. */
const listedOptions = (help: string) =>
  [...(help.split('\nOptions:\n')[1] ?? '').matchAll(/^ {2}(?:-[a-z], )?--([a-z-]+)/gm)].map((m) => m[1]);

describe('help: every command of both tools, from their tables', () => {
  it('advisory-feed --help lists every command of its table', async () => {
    const { code, text } = await feedCli(['--help']);
    expect(code).toBe(0);
    for (const name of Object.keys(feedCommands))
      expect(text).toMatch(new RegExp(`^ {2}${name} {3,}\\S`, 'm'));
  });

  it('advisory --help lists its own commands and every feed command, as advisory feed <command>', async () => {
    const { code, text } = await advisoryCli(['--help']);
    expect(code).toBe(0);
    for (const { usage } of Object.values(advisoryCommands))
      expect(text).toMatch(new RegExp(`^ {2}${usage} {3,}\\S`, 'm'));
    for (const name of Object.keys(feedCommands))
      expect(text).toMatch(new RegExp(`^ {2}feed ${name} {3,}\\S`, 'm'));
  });

  it.each(Object.keys(feedCommands))(
    'advisory-feed %s --help is made from its table: every option, nothing else',
    async (name) => {
      const { spec } = await (feedCommands[name] as (typeof feedCommands)[string]).load();
      const { code, text } = await feedCli([name, '--help']);
      expect(code).toBe(0);
      expect(text).toBe(commandHelp(spec));
      expect(listedOptions(text)).toEqual(Object.keys(spec.options));
      expect(text.startsWith(`Usage: advisory-feed ${name} `)).toBe(true);
      // The same through the appliance's command.
      expect((await advisoryCli(['feed', name, '--help'])).text).toBe(text);
    },
  );

  it.each(Object.keys(advisoryCommands))(
    'advisory %s --help is made from its table: every option, nothing else',
    async (name) => {
      const entry = advisoryCommands[name] as (typeof advisoryCommands)[string];
      const { spec } = await entry.load();
      // Asked as the command is run (`advisory log verify --help`), and by its name alone.
      const { code, text } = await advisoryCli([...entry.usage.split(' '), '--help']);
      expect(code).toBe(0);
      expect(text).toBe(commandHelp(spec));
      expect(listedOptions(text)).toEqual(Object.keys(spec.options));
      expect(text.startsWith(`Usage: advisory ${entry.usage}`)).toBe(true);
      expect(spec.usage).toBe(`advisory ${entry.usage}`);
      expect((await advisoryCli([name, '-h'])).text).toBe(text);
      for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(HELP_WIDTH);
      expect(text).not.toMatch(/readme/i);
    },
  );

  it('no help sends the reader to the README, and none is wider than the terminal', async () => {
    const helps = [
      await feedCli(['--help']),
      await advisoryCli(['--help']),
      await advisoryCli(['feed', '--help']),
      ...(await Promise.all(Object.keys(feedCommands).map((name) => feedCli([name, '--help'])))),
      ...(await Promise.all(Object.keys(advisoryCommands).map((name) => advisoryCli([name, '--help'])))),
    ];
    for (const { code, text } of helps) {
      expect(code).toBe(0);
      expect(text).not.toMatch(/readme/i);
    }
    for (const { text } of helps)
      for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(HELP_WIDTH);
  });
});

describe('the command table', () => {
  const spec = {
    usage: 'tool go',
    description: ['Goes somewhere, and says where it went when it gets there.'],
    options: {
      to: { type: 'string', value: '<place>', required: true, help: 'Where to go.' },
      by: { type: 'string', value: '<how>', required: true, help: 'How to go there.' },
      via: { type: 'string', value: '<stop>', multiple: true, help: 'A stop on the way.' },
      speed: { type: 'string', default: 'slow', help: 'How fast.' },
      from: { type: 'string', value: '<dir>', default: '.', help: 'Where from.' },
      quiet: { type: 'boolean', default: false, help: 'Say nothing.' },
    },
  } as const satisfies CommandSpec;

  it('writes usage, description and options with their notes', () => {
    expect(commandHelp(spec)).toBe(
      [
        'Usage: tool go --to <place> --by <how> [--via <stop>] [--speed <value>] [--from <dir>]',
        '               [--quiet]',
        '',
        'Goes somewhere, and says where it went when it gets there.',
        '',
        'Options:',
        '  --to <place>     Where to go. Required.',
        '  --by <how>       How to go there. Required.',
        '  --via <stop>     A stop on the way. May be given more than once.',
        '  --speed <value>  How fast. Default: slow.',
        '  --from <dir>     Where from. Default: ".".',
        '  --quiet          Say nothing.',
      ].join('\n'),
    );
  });

  it('puts the text of a long option below it, and wraps long text under its column', () => {
    const long = {
      usage: 't',
      description: [],
      options: {
        ['x'.repeat(38)]: { type: 'boolean', help: 'h' },
        ['y'.repeat(30)]: { type: 'boolean', help: 'i' },
        ['z'.repeat(28)]: { type: 'boolean', help: `${'word '.repeat(12)}end` },
      },
    } satisfies CommandSpec;
    const lines = commandHelp(long).split('\n');
    expect(lines.slice(lines.indexOf('Options:'))).toEqual([
      'Options:',
      `  --${'x'.repeat(38)}`,
      `${' '.repeat(34)}h`,
      `  --${'y'.repeat(30)}`,
      `${' '.repeat(34)}i`,
      `  --${'z'.repeat(28)}  ${'word '.repeat(10)}word`,
      `${' '.repeat(34)}word end`,
    ]);
  });

  it('quotes a default that is not one plain word; a command of no options has no Options section', () => {
    const quoted = {
      usage: 'tool log verify',
      description: ['Checks.'],
      options: { comment: { type: 'string', default: 'two words', help: 'A comment.' } },
    } satisfies CommandSpec;
    expect(commandHelp(quoted)).toMatch(/A comment\. Default: "two words"\.$/);
    const strict = {
      ...quoted,
      options: { x: { type: 'string', required: true, help: 'x' } },
    } satisfies CommandSpec;
    expect(() => parseCommand(strict, [])).toThrow('log verify needs --x <value>');
    expect(commandHelp({ usage: 'tool go', description: ['Goes.'], options: {} })).toBe(
      'Usage: tool go\n\nGoes.',
    );
  });

  it('names a short form before its option, and notes and refuses options that do not go together', () => {
    const pair = {
      usage: 'tool show',
      description: [],
      options: {
        json: {
          type: 'boolean',
          help: 'As JSON.',
          notWith: { option: 'verbose', because: 'the JSON holds it all' },
        },
        verbose: { type: 'boolean', short: 'v', help: 'More.' },
        plain: { type: 'boolean', help: 'Plainly.' },
      },
    } as const satisfies CommandSpec;
    expect(commandHelp(pair)).toBe(
      [
        'Usage: tool show [--json] [--verbose] [--plain]',
        '',
        'Options:',
        '  --json         As JSON. Not with --verbose.',
        '  -v, --verbose  More. Not with --json.',
        '  --plain        Plainly.',
      ].join('\n'),
    );
    const refused = 'usage: --json and --verbose do not go together: the JSON holds it all';
    const refusal = (argv: string[]) => {
      try {
        return { ...parseCommand(pair, argv) };
      } catch (error) {
        return error instanceof UsageError ? `usage: ${error.message}` : error;
      }
    };
    expect(refusal(['--json', '-v'])).toBe(refused);
    expect(refusal(['--verbose', '--json'])).toBe(refused);
    expect(refusal(['-v', '--plain'])).toEqual({ verbose: true, plain: true });
    expect(refusal(['--json', '--plain'])).toEqual({ json: true, plain: true });
    // Only what the command line names can conflict, never a default.
    const defaulted = {
      ...pair,
      options: {
        ...pair.options,
        plain: {
          type: 'boolean',
          default: false,
          help: 'Plainly.',
          notWith: { option: 'json', because: 'plain is not JSON' },
        },
      },
    } satisfies CommandSpec;
    expect({ ...parseCommand(defaulted, ['--json']) }).toEqual({ json: true, plain: false });
    expect(() => parseCommand(defaulted, ['--json', '--plain'])).toThrow(
      '--plain and --json do not go together: plain is not JSON',
    );
  });

  it('wraps words, or a list between its items, after what is already on the line', () => {
    expect(wrap('aa bb cc', 5)).toBe('aa bb\ncc');
    expect(wrap('aa bb cc', 6, '  ')).toBe('aa bb\n  cc');
    expect(wrap('aa bb', 6, '', 2)).toBe('aa\nbb');
    expect(wrap(['a b', 'c d'], 5)).toBe('a b\nc d');
    expect(wrap('  spaced   out ', 80)).toBe('spaced out');
    expect(wrap('exactly10c', 10)).toBe('exactly10c');
    expect(wrap('abcd efghi', 10)).toBe('abcd efghi');
    expect(wrap('abcd efghij', 10)).toBe('abcd\nefghij');
  });

  it('names an option with its value, a switch without', () => {
    expect(flag('to', spec.options.to)).toBe('--to <place>');
    expect(flag('speed', spec.options.speed)).toBe('--speed <value>');
    expect(flag('quiet', spec.options.quiet)).toBe('--quiet');
  });

  it('parses by the table: values, defaults, several of one option', () => {
    expect({ ...parseCommand(spec, ['--to', 'x', '--by', 'y', '--via', 'a', '--via', 'b']) }).toEqual({
      to: 'x',
      by: 'y',
      via: ['a', 'b'],
      speed: 'slow',
      from: '.',
      quiet: false,
    });
  });

  it('refuses a missing required option naming all of them, an empty value, an unknown option, a positional', () => {
    const refusal = (argv: string[]) => {
      try {
        parseCommand(spec, argv);
      } catch (error) {
        return error instanceof UsageError ? `usage: ${error.message}` : (error as { code?: string }).code;
      }
      return 'parsed';
    };
    expect(refusal(['--to', 'x'])).toBe('usage: go needs --to <place> and --by <how>');
    expect(refusal(['--by', 'y'])).toBe('usage: go needs --to <place> and --by <how>');
    expect(refusal(['--to', 'x', '--by', ''])).toBe('usage: --by needs a value');
    expect(refusal(['--to', 'x', '--by', 'y', '--toString', 'z'])).toBe('ERR_PARSE_ARGS_UNKNOWN_OPTION');
    expect(refusal(['--to', 'x', '--by', 'y', 'z'])).toBe('ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL');
    expect(refusal(['--to', 'x', '--by', 'y'])).toBe('parsed');
  });
});
