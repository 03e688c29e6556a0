import { parentPort } from 'node:worker_threads';
import { type CheckTask, checkFiles } from './check-files.ts';

/** A parallel checker (feed/verify/check-pool.ts): one CheckTask in, one CheckOutcome out. */
parentPort?.on('message', (task: CheckTask) => {
  try {
    parentPort?.postMessage(checkFiles(task));
  } catch (error) {
    parentPort?.postMessage({
      ok: false,
      sourceError: `checker failed: ${(error as Error).message}`,
      index: 0,
    });
  }
});
