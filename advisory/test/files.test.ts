import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAdvisoryFile, isSafeRelativePath, listModuleFiles, sha256 } from '../src/feed/files.ts';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'files-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('manifest paths', () => {
  it.each([
    ['one.yaml'],
    ['widgets/one.yaml'],
    ['widgets/sub/deeper/one.yml'],
    ['A-Z_a-z.0-9/x'],
    ['...'],
    ['widgets/..one.yaml'],
    [`${'a'.repeat(250)}/b.ym`],
  ])('%s is safe', (candidate) => {
    expect(isSafeRelativePath(candidate)).toBe(true);
  });

  it.each([
    [''],
    ['/etc/passwd'],
    ['/'],
    ['widgets/'],
    ['widgets//one.yaml'],
    ['.'],
    ['..'],
    ['./one.yaml'],
    ['widgets/./one.yaml'],
    ['widgets/../one.yaml'],
    ['widgets/..'],
    ['widgets\\one.yaml'],
    ['widgets/one two.yaml'],
    ['widgets/ümlaut.yaml'],
    ['widgets/one.yaml\n'],
    ['C:/feed/one.yaml'],
    [`${'a'.repeat(250)}/b.yml`],
  ])('%j is refused', (candidate) => {
    expect(isSafeRelativePath(candidate)).toBe(false);
  });

  it('at most 255 characters', () => {
    expect(isSafeRelativePath('a'.repeat(255))).toBe(true);
    expect(isSafeRelativePath('a'.repeat(256))).toBe(false);
  });
});

describe('advisory files', () => {
  it('are the .yaml and .yml files', () => {
    expect(['one.yaml', 'one.yml', 'a.b.yaml', '.yaml'].filter(isAdvisoryFile)).toHaveLength(4);
    expect(
      ['one.yaml.sig', 'one.YAML', 'one.yamll', 'oneyaml', 'one.ml', 'one.json', 'one.yaml~'].filter(
        isAdvisoryFile,
      ),
    ).toEqual([]);
  });

  it('SHA-256 is lowercase hex', () => {
    expect(sha256(Buffer.from('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});

describe('listModuleFiles', () => {
  it('lists the advisory files of each module folder, recursively, sorted', () => {
    const dir = tree({
      'zeta/b.yaml': '',
      'zeta/a.yml': '',
      'zeta/sub/c.yaml': '',
      'zeta/sub/inner/a.yaml': '',
      'zeta/aa/z.yaml': '',
      'zeta/x/a.yaml': '',
      'zeta/x.yaml': '',
      'alpha/one.yaml': '',
      'mid/two.yaml': '',
      'beta/three.yaml': '',
      'empty/README.md': '',
    });
    expect(Object.fromEntries(listModuleFiles(dir))).toEqual({
      alpha: ['alpha/one.yaml'],
      beta: ['beta/three.yaml'],
      empty: [],
      mid: ['mid/two.yaml'],
      zeta: [
        'zeta/a.yml',
        'zeta/aa/z.yaml',
        'zeta/b.yaml',
        'zeta/sub/c.yaml',
        'zeta/sub/inner/a.yaml',
        'zeta/x.yaml',
        'zeta/x/a.yaml',
      ],
    });
    expect([...listModuleFiles(dir).keys()]).toEqual(['alpha', 'beta', 'empty', 'mid', 'zeta']);
  });

  it('sorts module folders by name as people read it, not by character code', () => {
    const dir = tree({ 'Zeta/a.yaml': '', 'alpha/a.yaml': '', 'Beta/a.yaml': '', 'gamma/a.yaml': '' });
    expect([...listModuleFiles(dir).keys()]).toEqual(['alpha', 'Beta', 'gamma', 'Zeta']);
  });

  it('skips hidden folders and files, files at the top, non-advisory files, links and FIFOs', () => {
    const dir = tree({
      '.git/config.yaml': '',
      'hidden./kept.yaml': '',
      'widgets/.draft.yaml': '',
      'widgets/.old/one.yaml': '',
      'widgets/notes.txt': '',
      'widgets/one.yaml': '',
      'widgets/a.yaml.bak': '',
      'top.yaml': '',
    });
    symlinkSync(path.join(dir, 'widgets/one.yaml'), path.join(dir, 'widgets/link.yaml'));
    symlinkSync(path.join(dir, 'widgets'), path.join(dir, 'linked-module'));
    execFileSync('mkfifo', [path.join(dir, 'widgets/fifo.yaml')]);
    expect(Object.fromEntries(listModuleFiles(dir))).toEqual({
      'hidden.': ['hidden./kept.yaml'],
      widgets: ['widgets/one.yaml'],
    });
  });
});
