import path from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import {
  formatSkipSummary,
  type SkippedTest,
  SUMMARY_DIR_VARIABLE,
  writeSkipRecords,
} from './skip-summary.ts';

/**
 * A Vitest reporter, next to the default one in every workspace's config: at the end of a
 * run it prints every skipped test grouped by the reason it declared (scripts/test-skip.ts),
 * and leaves the records for the root `npm test` summary when TEST_SKIP_SUMMARY_DIR is set.
 */
export class SkipSummaryReporter implements Reporter {
  private workspace = 'tests';

  onInit(vitest: Vitest): void {
    this.workspace = path.basename(vitest.config.root);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped = skippedTests(testModules, this.workspace);
    process.stdout.write(
      `\n${formatSkipSummary(skipped, { name: this.workspace, severalWorkspaces: false })}`,
    );
    const dir = process.env[SUMMARY_DIR_VARIABLE];
    if (dir) writeSkipRecords(dir, this.workspace, skipped);
  }
}

export function skippedTests(testModules: ReadonlyArray<TestModule>, workspace: string): SkippedTest[] {
  const skipped: SkippedTest[] = [];
  for (const module of testModules) {
    for (const test of module.children.allTests('skipped')) {
      const result = test.result();
      const note = result.state === 'skipped' ? result.note : undefined;
      skipped.push({
        workspace,
        file: module.relativeModuleId,
        test: test.fullName,
        reason: test.meta().skipReason ?? note ?? null,
      });
    }
  }
  return skipped;
}
