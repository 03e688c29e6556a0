import type { Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { describeFileError, FileReadError } from '../storage/regular-file.ts';

/**
 * Reading the decision log's files in bounded memory: in chunks, line by line, forwards
 * (verification, the export) or backwards (a page of the newest entries, the last entry of
 * a kind), never the whole file at once. A line longer than MAX_LINE_BYTES is passed on
 * without its text (as `null`): no entry or checkpoint is that long, and none may make a
 * reader hold more.
 */
export const CHUNK_BYTES = 64 * 1024;
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

export interface Line {
  /** The line without its newline; null for a line longer than MAX_LINE_BYTES. */
  text: string | null;
  /** The byte offset just after it. */
  end: number;
}

/**
 * One consistent moment of the two files, as byte lengths. The store appends entries to
 * the log before it signs the checkpoint that covers them, and both files only grow: read
 * the checkpoints' length first and the log's after, and every checkpoint within the first
 * covers entries within the second, however much is recorded while the two are read.
 */
export interface Snapshot {
  checkpoints: number;
  log: number;
}

/** The files' lengths, checkpoints first (see Snapshot); a missing file has length 0. */
export async function takeSnapshot(checkpointsFile: string, logFile: string): Promise<Snapshot> {
  const checkpoints = await lengthOf(checkpointsFile);
  return { checkpoints, log: await lengthOf(logFile) };
}

/** The file's length in bytes; 0 when it does not exist. */
export async function lengthOf(file: string): Promise<number> {
  const handle = await openRegular(file);
  if (!handle) return 0;
  try {
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

/** The file opened for reading; null when it does not exist; FileReadError for what is not a regular file. */
async function openRegular(file: string): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO put in the log's place must not wait for a writer.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new FileReadError(`${file}: ${describeFileError(error)}`);
  }
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    throw new FileReadError(
      `${file}: ${info.isDirectory() ? 'is a directory, expected a file' : 'not a regular file'}`,
    );
  }
  return handle;
}

/** The bytes of `file` from `from` up to `to`, in chunks; nothing when it does not exist. */
export async function* fileChunks(file: string, from: number, to: number): AsyncGenerator<Buffer> {
  const handle = await openRegular(file);
  if (!handle) return;
  try {
    let position = from;
    // One buffer, read into again: a reader copies what it keeps (see linesOf).
    const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(0, to - from)));
    while (position < to) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, to - position), position);
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** A text (an export's entries as JSON lines) as one chunk: verified as the files are. */
export async function* textChunks(text: string): AsyncGenerator<Buffer> {
  yield Buffer.from(text);
}

/**
 * The lines of a stream of chunks that begins at byte `from`. `lastCounts` says whether a
 * last line without its newline is a line (a text given whole) or not (a file: an append
 * still being written, or one a crash cut short, which the store sets apart at its next
 * start; either way no entry yet). Every byte of a line yielded has gone into `hash` (when
 * given) before it is yielded, and no byte after it.
 */
export async function* linesOf(
  chunks: AsyncIterable<Buffer>,
  from: number,
  lastCounts: boolean,
  hash?: Hash,
): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let held = 0;
  let position = from;
  const add = (piece: Buffer) => {
    hash?.update(piece);
    held += piece.length;
    if (held > MAX_LINE_BYTES) parts = [];
    // A copy: the chunk's buffer is read into again.
    else parts.push(Buffer.from(piece));
  };
  const line = (newline: number): Line => {
    const text = held > MAX_LINE_BYTES ? null : Buffer.concat(parts).toString('utf8');
    position += held + newline;
    parts = [];
    held = 0;
    return { text, end: position };
  };
  for await (const chunk of chunks) {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      add(chunk.subarray(start, newline));
      hash?.update(chunk.subarray(newline, newline + 1));
      yield line(1);
      start = newline + 1;
    }
    if (start < chunk.length) add(chunk.subarray(start));
  }
  if (held > 0 && lastCounts) yield line(0);
}

/**
 * The complete lines of `file` before byte `to`, last first, read backwards in chunks:
 * only the line being yielded is held (and one chunk). A last line without its newline is
 * left out (see linesOf).
 */
export async function* linesBackwards(file: string, to: number): AsyncGenerator<string | null> {
  const handle = await openRegular(file);
  if (!handle) return;
  let parts: Buffer[] = [];
  let held = 0;
  const add = (piece: Buffer) => {
    held += piece.length;
    if (held > MAX_LINE_BYTES) parts = [];
    // A copy: the chunk's buffer is read into again.
    else parts.unshift(Buffer.from(piece));
  };
  const take = (): string | null => {
    const text = held > MAX_LINE_BYTES ? null : Buffer.concat(parts).toString('utf8');
    parts = [];
    held = 0;
    return text;
  };
  try {
    let position = to;
    // Until the last newline is passed, bytes belong to no complete line.
    let complete = false;
    const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, to));
    while (position > 0) {
      const length = Math.min(CHUNK_BYTES, position);
      position -= length;
      const chunk = buffer.subarray(0, length);
      await handle.read(chunk, 0, length, position);
      let end = length;
      while (end > 0) {
        const newline = chunk.lastIndexOf(0x0a, end - 1);
        if (newline === -1) {
          if (complete) add(chunk.subarray(0, end));
          break;
        }
        if (complete) {
          add(chunk.subarray(newline + 1, end));
          yield take();
        }
        complete = true;
        end = newline;
      }
    }
    if (complete) yield take();
  } finally {
    await handle.close();
  }
}

/**
 * The bytes after the last newline of `file` (a last line without its newline), read
 * backwards from its end: empty when the file is empty or ends with a newline.
 */
export async function unfinishedTail(file: string): Promise<{ cut: number; tail: Buffer }> {
  const size = await lengthOf(file);
  let cut = size;
  for await (const chunk of chunksBackwards(file, size)) {
    const newline = chunk.data.lastIndexOf(0x0a);
    if (newline !== -1) {
      cut = chunk.at + newline + 1;
      break;
    }
    cut = chunk.at;
  }
  const parts: Buffer[] = [];
  for await (const chunk of fileChunks(file, cut, size)) parts.push(Buffer.from(chunk));
  return { cut, tail: Buffer.concat(parts) };
}

async function* chunksBackwards(file: string, to: number): AsyncGenerator<{ at: number; data: Buffer }> {
  const handle = await openRegular(file);
  if (!handle) return;
  try {
    for (let position = to; position > 0; ) {
      const length = Math.min(CHUNK_BYTES, position);
      position -= length;
      const data = Buffer.alloc(length);
      await handle.read(data, 0, length, position);
      yield { at: position, data };
    }
  } finally {
    await handle.close();
  }
}

/**
 * The last line of `file` that is not blank (null: longer than MAX_LINE_BYTES) and how
 * many lines lead up to it, blank ones included; undefined for a file of blank lines only.
 * The count is only worked out (reading the file through) when `count` asks for it.
 */
export async function lastLine(
  file: string,
  count: boolean,
): Promise<{ text: string | null; lines: number } | undefined> {
  const size = await lengthOf(file);
  let text: string | null | undefined;
  for await (const line of linesBackwards(file, size)) {
    if (line === null || line.trim() !== '') {
      text = line;
      break;
    }
  }
  if (text === undefined) return undefined;
  let lines = 0;
  if (count) {
    let n = 0;
    for await (const line of linesOf(fileChunks(file, 0, size), 0, false)) {
      n++;
      if (line.text === null || line.text.trim() !== '') lines = n;
    }
  }
  return { text, lines };
}
