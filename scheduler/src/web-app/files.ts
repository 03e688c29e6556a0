import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The built staff app (`npm run build -w web` writes web/dist). Without WEB_APP_DIR it is
 * the nearest `web/dist` above this module: the same from the TypeScript sources
 * (scheduler/src/web-app/) and from the bundle (scheduler/dist/), and absent in an
 * installation that ships the API alone.
 */
export function defaultWebAppDir(from: string = import.meta.dirname): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'web', 'dist');
    if (existsSync(path.join(candidate, 'index.html'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Every file of the built app, as paths relative to its folder with `/` separators. The
 * build is immutable while the server runs, so the list is read once, and a request names
 * a file only by being one of these: no path a client sends reaches outside the folder.
 */
export function listAppFiles(dir: string): Set<string> {
  const files = new Set<string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files.add(path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
  }
  return files;
}
