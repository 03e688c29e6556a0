import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { parseSecretKey, signMessage } from '../../advisory/src/crypto/signify.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../advisory/src/feed/format/rules.ts';

/** What the advisory benchmarks share: a realistic generated advisory, timing of commands. */
const products = ['proxmox-ve', 'nextcloud', 'postgresql', 'debian'];

export function benchAdvisory(i: number): string {
  const major = 10 + (i % 20);
  return `id: BENCH-${String(i).padStart(6, '0')}
title: Generated advisory ${i} for the verification benchmark
product: ${products[i % 4]}
affects: ">=${major}.0.0 <${major}.${(i % 9) + 1}.0"
verdict: ${i % 3 === 0 ? 'eol' : 'install'}
recommended_version: "${major + 1}.0.0"
effective: 2020-01-01
expires: 2099-01-01
cves:
  - id: CVE-2026-${String(10000 + i)}
    cvss: ${(i % 100) / 10}
summary: >-
  A generated advisory of about the size of a real one, so that reading, hashing and
  parsing cost what they cost on a real feed of this many advisories.
references:
  - https://example.org/advisories/${i}
`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Wall seconds, CPU seconds (user + system) and peak RSS (KiB) of a command, from GNU time. */
export function timed(
  command: string,
  args: string[],
  cwd: string,
): { seconds: number; cpuSeconds: number; maxKib: number } {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M %U %S', command, ...args], {
    cwd,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
  const [seconds, kib, user, system] = (result.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  return {
    seconds: seconds ?? Number.NaN,
    cpuSeconds: (user ?? Number.NaN) + (system ?? Number.NaN),
    maxKib: kib ?? Number.NaN,
  };
}

export function signifyBinary(): string {
  const found = ['signify-openbsd', 'signify'].find(
    (bin) => spawnSync(bin, [], { stdio: 'ignore' }).error === undefined,
  );
  if (!found) {
    console.error('this benchmark needs signify (apt-get install signify-openbsd) for its baseline');
    process.exit(2);
  }
  return found;
}

/** Signs the feed's manifest with the bench key (signify format) beside it. */
export function signBenchFeed(feed: string, secretKey: string, comment: string): void {
  writeFileSync(
    path.join(feed, SIGNATURE_FILE),
    signMessage(parseSecretKey(secretKey), readFileSync(path.join(feed, MANIFEST_FILE)), comment),
  );
}

/**
 * Bundles `entry` as `<name>.mjs` into `outdir` with the feed checker's worker beside it, as
 * the installed appliance runs (the worker is loaded from the bundle's own folder).
 */
export async function bundleWithWorker(entry: string, name: string, outdir: string): Promise<void> {
  await build({
    entryPoints: {
      [name]: entry,
      'check-worker': path.resolve(import.meta.dirname, '../../advisory/src/feed/verify/check-worker.ts'),
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    outdir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; import { fileURLToPath as __fu } from 'node:url'; const require = __cr(import.meta.url); const __filename = __fu(import.meta.url); const __dirname = __fu(new URL('.', import.meta.url));",
    },
  });
}
