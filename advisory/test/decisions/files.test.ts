import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CHUNK_BYTES,
  fileChunks,
  lastLine,
  linesBackwards,
  linesOf,
  MAX_LINE_BYTES,
  takeSnapshot,
  textChunks,
  unfinishedTail,
} from '../../src/decisions/files.ts';

/** The log's files read in chunks, forwards and backwards, whatever the chunk boundaries. */
const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

function fileWith(text: string | Buffer): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'lines-')), 'log.jsonl');
  writeFileSync(file, text);
  return file;
}

describe('reading lines', () => {
  // Lines that straddle chunk boundaries, one longer than a chunk, an empty one, multibyte text.
  const lines = ['a', 'x'.repeat(CHUNK_BYTES - 1), '', 'é'.repeat(CHUNK_BYTES), 'last'];
  const text = `${lines.join('\n')}\n`;

  it('forwards: every complete line with the offset after it, hashed as read', async () => {
    const file = fileWith(text);
    const hash = createHash('sha256');
    const read = await collect(linesOf(fileChunks(file, 0, Buffer.byteLength(text)), 0, false, hash));
    expect(read.map((l) => l.text)).toEqual(lines);
    expect(read.at(-1)?.end).toBe(Buffer.byteLength(text));
    expect(read[0]?.end).toBe(2);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(text).digest('hex'));
    // Up to a bound inside the last line: that line is not complete, so not read.
    const cut = Buffer.byteLength(text) - 2;
    expect((await collect(linesOf(fileChunks(file, 0, cut), 0, false))).map((l) => l.text)).toEqual(
      lines.slice(0, -1),
    );
    // A text given whole: its last line counts without a newline.
    expect((await collect(linesOf(textChunks('a\nb'), 0, true))).map((l) => l.text)).toEqual(['a', 'b']);
    expect((await collect(linesOf(textChunks('a\nb'), 0, false))).map((l) => l.text)).toEqual(['a']);
    expect(await collect(linesOf(textChunks(''), 0, true))).toEqual([]);
    // From an offset: the offsets go on from it.
    expect(await collect(linesOf(textChunks('b\n'), 10, false))).toEqual([{ text: 'b', end: 12 }]);
  });

  it('backwards: the complete lines, last first', async () => {
    const file = fileWith(text);
    expect(await collect(linesBackwards(file, Buffer.byteLength(text)))).toEqual([...lines].reverse());
    // A last line without its newline is left out; so is everything of a file without one.
    const partial = fileWith(`${text}{"seq":`);
    expect(await collect(linesBackwards(partial, Buffer.byteLength(text) + 7))).toEqual([...lines].reverse());
    expect(await collect(linesBackwards(fileWith('no newline'), 10))).toEqual([]);
    // Up to a bound: what lies after it is not read.
    expect(await collect(linesBackwards(file, 2))).toEqual(['a']);
    expect(await collect(linesBackwards(file, 0))).toEqual([]);
    expect(await collect(linesBackwards(fileWith('\n\nb\n'), 4))).toEqual(['b', '', '']);
  });

  it('passes a line longer than MAX_LINE_BYTES on without its text, and goes on after it', async () => {
    const long = Buffer.alloc(MAX_LINE_BYTES + 10, 0x61);
    const file = fileWith(Buffer.concat([Buffer.from('a\n'), long, Buffer.from('\nb\n')]));
    const size = long.length + 5;
    expect((await collect(linesOf(fileChunks(file, 0, size), 0, false))).map((l) => l.text)).toEqual([
      'a',
      null,
      'b',
    ]);
    expect(await collect(linesBackwards(file, size))).toEqual(['b', null, 'a']);
  });

  it('reads nothing of a missing file, and refuses what is not a regular file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lines-'));
    expect(await collect(fileChunks(path.join(dir, 'none'), 0, 10))).toEqual([]);
    expect(await collect(linesBackwards(path.join(dir, 'none'), 10))).toEqual([]);
    expect(await takeSnapshot(path.join(dir, 'none'), path.join(dir, 'none'))).toEqual({
      checkpoints: 0,
      log: 0,
    });
    await expect(collect(fileChunks(dir, 0, 10))).rejects.toThrow(`${dir}: is a directory, expected a file`);
    const fifo = path.join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // Refused at once, never waited on.
    await expect(takeSnapshot(fifo, fifo)).rejects.toThrow(`${fifo}: not a regular file`);
    await expect(collect(linesBackwards(fifo, 1))).rejects.toThrow('not a regular file');
  });

  it('finds the end of a file without reading it through: its unfinished tail, its last line', async () => {
    const full = `a\n${'b'.repeat(CHUNK_BYTES + 3)}`;
    expect(await unfinishedTail(fileWith(full))).toEqual({
      cut: 2,
      tail: Buffer.from('b'.repeat(CHUNK_BYTES + 3)),
    });
    expect(await unfinishedTail(fileWith('a\n'))).toEqual({ cut: 2, tail: Buffer.alloc(0) });
    expect(await unfinishedTail(fileWith('ab'))).toEqual({ cut: 0, tail: Buffer.from('ab') });
    expect(await unfinishedTail(fileWith(''))).toEqual({ cut: 0, tail: Buffer.alloc(0) });
    // The last line that is not blank, and (when asked) how many lines lead up to it.
    const file = fileWith('one\n\ntwo\n \n\n');
    expect(await lastLine(file, false)).toEqual({ text: 'two', lines: 0 });
    expect(await lastLine(file, true)).toEqual({ text: 'two', lines: 3 });
    expect(await lastLine(fileWith('\n \n'), true)).toBeUndefined();
    expect(await lastLine(path.join(tmpdir(), 'no-such-log'), true)).toBeUndefined();
  });
});
