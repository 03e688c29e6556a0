import { ConfigError } from '../../appliance/config.ts';
import { StateError } from '../../feed/state.ts';
import { versionText } from '../../version.ts';
import { runFeedCli } from '../feed/main.ts';
import { EXIT_USAGE, exitCodeOf, type Io } from '../io.ts';
import { check, checkHelp } from './check.ts';
import { logCommand, logHelp } from './log.ts';
import { run, runHelp } from './run.ts';

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

const commands: Record<string, { help: string; run: Command }> = {
  run: { help: runHelp, run },
  check: { help: checkHelp, run: check },
  log: { help: logHelp, run: logCommand },
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
  const command = commands[name];
  if (!command) {
    io.err(`unknown command "${name}"\n\n${advisoryHelp}`);
    return EXIT_USAGE;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(command.help);
    return 0;
  }
  try {
    return await command.run(rest, io, env);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof StateError) {
      io.err(`configuration error: ${error.message}`);
      return EXIT_USAGE;
    }
    return exitCodeOf(error, io, `advisory ${name}`);
  }
}
