import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { getAsset, isSea } from 'node:sea';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CheckOutcome, CheckTask } from './check-files.ts';

/**
 * Threads that check a large feed's files in parallel (feed/verify/check-worker.ts): reading,
 * hashing and YAML parsing of tens of thousands of files is CPU work, and here it leaves
 * the main thread free (the appliance's dashboard keeps answering during a refresh).
 * Started before the manifest is checked, so their start-up overlaps it.
 */

/**
 * How to start a checker: in the single executable, the worker's CommonJS bundle that it
 * carries as an asset (there is no file to point a thread at); the bundled worker beside
 * the bundle (dist/); or, when this module runs as TypeScript (sources, tests), a
 * bootstrap that registers the TypeScript loader (tsx, a dependency) in the new thread
 * before importing the worker's source.
 */
function newChecker(options: ConstructorParameters<typeof Worker>[1]): Worker {
  if (isSea()) return new Worker(getAsset('check-worker.cjs', 'utf8'), { ...options, eval: true });
  if (!import.meta.url.endsWith('.ts')) {
    // In the bundle this module may sit in dist/chunks/; the worker is dist/check-worker.mjs.
    const worker = import.meta.url.includes('/chunks/') ? '../check-worker.mjs' : './check-worker.mjs';
    return new Worker(new URL(worker, import.meta.url), options);
  }
  // The ESM entry of tsx/esm/api (require.resolve finds its CommonJS twin beside it).
  const api = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs');
  const loader = pathToFileURL(api).href;
  const worker = new URL('./check-worker.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(worker)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

export class CheckPool {
  private readonly workers: Worker[];

  private constructor(workers: Worker[]) {
    this.workers = workers;
  }

  /** One checker per core, at most four. */
  static defaultSize(): number {
    return Math.min(4, Math.max(1, availableParallelism()));
  }

  /** Starts `size` checkers; null when threads cannot be started here (checks then run inline). */
  static start(size = CheckPool.defaultSize()): CheckPool | null {
    try {
      const workers = Array.from({ length: size }, () =>
        // A larger young generation: parsing makes many short-lived objects.
        newChecker({ resourceLimits: { maxYoungGenerationSizeMb: 48 } }),
      );
      for (const worker of workers) worker.unref();
      return new CheckPool(workers);
    } catch {
      return null;
    }
  }

  get size(): number {
    return this.workers.length;
  }

  /** Runs one task per checker (at most as many tasks as checkers). */
  run(tasks: CheckTask[]): Promise<CheckOutcome[]> {
    return Promise.all(
      tasks.map(
        (task, index) =>
          new Promise<CheckOutcome>((resolve, reject) => {
            const worker = this.workers[index % this.workers.length] as Worker;
            const onError = (error: Error) => {
              worker.off('message', onMessage);
              reject(error);
            };
            const onMessage = (outcome: CheckOutcome) => {
              worker.off('error', onError);
              resolve(outcome);
            };
            worker.once('message', onMessage);
            worker.once('error', onError);
            worker.postMessage(task);
          }),
      ),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
