import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { setup } from '../support/appliance.ts';
import { runAdvisory } from '../support/cli.ts';

const check = (env: NodeJS.ProcessEnv) => runAdvisory(['check'], env);

/**
 * ADVISORY_FEED_CACHE may only name a path the appliance makes its own: anything else is
 * refused at start (exit 2, naming the variable) and left exactly as it was. Before, the
 * first accepted pull moved such a directory aside and deleted it.
 */
describe('the feed cache path', () => {
  it('refuses the state directory, a parent of it, a folder with files, a file or a foreign link', async () => {
    const s = setup({ publishedAt: new Date('2026-11-19T00:00:00Z') });
    mkdirSync(s.stateDir, { recursive: true });
    writeFileSync(path.join(s.stateDir, 'keep.txt'), 'operator data');
    const folder = path.join(s.dir, 'documents');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'report.txt'), 'mine');
    const link = path.join(s.dir, 'linked');
    symlinkSync(folder, link);
    const cases: [string, RegExp][] = [
      [s.stateDir, /is the state directory or holds it/],
      [s.dir, /is the state directory or holds it/],
      ['/', /is the state directory or holds it|is a directory the appliance did not make/],
      [folder, /is a directory the appliance did not make \(1 entries in it\)/],
      [path.join(folder, 'report.txt'), /exists and is not a directory/],
      [link, /is a symbolic link the appliance did not make/],
    ];
    for (const [cache, problem] of cases) {
      const result = await check({ ...s.env, ADVISORY_FEED_CACHE: cache });
      expect(result, cache).toMatchObject({
        code: 2,
        err: expect.stringMatching(/^configuration error: ADVISORY_FEED_CACHE: /),
      });
      expect(result.err, cache).toMatch(problem);
    }
    expect(readdirSync(folder)).toEqual(['report.txt']);
    expect(existsSync(path.join(s.stateDir, 'keep.txt'))).toBe(true);
  });

  it('takes a path that does not exist, an empty directory, or its own link', async () => {
    const s = setup({ publishedAt: new Date('2026-11-19T00:00:00Z') });
    mkdirSync(s.cacheDir, { recursive: true });
    // Exit 1: the test inventory has assets that need action; not 2, the path was taken.
    expect((await check(s.env)).code).toBe(1);
    // Now a link to a copy of its own making: taken again.
    expect((await check(s.env)).code).toBe(1);
    const fresh = { ...s.env, ADVISORY_FEED_CACHE: path.join(s.dir, 'new', 'cache') };
    expect((await check(fresh)).code).toBe(1);
  });
});
