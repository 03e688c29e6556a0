import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
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
 * The directory is traversable by other users (0711), as a PostgreSQL cluster started as
 * root hands its data directory to the postgres user.
 */
const root = (process.env.TEST_TMPDIR_ROOT ??= tmpdir());
const dir = mkdtempSync(path.join(root, 'test-file-'));
chmodSync(dir, 0o711);
process.env.TMPDIR = dir;

// Registered before any hook of the test file, so (after hooks running in reverse order)
// it runs last, once servers and processes using the directory have stopped.
afterAll(() => {
  process.env.TMPDIR = root;
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});
