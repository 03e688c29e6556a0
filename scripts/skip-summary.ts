import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The skip summary: which tests a run skipped and why, grouped by reason. Each workspace's
 * reporter prints its own (scripts/skip-summary-reporter.ts) and, when the root `npm test`
 * asks for it (TEST_SKIP_SUMMARY_DIR), writes its records there, so that `npm test` ends
 * with the summary of all workspaces together (scripts/test-all.ts).
 */
export interface SkippedTest {
  /** The workspace folder (common, scheduler, advisory). */
  workspace: string;
  /** The test file, relative to its workspace. */
  file: string;
  /** The test's name with its suites. */
  test: string;
  /** The declared reason (scripts/test-skip.ts, or ctx.skip(note)); null when none was given. */
  reason: string | null;
}

/** What a skip without a declared reason most likely is. */
export const NO_REASON = 'no reason declared (a -t or file filter, .only elsewhere, or a plain .skip)';

/** The environment variable naming the folder where each workspace's reporter leaves its records. */
export const SUMMARY_DIR_VARIABLE = 'TEST_SKIP_SUMMARY_DIR';

/**
 * The summary text: one line for the total, then per reason (most skips first) the count
 * and the files, with how many tests of each. `scope` names what ran (a workspace, or all
 * of them: then files are named with their workspace).
 */
export function formatSkipSummary(
  skipped: readonly SkippedTest[],
  scope: { name: string; severalWorkspaces: boolean },
): string {
  if (skipped.length === 0) return `Skipped no test (${scope.name}).\n`;
  const byReason = new Map<string, SkippedTest[]>();
  for (const test of skipped) {
    const reason = test.reason ?? NO_REASON;
    const group = byReason.get(reason) ?? [];
    group.push(test);
    byReason.set(reason, group);
  }
  const groups = [...byReason].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
  const width = String(groups[0]?.[1].length ?? 0).length;
  const lines = [`Skipped ${plural(skipped.length, 'test')} (${scope.name}), by reason:`];
  for (const [reason, tests] of groups) {
    const files = new Map<string, number>();
    for (const test of tests) {
      const file = scope.severalWorkspaces ? `${test.workspace}/${test.file}` : test.file;
      files.set(file, (files.get(file) ?? 0) + 1);
    }
    lines.push(`  ${String(tests.length).padStart(width)}  ${reason}`);
    for (const [file, count] of [...files].sort((a, b) => a[0].localeCompare(b[0])))
      lines.push(`  ${' '.repeat(width)}    ${file} (${count})`);
  }
  return `${lines.join('\n')}\n`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Leaves one workspace's records in the run's folder (one file per workspace run). */
export function writeSkipRecords(dir: string, workspace: string, skipped: readonly SkippedTest[]): void {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${workspace}-${process.pid}.json`);
  writeFileSync(file, `${JSON.stringify({ workspace, skipped })}\n`);
}

/** Every record the workspaces of one run left, and which workspaces reported at all. */
export function readSkipRecords(dir: string): { workspaces: string[]; skipped: SkippedTest[] } {
  const workspaces: string[] = [];
  const skipped: SkippedTest[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.json')) continue;
    const report = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as {
      workspace: string;
      skipped: SkippedTest[];
    };
    workspaces.push(report.workspace);
    skipped.push(...report.skipped);
  }
  return { workspaces, skipped };
}
