import type { ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';
import { type Scheduler, spawnScheduler } from './scheduler-process.ts';

export { type Scheduler, webDist } from './scheduler-process.ts';

/** The scheduler of a test file (scheduler-process.ts), killed after the file's tests. */
const started = new Set<ChildProcess>();
afterAll(() => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  started.clear();
});

export function startScheduler(env: Record<string, string> = {}): Promise<Scheduler> {
  return spawnScheduler(env, (child) => started.add(child));
}
