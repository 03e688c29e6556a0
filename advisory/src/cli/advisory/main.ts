import { versionText } from '../../version.ts';
import { type CommandSpec, commandHelp } from '../command-table.ts';
import { commandList, feedCommands, runFeedCli } from '../feed/main.ts';
import { EXIT_USAGE, exitCodeOf, type Io } from '../io.ts';

type Command = (argv: string[], io: Io, env: NodeJS.ProcessEnv) => Promise<number>;

/**
 * The commands: the one table the dispatch and `advisory --help` read (with the feed
 * builder's, run as `advisory feed <command>`). Each module is loaded when it runs (the
 * daemon's is the heaviest).
 */
export const advisoryCommands: Readonly<
  Record<string, { usage: string; summary: string; load: () => Promise<{ spec: CommandSpec; run: Command }> }>
> = {
  run: {
    usage: 'run',
    summary: 'the appliance daemon: refresh, dashboard, alerts',
    load: async () => import('./run.ts').then((m) => ({ spec: m.runSpec, run: m.run })),
  },
  check: {
    usage: 'check',
    summary:
      'one refresh and evaluation; exit 0 nothing to do, 1 action needed, 2 configuration error, 3 no verified feed',
    load: async () => import('./check.ts').then((m) => ({ spec: m.checkSpec, run: m.check })),
  },
  log: {
    usage: 'log verify',
    summary: 'verify the decision log and its checkpoints offline',
    load: async () => import('./log.ts').then((m) => ({ spec: m.logVerifySpec, run: m.logCommand })),
  },
};

const listed = Object.fromEntries([
  ...Object.values(advisoryCommands).map((c) => [c.usage, c] as const),
  ...Object.entries(feedCommands).map(([name, c]) => [`feed ${name}`, c] as const),
]);

export const advisoryHelp = `Usage: advisory <command> [options]

Commands (advisory feed <command> runs the feed builder, advisory-feed <command>):
${commandList(listed)}

advisory <command> --help shows a command's options; advisory --version the version.
Configuration: ADVISORY_* environment variables (docs/advisory/appliance.md lists them).`;

/** The appliance's command line as a function of argv and environment: testable without a process. */
export async function runAdvisoryCli(
  argv: string[],
  io: Io,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    io.out(versionText('advisory'));
    return 0;
  }
  if (name === 'feed') return runFeedCli(rest, io);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(advisoryHelp);
    return name ? 0 : EXIT_USAGE;
  }
  const entry = Object.hasOwn(advisoryCommands, name) ? advisoryCommands[name] : undefined;
  if (!entry) {
    io.err(`unknown command "${name}"\n\n${advisoryHelp}`);
    return EXIT_USAGE;
  }
  try {
    const command = await entry.load();
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(commandHelp(command.spec));
      return 0;
    }
    if (rest.includes('--version')) {
      io.out(versionText('advisory'));
      return 0;
    }
    return await command.run(rest, io, env);
  } catch (error) {
    return exitCodeOf(error, io, `advisory ${entry.usage}`);
  }
}
