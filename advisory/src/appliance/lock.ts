import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * One appliance process per state directory. The lock is a directory `lock` in the state
 * directory (the process may own nothing around it, as in a container volume or systemd's
 * StateDirectory=) holding one empty file named by the owner's pid.
 *
 * The lock and its owner come into being together: the directory is made and named under a
 * temporary name, then renamed to `lock` in one step, which fails while another process's
 * `lock` exists. (A lock made first and named after, as proper-lockfile's is, leaves an
 * owner-less lock when the taker is killed between the two, which then blocks every start
 * until it counts as stale.) The state directory is local, so a lock whose pid no longer
 * runs is taken over at once: its owner file is removed by name, and whichever process then
 * renames its own lock into place first holds the directory; the others see a live owner.
 */
const LOCK = 'lock';
/** Locks being made: `.lock.new-<pid>-<hex>`, left behind only by a process killed meanwhile. */
const MAKING = /^\.lock\.new-(\d+)-[0-9a-f]{12}$/;

/** State directories this process holds (so a second open here is refused, not taken over). */
const heldHere = new Set<string>();

/** A lock held by a live process: the error `advisory run` waits on. */
export class StateDirLockedError extends Error {
  readonly code = 'ELOCKED';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`${dir} is in use by process ${pid}`);
    this.name = 'StateDirLockedError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process `pid` holds `dir`. This process's own pid on a lock it does not hold
 * names an earlier process with the same pid (a container's process 1 after a restart). */
function holds(pid: number, dir: string): boolean {
  return pid === process.pid ? heldHere.has(path.resolve(dir)) : alive(pid);
}

/** The pid named in the lock, or null when there is no lock or it names nobody. */
async function owner(dir: string): Promise<number | null> {
  try {
    const pids = (await readdir(path.join(dir, LOCK))).filter((name) => /^\d+$/.test(name)).map(Number);
    return pids[0] ?? null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/** Removes locks being made by processes that are gone. */
async function clearUnfinished(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const pid = MAKING.exec(name)?.[1];
    // This process's own pid on one names an earlier process with that pid: its lock is made.
    if (pid !== undefined && Number(pid) !== process.pid && !alive(Number(pid)))
      await rm(path.join(dir, name), { recursive: true, force: true });
  }
}

/**
 * Takes the state directory for this process, or throws StateDirLockedError while a live
 * process holds it. Resolves to the release function.
 */
export async function lockStateDir(dir: string): Promise<() => Promise<void>> {
  const lock = path.join(dir, LOCK);
  const making = path.join(dir, `.lock.new-${process.pid}-${randomBytes(6).toString('hex')}`);
  await mkdir(making);
  await writeFile(path.join(making, String(process.pid)), '');
  try {
    // A few rounds at most: each failed one has removed a dead owner or lost to a live one.
    for (let round = 0; round < 5; round++) {
      try {
        await rename(making, lock);
        heldHere.add(path.resolve(dir));
        await clearUnfinished(dir);
        return async () => {
          heldHere.delete(path.resolve(dir));
          await unlink(path.join(lock, String(process.pid))).catch(() => {});
          // Not empty: another process has taken over the emptied lock in the meantime.
          await rmdir(lock).catch(() => {});
        };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      }
      const pid = await owner(dir);
      if (pid !== null && holds(pid, dir)) throw new StateDirLockedError(dir, pid);
      // A dead owner (or none): remove it by name, so a lock another process has meanwhile
      // renamed into place (named by another pid) is left alone.
      if (pid !== null) await unlink(path.join(lock, String(pid))).catch(() => {});
    }
    const pid = await owner(dir);
    if (pid !== null) throw new StateDirLockedError(dir, pid);
    throw new Error(`${lock} names no process; remove it if no advisory process uses ${dir}`);
  } finally {
    await rm(making, { recursive: true, force: true });
  }
}
