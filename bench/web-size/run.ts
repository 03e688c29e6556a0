/**
 * The staff app's first load (and the manager's screens) against its budget and a floor built in the same run:
 *
 *  - the app: `vite build` of web/ as it ships, the JavaScript a first visit loads (the
 *    page's entry and its static imports, and the service worker), gzipped at level 9;
 *  - the floor: the same Vite and Preact set-up building a page that renders one heading,
 *    so the ratio says what the app's own code and libraries (sign-in, typed client,
 *    router) cost over the framework;
 *  - the budget: 150 kB (the promise; test/size-budget.test.ts holds it in CI).
 *
 * Also timed: the build itself (median of --runs), against the floor's build.
 *
 * Usage: npm run bench:web-size [-- --runs 3]
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  adminBudgetBytes,
  adminLoad,
  firstLoad,
  firstLoadBudgetBytes,
} from '../../web/scripts/bundle-size.ts';
import { median } from '../support/harness.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
const root = path.resolve(import.meta.dirname, '../..');
const web = path.join(root, 'web');
const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');

function build(dir: string, outDir: string): number {
  const started = performance.now();
  execFileSync(process.execPath, [vite, 'build', '--logLevel', 'error', '--outDir', outDir], { cwd: dir });
  return performance.now() - started;
}

// The floor: web/'s configuration and styles, one component.
const scratch = mkdtempSync(path.join(tmpdir(), 'web-size-'));
const floor = path.join(scratch, 'floor');
mkdirSync(path.join(floor, 'src', 'sw'), { recursive: true });
cpSync(path.join(web, 'vite.config.ts'), path.join(floor, 'vite.config.ts'));
cpSync(path.join(web, 'index.html'), path.join(floor, 'index.html'));
writeFileSync(
  path.join(floor, 'src', 'main.tsx'),
  "import { render } from 'preact';\nrender(<h1>Shifts</h1>, document.getElementById('app')!);\n",
);
writeFileSync(path.join(floor, 'src', 'sw', 'worker.ts'), 'export {};\n');
// Resolve preact and the preset from the repository's node_modules.
execFileSync('ln', ['-s', path.join(root, 'node_modules'), path.join(floor, 'node_modules')]);

const appTimes: number[] = [];
const floorTimes: number[] = [];
const appOut = path.join(scratch, 'app-dist');
const floorOut = path.join(scratch, 'floor-dist');
try {
  for (let i = 0; i < runs; i++) {
    appTimes.push(build(web, appOut));
    floorTimes.push(build(floor, floorOut));
  }
  const app = firstLoad(appOut);
  const base = firstLoad(floorOut);
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
  console.log(`staff app first load (gzip -9), ${runs} builds each\n`);
  for (const file of app.files) console.log(`  ${file.file.padEnd(32)} ${kb(file.gzipBytes)}`);
  console.log(`\n  app        ${kb(app.gzipBytes)}`);
  console.log(`  floor      ${kb(base.gzipBytes)}   (Preact rendering one heading, same build)`);
  console.log(`  app/floor  ${(app.gzipBytes / base.gzipBytes).toFixed(2)}x`);
  console.log(
    `  budget     ${kb(firstLoadBudgetBytes)}   app/budget ${(app.gzipBytes / firstLoadBudgetBytes).toFixed(2)}`,
  );
  const admin = adminLoad(appOut);
  console.log('\nmanager screens, loaded by admins on top of the first load\n');
  for (const file of admin.files) console.log(`  ${file.file.padEnd(32)} ${kb(file.gzipBytes)}`);
  console.log(
    `\n  admin      ${kb(admin.gzipBytes)}   budget ${kb(adminBudgetBytes)}   admin/budget ${(admin.gzipBytes / adminBudgetBytes).toFixed(2)}`,
  );
  console.log(
    `\n  build      app ${median(appTimes).toFixed(0)} ms, floor ${median(floorTimes).toFixed(0)} ms, ratio ${(median(appTimes) / median(floorTimes)).toFixed(2)}x`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
