import { versionText } from '../../version.ts';
import { runFeedCli } from '../feed/main.ts';
import { EXIT_USAGE, exitCodeOf, type Io } from '../io.ts';

export const advisoryHelp = `Usage: advisory <command> [options]

Commands:
  run          the appliance daemon: refresh, dashboard, alerts
  check        one refresh and evaluation; exit 0 nothing to do, 1 action needed,
               2 configuration error, 3 no verified feed
  log verify   verify the decision log and its checkpoints offline
  feed         the feed builder: keygen, build, verify, sign (as advisory-feed)

advisory <command> --help shows a command's options; advisory --version the version.
Configuration: ADVISORY_* environment variables (see the README).`;

type Command = (argv: string[], io: Io, env: NodeJS.ProcessEnv) => Promise<number>;

/** Each command's module is loaded when it runs (the daemon's is the heaviest). */
const commands: Record<string, () => Promise<{ help: string; run: Command }>> = {
  run: async () => {
    const m = await import('./run.ts');
    return { help: m.runHelp, run: m.run };
  },
  check: async () => {
    const m = await import('./check.ts');
    return { help: m.checkHelp, run: m.check };
  },
  log: async () => {
    const m = await import('./log.ts');
    return { help: m.logHelp, run: m.logCommand };
  },
};

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
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    io.err(`unknown command "${name}"\n\n${advisoryHelp}`);
    return EXIT_USAGE;
  }
  try {
    const command = await load();
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(command.help);
      return 0;
    }
    if (rest.includes('--version')) {
      io.out(versionText('advisory'));
      return 0;
    }
    return await command.run(rest, io, env);
  } catch (error) {
    return exitCodeOf(error, io, `advisory ${name}`);
  }
}
