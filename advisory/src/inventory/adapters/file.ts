import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Asset } from '../asset.ts';
import { type FileSource, parseAssetsFile, resolveFrom } from '../config.ts';
import { MAX_ANSWER_BYTES } from './limits.ts';

/** The generic adapter: another YAML or JSON file of assets (`{assets: [...]}`). */
export async function collectFile(source: FileSource, inventoryFile: string): Promise<Asset[]> {
  const file = resolveFrom(inventoryFile, source.path);
  // Non-blocking open: a FIFO at the name must fail at once, not wait for a writer.
  const handle = await open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  let text: string;
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`${file}: not a regular file`);
    if (info.size > MAX_ANSWER_BYTES) throw new Error(`${file}: larger than ${MAX_ANSWER_BYTES} bytes`);
    text = await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
  return parseAssetsFile(text, source.name, file).map((asset) => ({
    ...asset,
    products: { ...source.products, ...asset.products },
    facts: { ...source.facts, ...asset.facts },
  }));
}
