import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { type Cell, csvStream, FixedNumber } from '../../src/time-tracking/csv.ts';

/** The file as written, BOM included (a TextDecoder would drop it). */
const text = async (stream: Readable) => (await buffer(stream)).toString('utf8');

/** The CSV writer of the downloads: format, formula cells, numbers, errors mid-stream. */
describe('csvStream', () => {
  it('separates by the delimiter given, quoting what holds it, and writes fixed numbers as they are', async () => {
    const row: Cell[] = ['a;b', 'a,b', 'a\tb', new FixedNumber('-0,25'), new FixedNumber('1.50'), '-x', -15];
    expect(await text(csvStream([row], ';'))).toBe('\uFEFF"a;b";a,b;a\tb;-0,25;1.50;\'-x;-15\r\n');
    expect(await text(csvStream([row], '\t'))).toBe('\uFEFFa;b\ta,b\t"a\tb"\t-0,25\t1.50\t\'-x\t-15\r\n');
    // A decimal comma in a comma file is quoted; never taken for a formula.
    expect(await text(csvStream([row]))).toBe('\uFEFFa;b,"a,b",a\tb,"-0,25",1.50,\'-x,-15\r\n');
  });

  it('writes RFC 4180 with a BOM and CRLF, quoting only what needs it, and reads back the same', async () => {
    const rows: Cell[][] = [
      ['name', 'note', 'minutes'],
      ['Zoë', 'a, "b"', -15],
      ['Line', 'one\ntwo', 0],
      ['Return', 'one\rtwo', 1],
      ['Empty', null, 7],
    ];
    const file = await text(csvStream(rows));
    expect(file).toBe(
      '\uFEFFname,note,minutes\r\nZoë,"a, ""b""",-15\r\nLine,"one\ntwo",0\r\nReturn,"one\rtwo",1\r\nEmpty,,7\r\n',
    );
    expect(parse(file, { bom: true })).toEqual([
      ['name', 'note', 'minutes'],
      ['Zoë', 'a, "b"', '-15'],
      ['Line', 'one\ntwo', '0'],
      ['Return', 'one\rtwo', '1'],
      ['Empty', '', '7'],
    ]);
  });

  it('prefixes text cells that would run as formulas with an apostrophe, never numbers', async () => {
    const hostile = ['=1+1', '+1+1', '-2+3', '@SUM(A1)', '\t=1', '\r=1', '＝1', '＋1', '－1', '＠A1'];
    const file = await text(csvStream([hostile, [-15, -0.5, 12], ['a=1', ' =1', '1-2']]));
    const [text1, numbers, harmless] = parse(file, { bom: true, relax_column_count: true }) as string[][];
    expect(text1).toEqual(hostile.map((cell) => `'${cell}`));
    expect(numbers).toEqual(['-15', '-0.5', '12']);
    // Only the first character counts.
    expect(harmless).toEqual(['a=1', ' =1', '1-2']);
  });

  it('takes records from an async source as they come, and fails the stream when the source fails', async () => {
    async function* source(): AsyncGenerator<Cell[]> {
      yield ['a'];
      yield ['b'];
    }
    expect(await text(csvStream(source()))).toBe('\uFEFFa\r\nb\r\n');
    async function* broken(): AsyncGenerator<Cell[]> {
      yield ['a'];
      throw new Error('database gone');
    }
    await expect(text(csvStream(broken()))).rejects.toThrow('database gone');
  });
});
