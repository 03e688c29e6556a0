#!/usr/bin/env node
// `advisory` (and `advisory-feed`, bin/advisory-feed.mjs): runs the bundle (dist/, made by
// `npm run build -w advisory`) when it is at least as new as every source file, so the
// command starts fast; otherwise runs the TypeScript sources through tsx, which is slower
// to start but always current (tsx is a development dependency: where it is not
// installed, the bundle runs whatever its age). The entry tells the two tools apart by
// this file's name.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The daemon is not ended by a SIGHUP (a reload, a closing terminal) while its sources
// load: the entry catches it properly once it runs (src/cli/advisory/signals.ts). Static
// imports are linked before this line runs, but they are node's own and load at once.
if (process.argv[2] === 'run') process.on('SIGHUP', () => undefined);

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bundle = path.join(root, 'dist', 'advisory.mjs');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

let fresh = false;
try {
  fresh = statSync(bundle).mtimeMs >= newestSource(path.join(root, 'src'));
} catch {
  fresh = false;
}

const tsx = fresh ? null : await import('tsx/esm/api').catch(() => null);
if (tsx) {
  tsx.register();
  await import('../src/cli/advisory.ts');
} else {
  await import(pathToFileURL(bundle).href);
}
