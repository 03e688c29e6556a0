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

export async function appendDurably(file: string, text: string): Promise<void> {
  const handle = await open(file, 'a', 0o644);
  try {
    await handle.appendFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
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
