import type { Writable } from 'node:stream';
import { CommandError, EXIT_OK, EXIT_USAGE, UsageError } from '../errors.ts';

/**
 * The exit codes and errors (errors.ts) and the command line's streams. What a command
 * throws is mapped here and nowhere else (exitCodeOf, forInput). Errors are one line for
 * a person, never a stack trace.
 */
export {
  EXIT_NO_FEED,
  EXIT_OK,
  EXIT_REJECTED,
  EXIT_USAGE,
  RejectedError,
  UsageError,
} from '../errors.ts';

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** Where a command line writes, and how it ends at once (the process's own unless a test's). */
export interface Streams {
  stdout: Writable;
  stderr: Writable;
  exit(code: number): void;
  /** The exit code set so far (process.exitCode). */
  exitCode(): number | undefined;
}

const processStreams: Streams = {
  stdout: process.stdout,
  stderr: process.stderr,
  exit: (code) => process.exit(code),
  exitCode: () => (typeof process.exitCode === 'number' ? process.exitCode : undefined),
};

/**
 * The process's standard streams as an Io. A reader that goes away (`| head -1`) ends
 * the process quietly with the code it would have had, instead of an EPIPE crash.
 */
export function processIo(streams: Streams = processStreams): Io {
  const { stdout, stderr } = streams;
  for (const stream of [stdout, stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') return streams.exit(streams.exitCode() ?? EXIT_OK);
      // Output that cannot be written (a full disk): say so once, where still possible.
      if (stream === stdout)
        stderr.write(`error: cannot write the output (${error.code ?? error.message})\n`);
      streams.exit(EXIT_USAGE);
    });
  }
  return {
    out: (line) => stdout.write(`${line}\n`),
    err: (line) => stderr.write(`${line}\n`),
  };
}

/**
 * Maps what a command threw to its exit code and one line on stderr: a CommandError says
 * both itself; anything else is exit 2 with its message.
 */
export function exitCodeOf(error: unknown, io: Io, usage?: string): number {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    const prefix = error instanceof UsageError ? error.prefix : '';
    io.err(`${prefix}${printable((error as Error).message)}${usage ? ` (${usage} --help shows how)` : ''}`);
    return EXIT_USAGE;
  }
  if (error instanceof CommandError) {
    io.err(`${error.prefix}${printable(error.message)}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.err(`error: ${printable(message)}`);
  return EXIT_USAGE;
}

/**
 * Runs `work` on an input the command line names (`--inventory`, `public key k.pub`): an
 * error that makes the input unusable (exit 2: a file that cannot be read, a key, a
 * document or a duration that does not parse) becomes a UsageError naming the input
 * (`--expires-in: "soon" is not a duration: …`). Any other error passes as it is.
 */
export async function forInput<T>(input: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CommandError && error.exitCode === EXIT_USAGE)
      throw new UsageError(`${input}: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * Text as one line of output: control and formatting characters (a newline in a file
 * name, a right-to-left override) are shown escaped, so a name cannot forge lines.
 */
export function printable(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => `\\u{${c.codePointAt(0)?.toString(16)}}`);
}
