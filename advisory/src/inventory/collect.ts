import { readRegularFile } from '../storage/regular-file.ts';
import { collectFile } from './adapters/file.ts';
import { collectHttp } from './adapters/http.ts';
import { DEFAULT_TIMEOUT_MS, timeoutOf } from './adapters/limits.ts';
import { collectNextcloud } from './adapters/nextcloud.ts';
import { collectNextcloudApi } from './adapters/nextcloud-api.ts';
import { collectProxmox } from './adapters/proxmox.ts';
import type { Asset } from './asset.ts';
import {
  assetsOf,
  checkReported,
  InventoryError,
  type InventoryFile,
  parseInventoryFile,
  type SourceConfig,
} from './config.ts';

/** How each source fared in one collection (the dashboard's inventory status). */
export interface SourceStatus {
  name: string;
  type: SourceConfig['type'] | 'inventory';
  ok: boolean;
  error?: string;
  assets: number;
  ms: number;
}

export interface Collection {
  assets: Asset[];
  sources: SourceStatus[];
}

const MAX_INVENTORY_BYTES = 4 * 1024 * 1024;

/** Reads and checks the inventory file; InventoryError names the problem's place. */
export async function loadInventory(file: string): Promise<InventoryFile> {
  let text: string;
  try {
    text = await readRegularFile(file, MAX_INVENTORY_BYTES);
  } catch (error) {
    throw new InventoryError(`${file}: ${(error as Error).message}`);
  }
  return parseInventoryFile(text, file);
}

/** How long past its `timeout` a source may take in all (its requests have `timeout` each). */
const GRACE_MS = 5000;

function run(source: SourceConfig, inventoryFile: string): Promise<Asset[]> {
  const timeoutMs = timeoutOf(source, DEFAULT_TIMEOUT_MS);
  const deadlineMs = timeoutMs + GRACE_MS;
  // One signal for the whole source: when it aborts, every request still open and every
  // one not yet made stops, and `occ` is killed. Stopping to wait is not enough: an
  // adapter asking one thing after another (a Nextcloud's apps, a cluster's guests) would
  // go on in the background, each request with its own deadline, while the next
  // collection starts.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error(`no answer within ${deadlineMs} ms`)), deadlineMs);
  const signal = deadline.signal;
  const work = (() => {
    switch (source.type) {
      case 'proxmox':
        return collectProxmox(source, inventoryFile, timeoutMs, signal);
      case 'nextcloud':
        return collectNextcloud(source, timeoutMs, signal);
      case 'nextcloud-api':
        return collectNextcloudApi(source, inventoryFile, timeoutMs, signal);
      case 'file':
        return collectFile(source, inventoryFile);
      case 'http':
        return collectHttp(source, inventoryFile, timeoutMs, signal);
    }
  })();
  // Settles on the abort itself, before the adapter's own error (`stopped at the source's
  // deadline`) unwinds: the status says which deadline passed.
  const guard = new Promise<never>((_, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  return Promise.race([work, guard]).finally(() => clearTimeout(timer));
}

/**
 * Asks every source at once. A source that fails never stops the others: its assets are
 * reported `unknown` with the reason, under the names it reported last time (`known`),
 * or as one asset named after the source when it never answered.
 */
export async function collectInventory(
  inventoryFile: string,
  inventory: InventoryFile,
  known: ReadonlyMap<string, readonly string[]> = new Map(),
): Promise<Collection> {
  const inline = assetsOf(inventory.assets ?? [], 'inventory', inventoryFile);
  const statuses: SourceStatus[] = [];
  if (inline.length > 0)
    statuses.push({ name: 'inventory', type: 'inventory', ok: true, assets: inline.length, ms: 0 });
  const results = await Promise.all(
    (inventory.sources ?? []).map(async (source): Promise<Asset[]> => {
      const started = performance.now();
      try {
        const assets = checkReported(await run(source, inventoryFile), source.name);
        statuses.push({
          name: source.name,
          type: source.type,
          ok: true,
          assets: assets.length,
          ms: performance.now() - started,
        });
        return assets;
      } catch (error) {
        const message = (error as Error).message || String(error);
        const names = known.get(source.name) ?? [source.name];
        statuses.push({
          name: source.name,
          type: source.type,
          ok: false,
          error: message,
          assets: names.length,
          ms: performance.now() - started,
        });
        return names.map((name) => ({
          name,
          source: source.name,
          products: {},
          facts: {},
          status: 'unknown',
          error: message,
        }));
      }
    }),
  );
  const assets: Asset[] = [...inline];
  const seen = new Set(inline.map((a) => a.name));
  for (const asset of results.flat()) {
    // Two sources reporting one name: the second is told apart by its source, and by a
    // number when that name is taken too (an inline `more:db`): names stay unique.
    let name = asset.name;
    if (seen.has(name)) {
      name = `${asset.source}:${asset.name}`;
      for (let n = 2; seen.has(name); n++) name = `${asset.source}:${asset.name}:${n}`;
    }
    seen.add(name);
    assets.push({ ...asset, name });
  }
  statuses.sort((a, b) => a.name.localeCompare(b.name));
  return { assets, sources: statuses };
}
