import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeFileError, FileReadError, readRegularFile } from '../../src/storage/regular-file.ts';

describe('reading a named file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'regular-'));

  it('reads a regular file up to its cap, and says what is wrong with anything else', async () => {
    const file = path.join(dir, 'key.pub');
    writeFileSync(file, 'abcd');
    expect(await readRegularFile(file, 4)).toBe('abcd');
    const refusal = async (name: string, max = 100) =>
      readRegularFile(name, max).catch((error: unknown) => error);
    const large = await refusal(file, 3);
    expect(large).toBeInstanceOf(FileReadError);
    expect(large).toMatchObject({ name: 'FileReadError', message: 'larger than 3 bytes' });
    expect(await refusal(path.join(dir, 'missing'))).toMatchObject({ message: 'no such file' });
    mkdirSync(path.join(dir, 'folder'));
    expect(await refusal(path.join(dir, 'folder'))).toMatchObject({
      message: 'is a directory, expected a file',
    });
    // A FIFO is refused at once, never waited on for a writer.
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(await refusal(fifo)).toMatchObject({ message: 'not a regular file' });
    expect(await refusal(path.join(file, 'below'))).toMatchObject({ name: 'FileReadError' });
  });

  it('words the system errors a person can act on', () => {
    const error = (code: string) => Object.assign(new Error(`raw ${code}`), { code });
    expect(describeFileError(error('ENOENT'))).toBe('no such file');
    expect(describeFileError(error('EACCES'))).toBe('permission denied');
    expect(describeFileError(error('EPERM'))).toBe('permission denied');
    expect(describeFileError(error('EISDIR'))).toBe('is a directory, expected a file');
    expect(describeFileError(error('EMFILE'))).toBe('raw EMFILE');
  });
});
