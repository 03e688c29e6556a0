import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** The most JavaScript a first visit may load, gzipped (the staff app's budget). */
export const firstLoadBudgetBytes = 150 * 1024;

interface ManifestChunk {
  file: string;
  imports?: string[];
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
  const manifest = JSON.parse(readFileSync(path.join(dist, 'asset-manifest.json'), 'utf8')) as Record<
    string,
    ManifestChunk
  >;
  const seen = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || seen.has(chunk.file)) return;
    seen.add(chunk.file);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  visit('index.html');
  seen.add('sw.js');
  const files = [...seen].sort().map((file) => ({
    file,
    gzipBytes: gzipSync(readFileSync(path.join(dist, file)), { level: 9 }).length,
  }));
  return { files, gzipBytes: files.reduce((sum, f) => sum + f.gzipBytes, 0) };
}
