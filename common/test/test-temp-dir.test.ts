import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');
const fixture = path.join(import.meta.dirname, 'fixtures/temp-dir');

/** Runs Vitest on the fixture with `root` as the machine's TMPDIR; returns the per-file directories the tests saw. */
function runFixture(root: string, files: string[] = []): { status: number | null; seen: string[] } {
  const record = path.join(root, '..', `record-${Date.now()}-${Math.random()}`);
  writeFileSync(record, '');
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: root, TEMP_DIR_RECORD: record, TEST_SHUFFLE: '0' };
  delete env.TEST_TMPDIR_ROOT; // this test's own run sets it; the fixture starts from `root`
  const run = spawnSync(
    process.execPath,
    [path.join(repo, 'node_modules/vitest/vitest.mjs'), 'run', '--root', fixture, '--no-color', ...files],
    { encoding: 'utf8', env },
  );
  const seen = readFileSync(record, 'utf8').split('\n').filter(Boolean);
  return { status: run.status, seen };
}

const outer = mkdtempSync(path.join(tmpdir(), 'temp-dir-test-'));
afterAll(() => rmSync(outer, { recursive: true, force: true }));

describe('the per-file TMPDIR of every test run', () => {
  it('removes a file’s directory after its tests, with all they left in it', () => {
    const root = path.join(outer, 'alone');
    mkdirSync(root);
    // One file alone: no later file's sweep can stand in for its own removal.
    const { status, seen } = runFixture(root, ['writes']);
    expect(status).toBe(0);
    expect(seen).toHaveLength(2);
    expect(path.dirname(seen[0] ?? '')).toBe(root);
    expect(readdirSync(root)).toEqual([]);
  });

  it('gives each test file a directory of its own under TMPDIR and removes it with all it holds', () => {
    const root = path.join(outer, 'tmp');
    mkdirSync(root);
    // A directory left by a worker that is gone (no process has this pid), and one of a live process.
    const gone = path.join(root, 'test-file-4194305-dead');
    mkdirSync(gone);
    writeFileSync(path.join(gone, 'left'), 'x');
    const live = path.join(root, `test-file-${process.pid}-live`);
    mkdirSync(live);

    const { status, seen } = runFixture(root);
    expect(status).toBe(0);

    // Three tests in two files: two directories, one per file, both under the root.
    expect(seen).toHaveLength(3);
    const perFile = [...new Set(seen)];
    expect(perFile).toHaveLength(2);
    for (const dir of perFile) expect(path.dirname(dir)).toBe(root);
    for (const dir of perFile) expect(path.basename(dir)).toMatch(/^test-file-\d+-\w{6}$/);

    // Afterwards: what the files wrote is gone, so is the dead worker's directory; a live
    // process's stays. At most the skipped file's directory (empty) waits for the next run.
    const left = readdirSync(root);
    for (const dir of perFile) expect(left).not.toContain(path.basename(dir));
    expect(left).not.toContain(path.basename(gone));
    expect(left).toContain(path.basename(live));
    for (const name of left.filter((n) => n !== path.basename(live))) {
      expect(readdirSync(path.join(root, name))).toEqual([]);
    }

    // The next run sweeps what the last one's ended workers left.
    const before = left.filter((n) => n !== path.basename(live));
    runFixture(root);
    for (const name of before) expect(readdirSync(root)).not.toContain(name);
  });
});
