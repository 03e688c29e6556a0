import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import {
  appendWhole,
  clearTemporaries,
  createDurably,
  readIfExists,
  writeAtomic,
} from '../../src/storage/durable-files.ts';
import { dirIn, mountSmallFs, NEEDS_SMALL_FS, type SmallFs, smallFsSkip } from '../support/small-fs.ts';

/**
 * Whole-file writes and appends on a real full filesystem (a tmpfs): a write that does not
 * fit fails and leaves the file as it was, never a part of the new one.
 */
describe('durable files on a full filesystem', runsIf(!smallFsSkip, NEEDS_SMALL_FS), () => {
  let fs: SmallFs;
  beforeAll(() => {
    fs = mountSmallFs(256);
  });
  afterAll(() => fs?.unmount());

  it('keeps the old file whole when the new one does not fit, and leaves no temporary', async () => {
    const dir = dirIn(fs, 'atomic');
    const file = path.join(dir, 'evaluation.json');
    await writeAtomic(file, JSON.stringify({ version: 1 }));
    fs.fill(4096);
    const big = JSON.stringify({ version: 2, pad: 'x'.repeat(64 * 1024) });
    await expect(writeAtomic(file, big)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(readFileSync(file, 'utf8')).toBe('{"version":1}');
    expect(readdirSync(dir)).toEqual(['evaluation.json']);
    fs.free();
    await writeAtomic(file, big);
    expect(readFileSync(file, 'utf8')).toBe(big);
  });

  it('appends whole or not at all: a cut append is taken back', async () => {
    const dir = dirIn(fs, 'append');
    const file = path.join(dir, 'decisions.jsonl');
    await appendWhole(file, '{"seq":1}\n');
    fs.fill(4096);
    await expect(appendWhole(file, `{"seq":2,"pad":"${'y'.repeat(64 * 1024)}"}\n`)).rejects.toMatchObject({
      code: 'ENOSPC',
    });
    expect(readFileSync(file, 'utf8')).toBe('{"seq":1}\n');
    fs.free();
    await appendWhole(file, '{"seq":2}\n');
    expect(readFileSync(file, 'utf8')).toBe('{"seq":1}\n{"seq":2}\n');
  });

  it('makes a new file whole or removes it', async () => {
    const dir = dirIn(fs, 'create');
    const file = path.join(dir, 'appliance.sec');
    fs.fill(4096);
    await expect(createDurably(file, 'z'.repeat(64 * 1024), 0o600)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(readdirSync(dir)).toEqual([]);
    fs.free();
    await createDurably(file, 'secret', 0o600);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await expect(createDurably(file, 'other', 0o600)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(file, 'utf8')).toBe('secret');
  });
});

describe('durable files', () => {
  it('replaces a file in one rename, keeping the mode asked for', async () => {
    const dir = (await import('node:fs')).mkdtempSync(
      path.join((await import('node:os')).tmpdir(), 'durable-'),
    );
    const file = path.join(dir, 'state.json');
    writeFileSync(file, 'old');
    await writeAtomic(file, 'new', 0o600);
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('writes bytes as given, and clears only its own temporaries', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'durable-'));
    await writeAtomic(path.join(dir, 'bytes.bin'), Buffer.from([0, 255, 1]));
    expect([...readFileSync(path.join(dir, 'bytes.bin'))]).toEqual([0, 255, 1]);
    for (const name of [
      '.state.json.tmp-0123456789ab',
      '.state.json.tmp-short',
      'state.json.tmp-0123456789ab',
      'keep',
    ])
      writeFileSync(path.join(dir, name), 'x');
    await clearTemporaries(dir);
    expect(readdirSync(dir).sort()).toEqual([
      '.state.json.tmp-short',
      'bytes.bin',
      'keep',
      'state.json.tmp-0123456789ab',
    ]);
    await clearTemporaries(path.join(dir, 'missing'));
    await expect(clearTemporaries(path.join(dir, 'keep'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('reads a missing file as empty, and anything else that fails as the error it is', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'durable-'));
    expect(await readIfExists(path.join(dir, 'missing'))).toBe('');
    await expect(readIfExists(dir)).rejects.toMatchObject({ code: 'EISDIR' });
    await appendWhole(path.join(dir, 'log'), 'a\n');
    await appendWhole(path.join(dir, 'log'), 'b\n');
    expect(await readIfExists(path.join(dir, 'log'))).toBe('a\nb\n');
  });

  it('counts bytes, not characters, and leaves no file handle open', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'durable-'));
    const text = 'héllo ✓ — 日本\n';
    await writeAtomic(path.join(dir, 'utf8.txt'), text);
    expect(readFileSync(path.join(dir, 'utf8.txt'), 'utf8')).toBe(text);
    const handles = () => readdirSync('/proc/self/fd').length;
    const before = handles();
    for (let i = 0; i < 40; i++) {
      await writeAtomic(path.join(dir, 'state.json'), `{"n":${i}}`);
      await appendWhole(path.join(dir, 'log'), `${text}`);
      await createDurably(path.join(dir, `new-${i}`), text, 0o600);
      await createDurably(path.join(dir, `new-${i}`), text, 0o600).catch(() => undefined);
    }
    expect(handles()).toBe(before);
    expect(readFileSync(path.join(dir, 'log'), 'utf8')).toBe(text.repeat(40));
  });
});
