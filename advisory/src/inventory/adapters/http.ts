import jsonpointer from 'jsonpointer';
import type { Asset } from '../asset.ts';
import { type HttpSourceConfig, resolveFrom } from '../config.ts';
import { AdapterError, adapterAgent, getText } from './fetch-json.ts';
import { readNamed } from './limits.ts';

/**
 * The HTTP getter: GET a URL of a local service and take the version from the answer,
 * by JSON pointer (RFC 6901, `/version`) or by a regular expression's first group. One
 * asset, named after the source, running `product` at that version.
 */
export async function collectHttp(
  source: HttpSourceConfig,
  inventoryFile: string,
  timeoutMs: number,
): Promise<Asset[]> {
  const ca = source.ca_file ? await readNamed(resolveFrom(inventoryFile, source.ca_file)) : undefined;
  const dispatcher = adapterAgent(ca ? { ca } : {}, timeoutMs);
  try {
    const text = await getText(source.url, { dispatcher, timeoutMs });
    let version: unknown;
    if (source.json_pointer !== undefined) {
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch {
        throw new AdapterError(`${source.url}: the answer is not JSON`);
      }
      version =
        document !== null && typeof document === 'object'
          ? jsonpointer.get(document, source.json_pointer)
          : undefined;
    } else {
      version = new RegExp(source.regex as string).exec(text)?.[1];
    }
    if (typeof version === 'number') version = String(version);
    if (typeof version !== 'string' || version.trim() === '' || version.length > 100)
      throw new AdapterError(`${source.url}: no version at ${source.json_pointer ?? `/${source.regex}/`}`);
    return [
      {
        name: source.name,
        source: source.name,
        products: { ...source.products, [source.product]: version.trim() },
        facts: { ...source.facts },
        status: 'ok',
      },
    ];
  } finally {
    await dispatcher.close();
  }
}
