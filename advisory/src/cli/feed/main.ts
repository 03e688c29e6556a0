import { versionText } from '../../version.ts';
import { type CommandSpec, commandHelp, HELP_WIDTH, wrap } from '../command-table.ts';
import { EXIT_USAGE, exitCodeOf, type Io } from '../io.ts';

type Command = (argv: string[], io: Io, now: Date) => Promise<number>;

export interface FeedCommand {
  /** One line for the tool's help. */
  summary: string;
  /** The command's argument table (its --help) and code, loaded when it runs. */
  load: () => Promise<{ spec: CommandSpec; run: Command }>;
}

/**
 * The commands, in publishing order: the one table the dispatch, `advisory-feed --help`
 * and `advisory --help` read. Each command's code is loaded when it runs: `verify` (on
 * the appliance's path, and timed by bench/feed-verify) then starts without the authoring
 * side's YAML tooling.
 */
export const feedCommands: Readonly<Record<string, FeedCommand>> = {
  keygen: {
    summary: 'create an Ed25519 signing key pair (signify format)',
    load: async () => import('./keygen.ts').then((m) => ({ spec: m.keygenSpec, run: m.keygen })),
  },
  new: {
    summary: 'write the template of a new advisory (--module, --id)',
    load: async () => import('./new.ts').then((m) => ({ spec: m.newSpec, run: m.newAdvisory })),
  },
  lint: {
    summary: 'check the feed directory as build does, writing nothing',
    load: async () => import('./lint.ts').then((m) => ({ spec: m.lintSpec, run: m.lint })),
  },
  build: {
    summary: 'lint the advisories and write manifest.yaml (version: the next free one)',
    load: async () => import('./build.ts').then((m) => ({ spec: m.buildSpec, run: m.build })),
  },
  verify: {
    summary: 'check a feed exactly as the appliance does (dry run)',
    load: async () => import('./verify.ts').then((m) => ({ spec: m.verifySpec, run: m.verify })),
  },
  sign: {
    summary: 'write manifest.yaml.sig',
    load: async () => import('./sign.ts').then((m) => ({ spec: m.signSpec, run: m.sign })),
  },
};

/** The command list of a tool's help: each name and its summary, aligned. */
export function commandList(commands: Readonly<Record<string, { summary: string }>>, indent = '  '): string {
  const names = Object.keys(commands);
  const column = Math.max(...names.map((n) => n.length)) + 3;
  return names
    .map((name) => {
      const start = `${indent}${name.padEnd(column)}`;
      return (
        start +
        wrap(
          (commands[name] as { summary: string }).summary,
          HELP_WIDTH,
          ' '.repeat(start.length),
          start.length,
        )
      );
    })
    .join('\n');
}

export const feedHelp = `Usage: advisory-feed <command> [options]

Commands (publishing order: author, build, verify, sign, publish):
${commandList(feedCommands)}

advisory-feed <command> --help shows a command's options.
Exit codes: 0 success, 1 the feed is refused, 2 usage or unreadable input.`;

/** The whole feed builder as a function of argv: testable without a process. */
export async function runFeedCli(argv: string[], io: Io, now = new Date()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    io.out(versionText('advisory-feed'));
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(feedHelp);
    return name ? 0 : EXIT_USAGE;
  }
  const entry = Object.hasOwn(feedCommands, name) ? feedCommands[name] : undefined;
  if (!entry) {
    io.err(`unknown command "${name}"\n\n${feedHelp}`);
    return EXIT_USAGE;
  }
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(commandHelp(command.spec));
    return 0;
  }
  if (rest.includes('--version')) {
    io.out(versionText('advisory-feed'));
    return 0;
  }
  try {
    return await command.run(rest, io, now);
  } catch (error) {
    return exitCodeOf(error, io, `advisory-feed ${name}`);
  }
}
