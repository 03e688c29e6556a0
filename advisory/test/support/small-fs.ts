import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A real, small filesystem to fill up: a tmpfs mounted for the test. Mounting needs
 * root; elsewhere `smallFsSkip` says why the tests that need one are skipped (in the skip summary).
 */
export interface SmallFs {
  dir: string;
  /** Fills the filesystem with a filler file, leaving `leaveBytes` (rounded to pages) free. */
  fill(leaveBytes?: number): void;
  /** Removes the filler. */
  free(): void;
  unmount(): void;
}

function canMount(): string | null {
  if (process.platform !== 'linux') return 'tmpfs mounts need Linux';
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  try {
    const probe = mkdtempSync(path.join(tmpdir(), 'smallfs-probe-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    rmSync(probe, { recursive: true });
    return null;
  } catch (error) {
    return `mounting a tmpfs failed: ${(error as Error).message.split('\n')[0]}`;
  }
}

export const smallFsSkip = canMount();
/** The skip reason of the tests that need one (scripts/test-skip.ts). */
export const NEEDS_SMALL_FS = `needs a small real filesystem: ${smallFsSkip}`;

export function mountSmallFs(sizeKb = 512): SmallFs {
  const dir = mkdtempSync(path.join(tmpdir(), 'smallfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=0755`, 'tmpfs', dir]);
  const filler = path.join(dir, '.filler');
  return {
    dir,
    fill(leaveBytes = 0) {
      const fd = openSync(filler, 'a');
      const page = Buffer.alloc(4096, 0x2e);
      try {
        for (;;) writeSync(fd, page);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
      // Give back whole pages so some small writes still fit and a larger one is cut short.
      if (leaveBytes > 0) {
        const { size } = statSync(filler);
        truncateSync(filler, Math.max(0, size - Math.ceil(leaveBytes / 4096) * 4096));
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A directory inside a small filesystem, made for one test. */
export function dirIn(fs: SmallFs, name: string): string {
  const dir = path.join(fs.dir, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
