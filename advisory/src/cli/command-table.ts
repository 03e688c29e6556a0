import { type ParseArgsOptionDescriptor, parseArgs } from 'node:util';
import { refuseEmpty } from './inputs.ts';
import { UsageError } from './io.ts';

/**
 * A command's argument table: the one source of its parsing (node:util parseArgs, strict,
 * no positionals), its required options and its --help text, so the help cannot name an
 * option the parser does not take, or leave one out.
 */
export interface OptionSpec extends ParseArgsOptionDescriptor {
  /** What the value is, in the usage line: `<dir>`, `YYYY.MM.DD[.N]`. Strings only. */
  value?: string;
  /** The command refuses to run without it. */
  required?: boolean;
  /** What the option does, in sentences (wrapped when printed). */
  help: string;
  /**
   * An option this one cannot be given with, and why: the parser refuses the two together
   * and the help of each names the other.
   */
  notWith?: { option: string; because: string };
}

export type OptionTable = Record<string, OptionSpec>;

export interface CommandSpec<O extends OptionTable = OptionTable> {
  /** The tool and the command's words: `advisory-feed build`, `advisory log verify`. */
  usage: string;
  /** Paragraphs after the usage line, each wrapped when printed. */
  description: readonly string[];
  options: O;
}

/** The width help text is wrapped to. */
export const HELP_WIDTH = 88;

/**
 * Words of `text` in lines of at most `width` characters: the first after `before`
 * characters already on its line, every other after `indent`.
 */
export function wrap(text: string | readonly string[], width: number, indent = '', before = 0): string {
  const lines: string[] = [];
  let line = '';
  // A list is wrapped between its items only (`[--expires-in <duration>]` stays whole).
  const words = typeof text === 'string' ? text.split(/\s+/).filter(Boolean) : text;
  for (const word of words) {
    const used = lines.length === 0 ? before : indent.length;
    if (line !== '' && used + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join(`\n${indent}`);
}

/** `--name <value>`, or `--name` for a switch. */
export function flag(name: string, option: OptionSpec): string {
  return option.type === 'string' ? `--${name} ${option.value ?? '<value>'}` : `--${name}`;
}

/** A default as written on the command line: quoted unless a plain word (`14d`). */
const defaultText = (value: string) => (/^[\w-]+$/.test(value) ? value : `"${value}"`);

/** The options `name` cannot be given with, declared on either side. */
function partners(options: OptionTable, name: string): string[] {
  const own = options[name]?.notWith?.option;
  const theirs = Object.entries(options)
    .filter(([other, option]) => other !== name && option.notWith?.option === name)
    .map(([other]) => other);
  return [...(own ? [own] : []), ...theirs];
}

/** The command's --help: usage line, description, and every option of its table. */
export function commandHelp(spec: CommandSpec): string {
  const entries = Object.entries(spec.options);
  const usage = entries.map(([name, option]) =>
    option.required ? flag(name, option) : `[${flag(name, option)}]`,
  );
  const head = `Usage: ${spec.usage}`;
  const sections = [wrap([head, ...usage], HELP_WIDTH, ' '.repeat(head.length + 1))];
  for (const paragraph of spec.description) sections.push(wrap(paragraph, HELP_WIDTH));
  if (entries.length > 0) {
    const flags = entries.map(
      ([name, option]) => `${option.short ? `-${option.short}, ` : ''}${flag(name, option)}`,
    );
    const column = Math.min(Math.max(...flags.map((f) => f.length)) + 4, 34);
    const rows = entries.map(([name, option], index) => {
      const label = `  ${flags[index]}`;
      const notes = [
        option.required ? 'Required.' : '',
        option.multiple ? 'May be given more than once.' : '',
        typeof option.default === 'string' ? `Default: ${defaultText(option.default)}.` : '',
        ...partners(spec.options, name).map((other) => `Not with --${other}.`),
      ].filter(Boolean);
      const text = [option.help, ...notes].join(' ');
      const start = label.length + 2 <= column ? label.padEnd(column) : `${label}\n${' '.repeat(column)}`;
      return start + wrap(text, HELP_WIDTH, ' '.repeat(column), column);
    });
    sections.push(`Options:\n${rows.join('\n')}`);
  }
  return sections.join('\n\n');
}

type Config<O extends OptionTable> = { args: string[]; options: O; strict: true; allowPositionals: false };
type Parsed<O extends OptionTable> = ReturnType<typeof parseArgs<Config<O>>>['values'];
type RequiredName<O extends OptionTable> = {
  [K in keyof O]: O[K] extends { required: true } ? K : never;
}[keyof O];

/** The values of a command line, the required ones present. */
export type CommandValues<O extends OptionTable> = Parsed<O> & {
  [K in RequiredName<O> & keyof Parsed<O>]-?: NonNullable<Parsed<O>[K]>;
};

/**
 * Parses `argv` by the table: an unknown option, a positional argument, an empty value,
 * a missing required option or two that do not go together is a UsageError (exit 2).
 */
export function parseCommand<O extends OptionTable>(spec: CommandSpec<O>, argv: string[]): CommandValues<O> {
  const { values, tokens } = parseArgs({
    args: argv,
    options: spec.options,
    strict: true,
    allowPositionals: false,
    tokens: true,
  });
  refuseEmpty(values);
  const given = values as Record<string, unknown>;
  // What the command line names: a default is not the user's choice.
  const named = new Set(tokens.flatMap((token) => (token.kind === 'option' ? [token.name] : [])));
  for (const [name, option] of Object.entries(spec.options)) {
    const conflict = option.notWith;
    if (conflict && named.has(name) && named.has(conflict.option))
      throw new UsageError(`--${name} and --${conflict.option} do not go together: ${conflict.because}`);
  }
  const required = Object.entries(spec.options).filter(([, option]) => option.required);
  if (required.some(([name]) => given[name] === undefined))
    throw new UsageError(
      `${spec.usage.split(' ').slice(1).join(' ')} needs ${required.map(([name, option]) => flag(name, option)).join(' and ')}`,
    );
  return values as CommandValues<O>;
}
