import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';

/**
 * One appliance process per state directory. proper-lockfile's lock (a directory `lock`
 * inside the state directory, kept fresh while held: the process may own nothing around
 * its state directory, as in a container volume or systemd's StateDirectory=) is joined
 * by the owner's pid, so a lock left by a process that was killed is taken over at once
 * instead of after the staleness timeout: the state directory is local, and a dead pid
 * cannot be holding it.
 */
const OWNER = 'lock.pid';
const LOCK = 'lock';
const optionsFor = (dir: string) =>
  ({ stale: 30_000, update: 10_000, realpath: false, lockfilePath: path.join(dir, LOCK) }) as const;

/** State directories this process holds (so a second open here is refused, not taken over). */
const heldHere = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function ownerAlive(dir: string): Promise<boolean> {
  try {
    const pid = Number((await readFile(path.join(dir, OWNER), 'utf8')).trim());
    // This process's own pid on a lock it does not hold names an earlier process with the
    // same pid (a container's process 1 after a restart): that one is gone.
    if (pid === process.pid) return heldHere.has(path.resolve(dir));
    return Number.isInteger(pid) && pid > 0 && alive(pid);
  } catch {
    // No owner recorded (taken a moment ago, or by an older release): trust the lock.
    return true;
  }
}

export async function lockStateDir(dir: string): Promise<() => Promise<void>> {
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, optionsFor(dir));
  } catch (error) {
    if ((error as { code?: string }).code !== 'ELOCKED' || (await ownerAlive(dir))) throw error;
    await rm(path.join(dir, LOCK), { recursive: true, force: true });
    release = await lockfile.lock(dir, optionsFor(dir));
  }
  await writeFile(path.join(dir, OWNER), `${process.pid}\n`);
  heldHere.add(path.resolve(dir));
  return async () => {
    heldHere.delete(path.resolve(dir));
    await rm(path.join(dir, OWNER), { force: true });
    await release();
  };
}

/** Whether a live process holds the state directory. */
export async function stateDirBusy(dir: string): Promise<boolean> {
  const locked = await lockfile.check(dir, optionsFor(dir)).catch(() => false);
  return locked && (await ownerAlive(dir));
}
