import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { formatSkipSummary, readSkipRecords, SUMMARY_DIR_VARIABLE } from './skip-summary.ts';

/**
 * `npm test`: the tests of every workspace, as `npm run test --workspaces` runs them, then
 * one skip summary for all of them (each workspace's reporter leaves its records in a folder
 * of this run). The exit status is the workspaces' own: a failing workspace fails it.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'test-skips-'));
try {
  // Arguments (npm test -- <args>) go on to every workspace's vitest, after npm's own `--`.
  const args = process.argv.slice(2);
  const run = spawnSync(
    'npm',
    ['run', 'test', '--workspaces', '--if-present', ...(args.length ? ['--', ...args] : [])],
    {
      stdio: 'inherit',
      env: { ...process.env, [SUMMARY_DIR_VARIABLE]: dir },
    },
  );
  const { workspaces, skipped } = readSkipRecords(dir);
  if (workspaces.length > 0)
    process.stdout.write(
      `\n${formatSkipSummary(skipped, { name: `npm test: ${workspaces.join(', ')}`, severalWorkspaces: true })}`,
    );
  process.exitCode = run.status ?? 1;
  if (run.error) console.error(run.error.message);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
