import { mkdir, open, readFile } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';

/**
 * How the appliance writes its state: whole files are replaced atomically (a temporary
 * file, synced, renamed over the old one: a kill leaves the old or the new file), logs
 * are appended and synced before anything relies on them.
 */
export async function writeAtomic(file: string, data: string | Buffer, mode = 0o644): Promise<void> {
  await writeFileAtomic(file, data, { mode, fsync: true });
}

/** Writes through one handle and syncs before closing: `a` appends, `wx` makes a new file. */
async function writeSynced(file: string, text: string, flag: 'a' | 'wx', mode: number): Promise<void> {
  const handle = await open(file, flag, mode);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function appendDurably(file: string, text: string): Promise<void> {
  return writeSynced(file, text, 'a', 0o644);
}

/** A file that must not exist yet, written whole and synced. */
export function createDurably(file: string, text: string, mode: number): Promise<void> {
  return writeSynced(file, text, 'wx', mode);
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
