import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';

/**
 * One appliance process per state directory. proper-lockfile's lock (a directory beside
 * it, kept fresh while held) is joined by the owner's pid, so a lock left by a process
 * that was killed is taken over at once instead of after the staleness timeout: the
 * state directory is local, and a dead pid cannot be holding it.
 */
const OWNER = 'lock.pid';
const options = { stale: 30_000, update: 10_000, realpath: false } as const;

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
    return Number.isInteger(pid) && pid > 0 && (pid === process.pid || alive(pid));
  } catch {
    // No owner recorded (taken a moment ago, or by an older release): trust the lock.
    return true;
  }
}

export async function lockStateDir(dir: string): Promise<() => Promise<void>> {
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, options);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ELOCKED' || (await ownerAlive(dir))) throw error;
    await rm(`${dir}.lock`, { recursive: true, force: true });
    release = await lockfile.lock(dir, options);
  }
  await writeFile(path.join(dir, OWNER), `${process.pid}\n`);
  return async () => {
    await rm(path.join(dir, OWNER), { force: true });
    await release();
  };
}

/** Whether a live process holds the state directory. */
export async function stateDirBusy(dir: string): Promise<boolean> {
  const locked = await lockfile.check(dir, options).catch(() => false);
  return locked && (await ownerAlive(dir));
}
