import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { formatSkipSummary, NO_REASON, readSkipRecords } from '../../scripts/skip-summary.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const fixture = path.join(import.meta.dirname, 'fixtures/skip-summary');

/** Runs Vitest on the fixture as a workspace runs it, leaving the records in `dir`. */
function runFixture(dir: string) {
  const run = spawnSync(
    process.execPath,
    [path.join(repo, 'node_modules/vitest/vitest.mjs'), 'run', '--root', fixture, '--no-color'],
    { encoding: 'utf8', env: { ...process.env, TEST_SKIP_SUMMARY_DIR: dir, TEST_SHUFFLE: '0' } },
  );
  return { status: run.status, stdout: stripVTControlCharacters(run.stdout) };
}

describe('the skip summary reporter', () => {
  it('ends a run with every skipped test, grouped by its reason, and leaves the records for npm test', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'skips-'));
    const { status, stdout } = runFixture(dir);
    expect(status).toBe(0);
    expect(stdout).toContain(
      [
        'Skipped 5 tests (skip-summary), by reason:',
        '  2  needs PostgreSQL (TEST_DB=postgres)',
        '       sample.fixture.ts (2)',
        '  1  cannot run as root (EACCES)',
        '       sample.fixture.ts (1)',
        '  1  no network here',
        '       sample.fixture.ts (1)',
        `  1  ${NO_REASON}`,
        '       sample.fixture.ts (1)',
        '',
      ].join('\n'),
    );
    expect(stdout).not.toContain('never shown');

    const { workspaces, skipped } = readSkipRecords(dir);
    expect(workspaces).toEqual(['skip-summary']);
    expect(skipped.map((test) => [test.test, test.reason]).sort()).toEqual([
      ['as a user', 'cannot run as root (EACCES)'],
      ['decides while running', 'no network here'],
      ['on a server > first', 'needs PostgreSQL (TEST_DB=postgres)'],
      ['on a server > second', 'needs PostgreSQL (TEST_DB=postgres)'],
      ['plain', null],
    ]);
  });

  it('names the files with their workspace across a whole npm test, and says so when nothing was skipped', () => {
    const skipped = [
      { workspace: 'scheduler', file: 'test/db/a.test.ts', test: 'a', reason: 'needs PostgreSQL' },
      { workspace: 'advisory', file: 'test/b.test.ts', test: 'b', reason: 'needs PostgreSQL' },
    ];
    expect(
      formatSkipSummary(skipped, { name: 'npm test: advisory, scheduler', severalWorkspaces: true }),
    ).toBe(
      [
        'Skipped 2 tests (npm test: advisory, scheduler), by reason:',
        '  2  needs PostgreSQL',
        '       advisory/test/b.test.ts (1)',
        '       scheduler/test/db/a.test.ts (1)',
        '',
      ].join('\n'),
    );
    expect(formatSkipSummary([], { name: 'common', severalWorkspaces: false })).toBe(
      'Skipped no test (common).\n',
    );
  });
});
