import { constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { InputProblem } from '../errors.ts';

/**
 * Reading a file someone named (a key, the inventory, a CA file, a token secret): it must
 * be a regular file of a sane size. A FIFO, socket or directory at the name is refused at
 * once, never waited on (a FIFO opened for reading would block until a writer comes).
 */
export class FileReadError extends InputProblem {
  constructor(message: string) {
    super(message);
    this.name = 'FileReadError';
  }
}

/** What an error from opening or reading a named file means, in a few words. */
export function describeFileError(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory, expected a file';
    default:
      return (error as Error).message;
  }
}

/**
 * The text of the regular file `file`, at most `maxBytes`; FileReadError says what is
 * wrong. With `missing`, a file that does not exist reads as that text. With `check`, the
 * file's status is judged before it is read (its problem, if any, is the FileReadError's
 * message): the status of the very file read, not of whatever bears the name a moment later.
 */
export async function readRegularFile(
  file: string,
  maxBytes: number,
  options: { missing?: string; check?: (info: Stats) => string | null } = {},
): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (options.missing !== undefined && (error as NodeJS.ErrnoException).code === 'ENOENT')
      return options.missing;
    throw new FileReadError(describeFileError(error));
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new FileReadError('is a directory, expected a file');
    if (!info.isFile()) throw new FileReadError('not a regular file');
    if (info.size > maxBytes) throw new FileReadError(`larger than ${maxBytes} bytes`);
    const problem = options.check?.(info);
    if (problem) throw new FileReadError(problem);
    return await handle.readFile('utf8');
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    throw new FileReadError(describeFileError(error));
  } finally {
    await handle.close();
  }
}
