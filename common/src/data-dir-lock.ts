import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * One process per data directory: the appliance's state directory (ADVISORY_STATE_DIR),
 * the scheduler's embedded database folder (DATA_DIR). Both products take it here, with
 * one implementation. The lock is a directory `lock` in the data directory (the process
 * may own nothing around it, as in a container volume or systemd's StateDirectory=)
 * holding one empty file named after its owner:
 * `<pid>.n<pid namespace>.b<boot id>.s<start time>`.
 *
 * The lock and its owner come into being together: the directory is made and named under a
 * temporary name, then renamed to `lock` in one step, which fails while another process's
 * `lock` exists. (A lock made first and named after, as proper-lockfile's is, leaves an
 * owner-less lock when the taker is killed between the two, which then blocks every start
 * until it counts as stale.)
 *
 * The data directory is local, so a lock whose owner no longer runs is taken over at once.
 * A pid alone does not say that: after a power cut the pid may belong to another process
 * now, which the boot id and start time (Linux /proc) tell apart. And a pid means nothing
 * to a process in another pid namespace (two containers sharing the state volume are both
 * process 1): the holder touches its owner file every 10 s, and across namespaces an owner
 * is gone once its file has not been touched for 30 s (a restarted container waits that
 * long for its predecessor's lock). The owner file is removed by its name, and whichever
 * process then renames its own lock into place first holds the directory; the others see
 * a live owner.
 */
const LOCK = 'lock';
/** Locks being made: `.lock.new-<pid>-<hex>`, left behind only by a process killed meanwhile. */
const MAKING = /^\.lock\.new-\d+-[0-9a-f]{12}$/;
/** An owner: its pid, then (where /proc tells them) its pid namespace, the boot's id and its start time. */
const OWNER = /^(\d+)(?:\.n(\d+))?(?:\.b([0-9a-f-]+))?(?:\.s(\d+))?$/;
/** How often the holder touches its owner file, and when an untouched one counts as gone. */
const BEAT_MS = 10_000;
const STALE_MS = 30_000;

/** Data directories this process holds (so a second open here is refused, not taken over). */
const heldHere = new Set<string>();

/** A lock held by a live process (`advisory run` waits on it; the scheduler exits). */
export class DataDirLockedError extends Error {
  readonly code = 'ELOCKED';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`${dir} is in use by process ${pid}`);
    this.name = 'DataDirLockedError';
  }
}

/** Whether process `pid` runs (EPERM: it does, as another user). */
export function processAlive(pid: number): boolean {
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

/** The pid namespace this process sees pids in; null where /proc does not tell. */
function pidNamespace(): string | null {
  try {
    return /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** This process as a lock's owner file names it: `<pid>[.n<ns>][.b<boot id>][.s<start time>]`. */
function ownName(): string {
  const parts = [String(process.pid)];
  const ns = pidNamespace();
  const boot = bootId();
  const start = startTime(process.pid);
  if (ns) parts.push(`n${ns}`);
  if (boot) parts.push(`b${boot}`);
  if (start) parts.push(`s${start}`);
  return parts.join('.');
}

interface Owner {
  /** The owner file, in the lock or in a lock being made. */
  file: string;
  pid: number;
  ns: string | null;
  boot: string | null;
  start: string | null;
}

/**
 * Whether the owner named in a lock (or a lock being made) is running. An owner of another
 * boot is gone, whatever runs under its pid now. One in another pid namespace is judged by
 * when it last touched its file. In this namespace: a pid that does not run, or runs with
 * another start time, is gone; this process's own pid names an earlier process with the
 * same pid unless this process holds `dir` (a container restarted has a new namespace). What
 * cannot be told is trusted to be the owner.
 */
async function running(owner: Owner, dir: string): Promise<boolean> {
  const boot = bootId();
  if (owner.boot && boot && owner.boot !== boot) return false;
  const ns = pidNamespace();
  if (owner.ns && ns && owner.ns !== ns) {
    const touched = await stat(owner.file).then(
      (info) => info.mtimeMs,
      () => 0,
    );
    return Date.now() - touched < STALE_MS;
  }
  const start = startTime(owner.pid);
  if (owner.start && start && owner.start !== start) return false;
  if (owner.pid === process.pid) return heldHere.has(path.resolve(dir));
  return processAlive(owner.pid);
}

/** The owner named in a lock folder, or null when there is none or it names nobody. */
async function ownerIn(folder: string): Promise<Owner | null> {
  try {
    for (const name of await readdir(folder)) {
      const match = OWNER.exec(name);
      if (match)
        return {
          file: path.join(folder, name),
          pid: Number(match[1]),
          ns: match[2] ?? null,
          boot: match[3] ?? null,
          start: match[4] ?? null,
        };
    }
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/** Removes locks being made by processes that are gone (or, naming nobody, for a while). */
async function clearUnfinished(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!MAKING.test(name)) continue;
    const folder = path.join(dir, name);
    const owner = await ownerIn(folder);
    const gone = owner
      ? !(await running(owner, dir))
      : await stat(folder).then(
          (info) => Date.now() - info.mtimeMs >= STALE_MS,
          () => false,
        );
    if (gone) await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Takes the data directory for this process, or throws DataDirLockedError while a live
 * process holds it. Resolves to the release function.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
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
        // Fresh for processes in other pid namespaces, which cannot ask after the pid.
        const beat = setInterval(() => {
          const now = new Date();
          utimes(path.join(lock, me), now, now).catch(() => {});
        }, BEAT_MS);
        beat.unref();
        return async () => {
          clearInterval(beat);
          heldHere.delete(path.resolve(dir));
          await unlink(path.join(lock, me)).catch(() => {});
          // Not empty: another process has taken over the emptied lock in the meantime.
          await rmdir(lock).catch(() => {});
        };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      }
      const owner = await ownerIn(lock);
      if (owner && (await running(owner, dir))) throw new DataDirLockedError(dir, owner.pid);
      // A gone owner (or none): removed by its name, so a lock another process has meanwhile
      // renamed into place (named after another process) is left alone.
      if (owner) await unlink(owner.file).catch(() => {});
    }
    const owner = await ownerIn(lock);
    if (owner) throw new DataDirLockedError(dir, owner.pid);
    throw new Error(`${lock} names no process; remove it if no process uses ${dir}`);
  } finally {
    await rm(making, { recursive: true, force: true });
  }
}
