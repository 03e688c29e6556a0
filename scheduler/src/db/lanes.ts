import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which lane the running code asks for the embedded database's one session in
 * (drivers.ts `SerializedDriver`): requests are the foreground; the job worker and the
 * reminder sweep run their work in the background lane, which yields to requests. The
 * lane travels with the async context, as the tenant scope does, so everything background
 * work awaits or starts stays in its lane. PostgreSQL has a pool and no lanes: there it
 * changes nothing.
 */
const background = new AsyncLocalStorage<true>();

/** Runs `work` (and everything it awaits or starts) in the background lane. */
export function asBackground<T>(work: () => T): T {
  return background.run(true, work);
}

/** Whether the running code is background work. */
export function inBackground(): boolean {
  return background.getStore() === true;
}
