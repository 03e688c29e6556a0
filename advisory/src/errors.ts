/**
 * The one error model of both tools: every error the code throws on purpose descends from
 * CommandError and carries its exit code and how its line begins, so the command line
 * maps it in one place (cli/io.ts exitCodeOf) without knowing its class. The codes:
 *   0  success (and for `advisory check`: nothing needs action)
 *   1  refused: the feed (or what was to be signed), a broken log (`log verify`), or, for
 *      `advisory check`, something needs action
 *   2  usage, configuration, damaged state or unreadable input: nothing was done
 *   3  `advisory check` only: no verified feed is available
 * The families, by their line:
 *   UsageError            exit 2, the message alone (a command line that cannot be run,
 *                         an input it names that cannot be used; the message names it)
 *   ConfigurationProblem  exit 2, `configuration error: ` (a setting or a file it names)
 *   InputProblem          exit 2, `error: ` (a file, key, document or source that cannot
 *                         be read or used, where no command line or setting named it)
 *   RejectedError         exit 1, `error: ` (the feed, or what was to be signed, refused)
 */
export const EXIT_OK = 0;
export const EXIT_REJECTED = 1;
export const EXIT_USAGE = 2;
export const EXIT_NO_FEED = 3;

export type ExitCode = typeof EXIT_OK | typeof EXIT_REJECTED | typeof EXIT_USAGE | typeof EXIT_NO_FEED;

export abstract class CommandError extends Error {
  abstract readonly exitCode: ExitCode;
  /** How the line on stderr begins (`configuration error: `, `error: `, or nothing). */
  abstract readonly prefix: string;
}

/** A command line that cannot be run as given, or an input it names that cannot be used: exit 2. */
export class UsageError extends CommandError {
  override name = 'UsageError';
  readonly exitCode = EXIT_USAGE;
  readonly prefix = '';
}

/** The feed (or what was about to be signed) is refused: exit 1. */
export class RejectedError extends CommandError {
  override name = 'RejectedError';
  readonly exitCode = EXIT_REJECTED;
  readonly prefix = 'error: ';
}

/** A setting or a file it names cannot be used; the message begins with the variable. */
export abstract class ConfigurationProblem extends CommandError {
  readonly exitCode = EXIT_USAGE;
  readonly prefix = 'configuration error: ';
}

/**
 * A file, key, document or source cannot be read or used. Where the command line or a
 * setting named it, the command says which (cli/io.ts forInput, or a ConfigError).
 */
export abstract class InputProblem extends CommandError {
  readonly exitCode = EXIT_USAGE;
  readonly prefix = 'error: ';
}
