import { versionText } from '../../version.ts';
import { EXIT_USAGE, exitCodeOf, type Io } from '../io.ts';

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

/**
 * Each command's code is loaded when it runs: `verify` (on the appliance's path, and timed
 * by bench/feed-verify) then starts without the authoring side's YAML tooling.
 */
const commands: Record<string, () => Promise<{ help: string; run: Command }>> = {
  keygen: async () => import('./keygen.ts').then((m) => ({ help: m.keygenHelp, run: m.keygen })),
  new: async () => import('./new.ts').then((m) => ({ help: m.newHelp, run: m.newAdvisory })),
  lint: async () => import('./lint.ts').then((m) => ({ help: m.lintHelp, run: m.lint })),
  build: async () => import('./build.ts').then((m) => ({ help: m.buildHelp, run: m.build })),
  verify: async () => import('./verify.ts').then((m) => ({ help: m.verifyHelp, run: m.verify })),
  sign: async () => import('./sign.ts').then((m) => ({ help: m.signHelp, run: m.sign })),
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
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    io.err(`unknown command "${name}"\n\n${feedHelp}`);
    return EXIT_USAGE;
  }
  const command = await load();
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
