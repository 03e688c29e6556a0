import { versionText } from '../../version.ts';
import { EXIT_USAGE, exitCodeOf, type Io } from '../io.ts';
import { build, buildHelp } from './build.ts';
import { keygen, keygenHelp } from './keygen.ts';
import { lint, lintHelp } from './lint.ts';
import { newAdvisory, newHelp } from './new.ts';
import { sign, signHelp } from './sign.ts';
import { verify, verifyHelp } from './verify.ts';

export const feedHelp = `Usage: advisory-feed <command> [options]

Commands (publishing order: author, build, verify, sign, publish):
  keygen   create an Ed25519 signing key pair (signify format)
  new      write the template of a new advisory (--module, --id)
  lint     check the feed directory as build does, writing nothing
  build    lint the advisories and write manifest.yaml (version: the next free one)
  verify   check a feed exactly as the appliance does (dry run)
  sign     write manifest.yaml.sig

advisory-feed <command> --help shows a command's options.
Exit codes: 0 success, 1 the feed is refused, 2 usage or unreadable input.`;

type Command = (argv: string[], io: Io, now: Date) => Promise<number>;

const commands: Record<string, { help: string; run: Command }> = {
  keygen: { help: keygenHelp, run: keygen },
  new: { help: newHelp, run: newAdvisory },
  lint: { help: lintHelp, run: lint },
  build: { help: buildHelp, run: build },
  verify: { help: verifyHelp, run: verify },
  sign: { help: signHelp, run: sign },
};

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
  const command = commands[name];
  if (!command) {
    io.err(`unknown command "${name}"\n\n${feedHelp}`);
    return EXIT_USAGE;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(command.help);
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
