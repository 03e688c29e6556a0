import type { Asset } from '../asset.ts';
import { type FileSource, parseAssetsFile, resolveFrom } from '../config.ts';
import { MAX_ANSWER_BYTES, readNamed } from './limits.ts';

/** The generic adapter: another YAML or JSON file of assets (`{assets: [...]}`). */
export async function collectFile(source: FileSource, inventoryFile: string): Promise<Asset[]> {
  const file = resolveFrom(inventoryFile, source.path);
  const text = await readNamed(file, MAX_ANSWER_BYTES);
  return parseAssetsFile(text, source.name, file).map((asset) => ({
    ...asset,
    products: { ...source.products, ...asset.products },
    facts: { ...source.facts, ...asset.facts },
  }));
}
