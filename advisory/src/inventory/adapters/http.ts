import jsonpointer from 'jsonpointer';
import { RE2JS } from 're2js';
import type { Asset } from '../asset.ts';
import { type HttpSourceConfig, resolveFrom } from '../config.ts';
import { AdapterError, adapterSession, getText } from './fetch-json.ts';
import { readNamed } from './limits.ts';

/**
 * The HTTP getter: GET a URL of a local service and take the version from the answer,
 * by JSON pointer (RFC 6901, `/version`) or by a regular expression's first group (RE2
 * syntax, matched in linear time). One
 * asset, named after the source, running `product` at that version.
 */
export async function collectHttp(
  source: HttpSourceConfig,
  inventoryFile: string,
  timeoutMs: number,
  deadline?: AbortSignal,
): Promise<Asset[]> {
  const ca = source.ca_file ? await readNamed(resolveFrom(inventoryFile, source.ca_file)) : undefined;
  const session = adapterSession(ca ? { ca } : {}, timeoutMs, deadline);
  try {
    const text = await getText(source.url, {
      dispatcher: session.dispatcher,
      signal: session.signal,
      timeoutMs,
    });
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
      // RE2JS: linear in the answer's length, so no answer can make the match backtrack
      // for minutes on the daemon's only thread (JavaScript's RegExp can).
      const matcher = RE2JS.compile(source.regex as string).matcher(text);
      version = matcher.find() ? (matcher.group(1) ?? undefined) : undefined;
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
    await session.end();
  }
}
