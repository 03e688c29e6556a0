/**
 * bench/feed-verify: a feed of 20,000 advisories; `advisory-feed verify` (the whole
 * process, as an operator runs it) against `sha256sum -c` over the same files plus
 * `signify -V` of the manifest, measured in the same run. Prints medians, the ratio and
 * peak memory.
 *
 *   npm run bench:feed-verify          (ADVISORIES=20000 RUNS=5 to change)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  generateKeyPair,
  parsePublicKey,
  parseSecretKey,
  signMessage,
} from '../../advisory/src/crypto/signify.ts';
import { buildFeed } from '../../advisory/src/feed/build.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../advisory/src/feed/rules.ts';
import { DirectorySource } from '../../advisory/src/feed/sources/directory.ts';
import { verifyFeed } from '../../advisory/src/feed/verify-feed.ts';

const advisories = Number(process.env.ADVISORIES ?? 20_000);
const runs = Number(process.env.RUNS ?? 5);
const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'node_modules/.bin/advisory-feed');
const signify = ['signify-openbsd', 'signify'].find(
  (bin) => spawnSync(bin, [], { stdio: 'ignore' }).error === undefined,
);
if (!signify) {
  console.error('bench/feed-verify needs signify (apt-get install signify-openbsd) for its baseline');
  process.exit(2);
}

const modules = ['proxmox-ve', 'nextcloud', 'database-stack', 'platform'];
const products = ['proxmox-ve', 'nextcloud', 'postgresql', 'debian'];

function advisoryText(i: number): string {
  const major = 10 + (i % 20);
  return `id: BENCH-${String(i).padStart(6, '0')}
title: Generated advisory ${i} for the verification benchmark
product: ${products[i % 4]}
affects: ">=${major}.0.0 <${major}.${(i % 9) + 1}.0"
verdict: ${i % 3 === 0 ? 'eol' : 'install'}
recommended_version: "${major + 1}.0.0"
effective: 2026-01-01
expires: 2028-01-01
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Wall seconds and peak RSS (KiB) of a command, from GNU time. */
function timed(command: string, args: string[], cwd: string): { seconds: number; maxKib: number } {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', command, ...args], { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
  const [seconds, kib] = (result.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  return { seconds: seconds ?? Number.NaN, maxKib: kib ?? Number.NaN };
}

const dir = mkdtempSync(path.join(tmpdir(), 'feed-bench-'));
try {
  const feed = path.join(dir, 'feed');
  for (const module of modules) mkdirSync(path.join(feed, module), { recursive: true });
  for (let i = 0; i < advisories; i++) {
    writeFileSync(path.join(feed, modules[i % 4] as string, `adv-${i}.yaml`), advisoryText(i));
  }
  const built = buildFeed({ feedDir: feed, expiresInMs: 14 * 86_400_000 });
  if (!built.ok)
    throw new Error(`generated feed does not build: ${JSON.stringify(built.findings.slice(0, 3))}`);
  const keys = generateKeyPair('bench');
  writeFileSync(path.join(dir, 'bench.pub'), keys.publicKey);
  writeFileSync(
    path.join(feed, SIGNATURE_FILE),
    signMessage(
      parseSecretKey(keys.secretKey),
      readFileSync(path.join(feed, MANIFEST_FILE)),
      'verify with bench.pub',
    ),
  );
  const sums = Object.values(built.manifest.modules)
    .flatMap(({ files }) => files.map((f) => `${f.sha256}  ${f.path}`))
    .join('\n');
  writeFileSync(path.join(dir, 'SHA256SUMS'), `${sums}\n`);

  const verifyRuns: { seconds: number; maxKib: number }[] = [];
  const baselineRuns: number[] = [];
  let baselineKib = 0;
  for (let run = 0; run < runs; run++) {
    verifyRuns.push(timed(cli, ['verify', '--feed', feed, '--public-key', path.join(dir, 'bench.pub')], dir));
    const sha = timed('sha256sum', ['--quiet', '-c', path.join(dir, 'SHA256SUMS')], feed);
    const sig = timed(
      signify,
      ['-V', '-q', '-p', path.join(dir, 'bench.pub'), '-m', path.join(feed, MANIFEST_FILE)],
      dir,
    );
    baselineRuns.push(sha.seconds + sig.seconds);
    baselineKib = Math.max(baselineKib, sha.maxKib, sig.maxKib);
  }

  // The library alone, in this (warm) process: what the appliance's refresh costs.
  const trusted = [parsePublicKey(keys.publicKey)];
  await verifyFeed(new DirectorySource(feed), { trustedKeys: trusted });
  const libraryMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const result = await verifyFeed(new DirectorySource(feed), { trustedKeys: trusted });
    libraryMs.push(performance.now() - started);
    if (!result.ok) throw new Error(JSON.stringify(result));
  }
  const startup = timed(cli, ['--help'], dir);

  const verifySeconds = median(verifyRuns.map((r) => r.seconds));
  const baselineSeconds = median(baselineRuns);
  console.log(`\nfeed of ${advisories} advisories, median of ${runs} runs`);
  console.log('| what | seconds | peak RSS MiB |');
  console.log('|---|---:|---:|');
  console.log(
    `| sha256sum -c + signify -V (baseline) | ${baselineSeconds.toFixed(3)} | ${(baselineKib / 1024).toFixed(1)} |`,
  );
  console.log(
    `| advisory-feed verify (whole process) | ${verifySeconds.toFixed(3)} | ${(Math.max(...verifyRuns.map((r) => r.maxKib)) / 1024).toFixed(1)} |`,
  );
  console.log(
    `| of which process start (advisory-feed --help) | ${startup.seconds.toFixed(3)} | ${(startup.maxKib / 1024).toFixed(1)} |`,
  );
  console.log(`| verifyFeed() in a running process | ${(median(libraryMs) / 1000).toFixed(3)} | |`);
  console.log(`\nratio verify/baseline: ${(verifySeconds / baselineSeconds).toFixed(2)} (target <= 1.5)`);
  console.log(
    `ratio in-process verifyFeed()/baseline: ${(median(libraryMs) / 1000 / baselineSeconds).toFixed(2)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
