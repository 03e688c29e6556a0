import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * One appliance process per state directory. The lock is a directory `lock` in the state
 * directory (the process may own nothing around it, as in a container volume or systemd's
 * StateDirectory=) holding one empty file named after its owner: `<pid>.b<boot id>.s<start>`.
 *
 * The lock and its owner come into being together: the directory is made and named under a
 * temporary name, then renamed to `lock` in one step, which fails while another process's
 * `lock` exists. (A lock made first and named after, as proper-lockfile's is, leaves an
 * owner-less lock when the taker is killed between the two, which then blocks every start
 * until it counts as stale.)
 *
 * The state directory is local, so a lock whose owner no longer runs is taken over at once.
 * A pid alone does not say that: after a power cut, or a container restart, the pid may
 * belong to another process now; the boot id and start time (Linux /proc) tell them apart.
 * The owner file is removed by its name, and whichever process then renames its own lock
 * into place first holds the directory; the others see a live owner.
 */
const LOCK = 'lock';
/** Locks being made: `.lock.new-<pid>-<hex>`, left behind only by a process killed meanwhile. */
const MAKING = /^\.lock\.new-(\d+)-[0-9a-f]{12}$/;
/** An owner: its pid, then (where /proc tells them) the boot's id and its start time. */
const OWNER = /^(\d+)(?:\.b([0-9a-f-]+))?(?:\.s(\d+))?$/;

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

/** The id of the running boot; null where /proc does not tell. */
function bootId(): string | null {
  try {
    const id = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return /^[0-9a-f-]+$/.test(id) ? id : null;
  } catch {
    return null;
  }
}

/** When process `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat); null where /proc does not tell. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which may itself hold spaces and parentheses.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return start && /^\d+$/.test(start) ? start : null;
  } catch {
    return null;
  }
}

/** This process as a lock's owner file names it: `<pid>[.b<boot id>][.s<start time>]`. */
function ownName(): string {
  const boot = bootId();
  const start = startTime(process.pid);
  return `${process.pid}${boot ? `.b${boot}` : ''}${start ? `.s${start}` : ''}`;
}

interface Owner {
  name: string;
  pid: number;
  boot: string | null;
  start: string | null;
}

/**
 * Whether the owner named in a lock is running. This process's pid on a lock it does not
 * hold names an earlier process with the same pid (a container's process 1 after a
 * restart). An owner of another boot is gone, whatever runs under its pid now; so is one
 * whose pid runs with another start time. What cannot be told is trusted to be the owner.
 */
function running(owner: Owner, dir: string): boolean {
  if (owner.pid === process.pid) return heldHere.has(path.resolve(dir));
  const boot = bootId();
  if (owner.boot && boot && owner.boot !== boot) return false;
  if (!alive(owner.pid)) return false;
  const start = startTime(owner.pid);
  return !(owner.start && start && owner.start !== start);
}

/** The owner named in the lock, or null when there is no lock or it names nobody. */
async function ownerOf(dir: string): Promise<Owner | null> {
  try {
    for (const name of await readdir(path.join(dir, LOCK))) {
      const match = OWNER.exec(name);
      if (match) return { name, pid: Number(match[1]), boot: match[2] ?? null, start: match[3] ?? null };
    }
    return null;
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
  const me = ownName();
  const making = path.join(dir, `.lock.new-${process.pid}-${randomBytes(6).toString('hex')}`);
  await mkdir(making);
  await writeFile(path.join(making, me), '');
  try {
    // A few rounds at most: each failed one has removed a gone owner or lost to a live one.
    for (let round = 0; round < 5; round++) {
      try {
        await rename(making, lock);
        heldHere.add(path.resolve(dir));
        await clearUnfinished(dir);
        return async () => {
          heldHere.delete(path.resolve(dir));
          await unlink(path.join(lock, me)).catch(() => {});
          // Not empty: another process has taken over the emptied lock in the meantime.
          await rmdir(lock).catch(() => {});
        };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      }
      const owner = await ownerOf(dir);
      if (owner && running(owner, dir)) throw new StateDirLockedError(dir, owner.pid);
      // A gone owner (or none): removed by its name, so a lock another process has meanwhile
      // renamed into place (named after another process) is left alone.
      if (owner) await unlink(path.join(lock, owner.name)).catch(() => {});
    }
    const owner = await ownerOf(dir);
    if (owner) throw new StateDirLockedError(dir, owner.pid);
    throw new Error(`${lock} names no process; remove it if no advisory process uses ${dir}`);
  } finally {
    await rm(making, { recursive: true, force: true });
  }
}
