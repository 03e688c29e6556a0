import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** The most JavaScript a first visit may load, gzipped (the staff app's budget). */
export const firstLoadBudgetBytes = 150 * 1024;

/** The most JavaScript the manager's screens may add, gzipped: loaded by admins only. */
export const adminBudgetBytes = 120 * 1024;

/** The module the manager's screens start from (src/app.tsx imports it lazily). */
export const adminEntry = 'src/admin/index.tsx';

interface ManifestChunk {
  file: string;
  imports?: string[];
  dynamicImports?: string[];
  isEntry?: boolean;
}

export interface FirstLoad {
  files: { file: string; gzipBytes: number }[];
  gzipBytes: number;
}

/**
 * The JavaScript a first visit loads from a build: the page's entry with everything it
 * imports statically, and the service worker it registers; sizes gzipped at level 9 as a
 * server would send them. Lazy chunks load later and are not counted.
 */
export function firstLoad(dist: string): FirstLoad {
  const files = reachable(readManifest(dist), 'index.html');
  files.add('sw.js');
  return measured(dist, files);
}

/**
 * What an admin's first visit to a manager's screen loads on top of the first load: the
 * admin chunk and what it imports that the first load has not brought already.
 */
export function adminLoad(dist: string): FirstLoad {
  const manifest = readManifest(dist);
  const first = reachable(manifest, 'index.html');
  const admin = [...reachable(manifest, adminEntry)].filter((file) => !first.has(file));
  return measured(dist, new Set(admin));
}

function readManifest(dist: string): Record<string, ManifestChunk> {
  return JSON.parse(readFileSync(path.join(dist, 'asset-manifest.json'), 'utf8')) as Record<
    string,
    ManifestChunk
  >;
}

/** The files a chunk loads: itself and its static imports, transitively. */
function reachable(manifest: Record<string, ManifestChunk>, start: string): Set<string> {
  const seen = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || seen.has(chunk.file)) return;
    seen.add(chunk.file);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  visit(start);
  return seen;
}

function measured(dist: string, files: Set<string>): FirstLoad {
  const sized = [...files].sort().map((file) => ({
    file,
    gzipBytes: gzipSync(readFileSync(path.join(dist, file)), { level: 9 }).length,
  }));
  return { files: sized, gzipBytes: sized.reduce((sum, f) => sum + f.gzipBytes, 0) };
}
