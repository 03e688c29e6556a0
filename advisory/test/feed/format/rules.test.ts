import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/crypto/digest.ts';
import { scanFeed } from '../../../src/feed/author/layout.ts';
import {
  isAdvisoryFile,
  listedPathProblem,
  MAX_CLOCK_SKEW_MS,
  manifestDateProblems,
  moduleNameProblem,
} from '../../../src/feed/format/rules.ts';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'layout-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('listed paths', () => {
  it.each([
    ['one.yaml'],
    ['widgets/one.yaml'],
    ['widgets/sub/deeper/one.yml'],
    ['A-Z_a-z.0-9/x'],
    ['_x/b.yml'],
    [`${'a'.repeat(120)}/${'b'.repeat(120)}.ym`],
  ])('%s may be listed', (candidate) => {
    expect(listedPathProblem(candidate)).toBeNull();
  });

  it.each([
    [''],
    ['/etc/passwd'],
    ['/'],
    ['widgets/'],
    ['widgets//one.yaml'],
    ['.'],
    ['..'],
    ['...'],
    ['./one.yaml'],
    ['widgets/./one.yaml'],
    ['widgets/../one.yaml'],
    ['widgets/..'],
    ['widgets\\one.yaml'],
    ['widgets/one two.yaml'],
    ['widgets/one #2.yaml'],
    ['widgets/one:2.yaml'],
    ['widgets/ümlaut.yaml'],
    ['widgets/one.yaml\n'],
    ['widgets/.hidden.yaml'],
    ['widgets/..one.yaml'],
    ['C:/feed/one.yaml'],
    [`${'a'.repeat(129)}/b.yml`],
    ['a'.repeat(256)],
  ])('%j may not', (candidate) => {
    expect(listedPathProblem(candidate)).not.toBeNull();
  });

  it('keeps a module file inside the folder of its module', () => {
    expect(listedPathProblem('widgets/one.yaml', 'widgets')).toBeNull();
    expect(listedPathProblem('gadgets/one.yaml', 'widgets')).toMatch(/outside its folder/);
    expect(listedPathProblem('one.yaml', 'widgets')).toMatch(/outside its folder/);
  });

  it('takes module names in lowercase ASCII, digits and hyphens', () => {
    expect(moduleNameProblem('database-stack')).toBeNull();
    expect(moduleNameProblem('pve9')).toBeNull();
    for (const name of ['Platform', '-x', 'a_b', 'ümlaut', 'a.b', '', 'a'.repeat(65)]) {
      expect(moduleNameProblem(name), name).not.toBeNull();
    }
  });

  it('reads .yaml and .yml files as advisories', () => {
    expect(['one.yaml', 'one.yml', 'a.b.yaml', '.yaml'].filter(isAdvisoryFile)).toHaveLength(4);
    expect(
      ['one.yaml.sig', 'one.YAML', 'one.yamll', 'oneyaml', 'one.ml', 'one.json', 'one.yaml~'].filter(
        isAdvisoryFile,
      ),
    ).toEqual([]);
  });

  it('hashes with lowercase hex SHA-256', () => {
    expect(sha256(Buffer.from('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});

describe('manifest dates', () => {
  const good = {
    feed_version: '2026.11.21',
    published_at: '2026-11-21T12:00:00Z',
    expires_at: '2026-12-05T12:00:00Z',
  };
  const now = new Date('2026-11-21T12:00:00Z');

  it('hold for a feed published today, valid for a positive time of at most 366 days', () => {
    expect(manifestDateProblems(good, now)).toEqual([]);
    expect(manifestDateProblems({ ...good, expires_at: '2027-11-22T12:00:00Z' }, now)).toEqual([]);
  });

  it.each([
    [{ feed_version: '2062.11.22' }, 'is not of the UTC date of published_at'],
    [{ feed_version: '2026.11.22' }, 'is not of the UTC date of published_at'],
    [{ feed_version: '2026.02.30' }, 'is not a real date'],
    [{ feed_version: '2026.13.01' }, 'is not a real date'],
    [{ published_at: '2026-02-30T12:00:00Z' }, 'published_at "2026-02-30T12:00:00Z" is not an RFC 3339 time'],
    [{ expires_at: '2026-13-05T12:00:00Z' }, 'expires_at "2026-13-05T12:00:00Z" is not an RFC 3339 time'],
    [{ expires_at: '2026-11-21T12:00:00Z' }, 'is not after published_at'],
    [{ expires_at: '2026-11-20T12:00:00Z' }, 'is not after published_at'],
    [{ expires_at: '2027-11-22T12:00:01Z' }, 'more than 366 days'],
    [{ expires_at: '21000-01-01T00:00:00Z' }, 'is not an RFC 3339 time'],
  ])('refuse %j', (change, message) => {
    const problems = manifestDateProblems({ ...good, ...change }, now);
    expect(problems.join('; ')).toContain(message);
  });

  it('refuse a feed published later than now and a small clock skew', () => {
    const later = (ms: number) => new Date(now.getTime() - ms);
    expect(manifestDateProblems(good, later(MAX_CLOCK_SKEW_MS))).toEqual([]);
    expect(manifestDateProblems(good, later(MAX_CLOCK_SKEW_MS + 1000))[0]).toMatch(/in the future/);
    // Without a clock (build), only the manifest's own consistency is checked.
    expect(manifestDateProblems(good)).toEqual([]);
  });
});

describe('scanFeed', () => {
  it('lists the advisory files of each module folder, recursively, sorted', () => {
    const dir = tree({
      'zeta/b.yaml': '',
      'zeta/a.yml': '',
      'zeta/sub/c.yaml': '',
      'zeta/sub/inner/a.yaml': '',
      'zeta/aa/z.yaml': '',
      'zeta/x/a.yaml': '',
      'alpha/one.yaml': '',
      'mid/two.yaml': '',
      'beta/three.yaml': '',
      'empty/README.md': '',
      'top.yaml': '',
      'README.md': '',
    });
    const { modules, problems } = scanFeed(dir);
    expect(Object.fromEntries(modules)).toEqual({
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
        'zeta/x/a.yaml',
      ],
    });
    expect([...modules.keys()]).toEqual(['alpha', 'beta', 'empty', 'mid', 'zeta']);
    expect(problems).toEqual([
      {
        severity: 'warning',
        file: 'empty/README.md',
        message: expect.stringContaining('not an advisory file'),
      },
    ]);
  });

  it('leaves nothing out silently: what cannot be published is an error, what is not published a warning', async () => {
    const dir = tree({
      '.git/config.yaml': '',
      'Platform/a.yaml': '',
      'widgets/.draft.yaml': '',
      'widgets/.old/one.yaml': '',
      'widgets/notes.txt': '',
      'widgets/one.yaml': '',
      'widgets/one #2.yaml': '',
      'widgets/ümlaut.yaml': '',
      'widgets/folder.yaml/inner.yaml': '',
    });
    symlinkSync(path.join(dir, 'widgets/one.yaml'), path.join(dir, 'widgets/link.yaml'));
    symlinkSync(path.join(dir, 'widgets'), path.join(dir, 'linked-module'));
    execFileSync('mkfifo', [path.join(dir, 'widgets/fifo.yaml')]);
    writeFileSync(
      Buffer.concat([Buffer.from(`${dir}/widgets/`), Buffer.from([0xff, 0xfe]), Buffer.from('.yaml')]),
      'x',
    );
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(dir, 'widgets/socket.yaml'), resolve));
    try {
      const { modules, problems } = scanFeed(dir);
      expect(Object.fromEntries(modules)).toEqual({ widgets: ['widgets/one.yaml'] });
      const byFile = Object.fromEntries(problems.map((p) => [p.file, `${p.severity}: ${p.message}`]));
      expect(byFile).toEqual({
        Platform: expect.stringMatching(/^error: module folder "Platform": lowercase/),
        'linked-module': expect.stringMatching(/^error: a symbolic link/),
        'widgets/.draft.yaml': 'warning: a hidden file is not published',
        'widgets/.old': 'warning: a hidden folder is not published',
        'widgets/\u00ff\u00fe.yaml': 'error: a name that is not UTF-8 cannot be published',
        'widgets/fifo.yaml': 'error: a FIFO: feed files must be regular files',
        'widgets/folder.yaml': 'error: a folder named like an advisory file',
        'widgets/link.yaml': 'error: a symbolic link: feed files must be regular files',
        'widgets/notes.txt': 'warning: not an advisory file (.yaml or .yml): not listed in the manifest',
        'widgets/one #2.yaml': expect.stringMatching(
          /^error: cannot be published: .*"one #2\.yaml" may use only ASCII/,
        ),
        'widgets/socket.yaml': 'error: a socket: feed files must be regular files',
        'widgets/ümlaut.yaml': expect.stringMatching(/^error: cannot be published/),
      });
    } finally {
      socket.close();
    }
  });
});
