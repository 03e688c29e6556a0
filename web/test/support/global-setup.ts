import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** The tests drive the built app as the scheduler serves it: build it from the sources first. */
export default function setup(): void {
  const web = path.resolve(import.meta.dirname, '../..');
  const result = spawnSync(
    process.execPath,
    [path.join(web, '../node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'error'],
    {
      cwd: web,
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`vite build failed:\n${result.stderr}${result.stdout}`);
}
