/**
 * The one error model of both tools: an error that may end a command carries its exit
 * code and how its line begins, so the command line maps it without knowing its class
 * (cli/io.ts exitCodeOf). The codes:
 *   0  success (and for `advisory check`: nothing needs action)
 *   1  refused: the feed (or what was to be signed), a broken log (`log verify`), or, for
 *      `advisory check`, something needs action
 *   2  usage, configuration, damaged state or unreadable input: nothing was done
 *   3  `advisory check` only: no verified feed is available
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

/** A setting or a file it names cannot be used; the message begins with the variable. */
export abstract class ConfigurationProblem extends CommandError {
  readonly exitCode = EXIT_USAGE;
  readonly prefix = 'configuration error: ';
}
