import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { processAlive } from '../common/src/data-dir-lock.ts';

/**
 * Vitest setup of every workspace: each test file gets a temporary directory of its own as
 * TMPDIR (os.tmpdir() reads it at every call, and child processes inherit it), removed
 * after the file's own hooks have run. Whatever a test, a helper or a process it started
 * leaves behind in a temporary directory, even after a kill -9 or a failed assertion, is
 * gone with the file: repeated runs cannot fill the disk.
 *
 * The directory has /tmp's mode (1777: anyone may create, only owners remove): tests run
 * processes as other users (a PostgreSQL cluster as postgres, the appliance unprivileged),
 * and those inherit TMPDIR too.
 */
process.env.TEST_TMPDIR_ROOT ??= tmpdir();
const root = process.env.TEST_TMPDIR_ROOT;
const options = { recursive: true, force: true, maxRetries: 5 };
const prefix = 'test-file-';

// A file skipped as a whole runs no hooks at all, and Vitest may end a worker without its
// exit handlers: such directories are named after their worker's pid, and whichever file
// starts next removes those whose worker is gone (other runs' live workers keep theirs).
for (const name of readdirSync(root)) {
  const pid = new RegExp(`^${prefix}(\\d+)-`).exec(name)?.[1];
  if (pid !== undefined && !processAlive(Number(pid))) rmSync(path.join(root, name), options);
}

const dir = mkdtempSync(path.join(root, `${prefix}${process.pid}-`));
chmodSync(dir, 0o1777);
process.env.TMPDIR = dir;

// Registered before any hook of the test file, so (after hooks running in reverse order)
// it runs last, once servers and processes using the directory have stopped. A file that
// built large feeds leaves tens of thousands of files: minutes are allowed, not seconds.
afterAll(async () => {
  process.env.TMPDIR = root;
  await rm(dir, options);
}, 300_000);
