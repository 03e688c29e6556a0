import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * How the appliance writes its state, so that a full disk or a kill never leaves a
 * partial file in place of a good one:
 *   - whole files are written under a temporary name beside the target, synced, checked
 *     for their full length, then renamed over the old one (the directory is synced
 *     after): a reader sees the old file or the new one, never a part;
 *   - logs are appended whole or not at all: a failed append is cut back to the length
 *     the file had before it.
 * write-file-atomic was used before; it does not check that every byte was written
 * (a short write on a full disk installed a truncated file), hence this module.
 */
const TEMPORARY = /^\..+\.tmp-[0-9a-f]{12}$/;

function temporaryName(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.tmp-${randomBytes(6).toString('hex')}`);
}

/** Syncs a directory, so a rename or a new name in it survives a power cut. */
// Stryker disable next-line BlockStatement: what a power cut keeps cannot be observed from a running test.
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  // Stryker disable next-line BlockStatement: as above.
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Writes through one handle, syncs, and checks the file holds every byte: a short write
 * is an error (ENOSPC), never a shorter file. (writeFile itself retries short writes and
 * throws ENOSPC; the length check guards against a filesystem that reports a write done
 * that it did not do whole, which no filesystem here can be made to do, so no test
 * reaches it.)
 */
async function writeWhole(file: string, data: Buffer, flag: 'wx', mode: number): Promise<void> {
  const handle = await open(file, flag, mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
    const { size } = await handle.stat();
    // Stryker disable next-line all: unreachable without a filesystem that lies (see above).
    if (size !== data.length) {
      // Stryker disable next-line all: as above.
      throw Object.assign(new Error(`${file}: ${size} of ${data.length} bytes written`), { code: 'ENOSPC' });
    }
  } finally {
    await handle.close();
  }
}

/** Replaces `file` with `data` in one rename; on any failure the old file stays as it was. */
export async function writeAtomic(file: string, data: string | Buffer, mode = 0o644): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const temporary = temporaryName(file);
  try {
    await writeWhole(temporary, bytes, 'wx', mode);
    await rename(temporary, file);
  } catch (error) {
    // Gone already when its making failed: nothing to remove, and nothing to say.
    await rm(temporary).catch(() => undefined);
    throw error;
  }
  await syncDir(path.dirname(file));
}

/** Temporary files a kill left in `dir` (never read as state): removed. */
export async function clearTemporaries(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  // One process holds the directory: nothing else removes them meanwhile.
  for (const name of names) if (TEMPORARY.test(name)) await rm(path.join(dir, name));
}

/**
 * Appends `text` whole or not at all: on any failure (a full disk mid-write) the file is
 * cut back to its length before, so the next append starts on a line of its own.
 */
export async function appendWhole(file: string, text: string): Promise<void> {
  const data = Buffer.from(text);
  const handle = await open(file, 'a', 0o644);
  try {
    const before = (await handle.stat()).size;
    try {
      await handle.writeFile(data);
      await handle.sync();
      const after = (await handle.stat()).size;
      // Stryker disable next-line all: unreachable without a filesystem that lies (see writeWhole).
      if (after !== before + data.length) {
        // Stryker disable next-line all: as above.
        const written = `${file}: ${after - before} of ${data.length} bytes appended`;
        // Stryker disable next-line all: as above.
        throw Object.assign(new Error(written), { code: 'ENOSPC' });
      }
    } catch (error) {
      await handle.truncate(before).catch(() => undefined);
      await handle.sync().catch(() => undefined);
      throw error;
    }
  } finally {
    await handle.close();
  }
}

/** A file that must not exist yet, written whole and synced (removed again on failure). */
export async function createDurably(file: string, text: string, mode: number): Promise<void> {
  try {
    await writeWhole(file, Buffer.from(text), 'wx', mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') await rm(file).catch(() => undefined);
    throw error;
  }
  await syncDir(path.dirname(file));
}

/** The file's text, or '' when it does not exist yet. */
export async function readIfExists(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

export async function ensureDir(dir: string, mode = 0o700): Promise<void> {
  await mkdir(dir, { recursive: true, mode });
}
