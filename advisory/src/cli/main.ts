import { build, buildHelp } from './build.ts';
import { EXIT_BAD_FEED, EXIT_USAGE, FeedError, type Io, UsageError } from './errors.ts';
import { keygen, keygenHelp } from './keygen.ts';
import { sign, signHelp } from './sign.ts';
import { verify, verifyHelp } from './verify.ts';

export const mainHelp = `Usage: advisory-feed <command> [options]

Commands (publishing order: author, build, verify, sign, publish):
  keygen   create an Ed25519 signing key pair (signify format)
  build    lint the advisories and write manifest.yaml
  verify   check a feed exactly as the appliance does (dry run)
  sign     write manifest.yaml.sig

advisory-feed <command> --help shows a command's options.
Exit codes: 0 success, 1 the feed (or a key) is bad, 2 usage.`;

const commands: Record<string, { help: string; run: (argv: string[], io: Io, now: Date) => number }> = {
  keygen: { help: keygenHelp, run: keygen },
  build: { help: buildHelp, run: build },
  verify: { help: verifyHelp, run: verify },
  sign: { help: signHelp, run: sign },
};

/** The whole CLI as a function of argv: testable without a process. */
export function runCli(argv: string[], io: Io, now = new Date()): number {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(mainHelp);
    return name ? 0 : EXIT_USAGE;
  }
  const command = commands[name];
  if (!command) {
    io.err(`unknown command "${name}"\n\n${mainHelp}`);
    return EXIT_USAGE;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(command.help);
    return 0;
  }
  try {
    return command.run(rest, io, now);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(error as Error).message}\n\n${command.help}`);
      return EXIT_USAGE;
    }
    if (error instanceof FeedError) {
      io.err(`error: ${error.message}`);
      return EXIT_BAD_FEED;
    }
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      io.err(`error: ${(error as Error).message}`);
      return EXIT_BAD_FEED;
    }
    throw error;
  }
}
