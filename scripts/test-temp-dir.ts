import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

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
const dir = mkdtempSync(path.join(root, 'test-file-'));
chmodSync(dir, 0o1777);
process.env.TMPDIR = dir;

const options = { recursive: true, force: true, maxRetries: 5 };
// Registered before any hook of the test file, so (after hooks running in reverse order)
// it runs last, once servers and processes using the directory have stopped. A file that
// built large feeds leaves tens of thousands of files: minutes are allowed, not seconds.
afterAll(async () => {
  process.env.TMPDIR = root;
  await rm(dir, options);
}, 300_000);
// A file skipped as a whole runs no hooks at all: its worker removes the directory as it exits.
process.once('exit', () => rmSync(dir, options));
