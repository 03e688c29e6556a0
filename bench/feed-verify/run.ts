/**
 * bench/feed-verify: a feed of 20,000 advisories, measured against the system tools in
 * the same run:
 *  1. full verification: `advisory-feed verify` (the whole process, as an operator runs
 *     it) against the bytes-only part of the job done by `sha256sum -c` over the same
 *     files plus `signify -V` of the manifest (target: at most 4x);
 *  2. a refresh of an unchanged feed: the appliance's feed step (read the manifest, find it
 *     is the one accepted) against `signify -V` alone (target: at most 1.5x), from a
 *     directory and over HTTP with a conditional request;
 *  3. incremental verification: the feed republished with 1 % of its advisories changed,
 *     verified in a bundled appliance process (bench/feed-verify/incremental.ts) as a
 *     pull does, reusing the validated results of the feed in use (target: at most 1.5x
 *     the bytes-only baseline of the changed feed, measured in the same round); beside
 *     it, as a start does (the results read and checked from their sealed file), and
 *     from scratch in the same process.
 * Prints medians, the ratios and peak memory.
 *
 *   npm run bench:feed-verify          (ADVISORIES=20000 RUNS=5 CHANGED=0.01 to change)
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { openAppliance } from '../../advisory/src/appliance/open.ts';
import { generateKeyPair } from '../../advisory/src/crypto/signify.ts';
import { buildFeed } from '../../advisory/src/feed/author/build.ts';
import { MANIFEST_FILE } from '../../advisory/src/feed/format/rules.ts';
import { benchAdvisory, bundleWithWorker, median, signBenchFeed, signifyBinary, timed } from './feed.ts';

const advisories = Number(process.env.ADVISORIES ?? 20_000);
const runs = Number(process.env.RUNS ?? 5);
const changedShare = Number(process.env.CHANGED ?? 0.01);
const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'node_modules/.bin/advisory-feed');
const signify = signifyBinary();
// The command as installed: the bundle, fresh (the bin falls back to the slower sources otherwise).
spawnSync('npm', ['run', '-s', 'build', '-w', 'advisory'], { cwd: root, stdio: 'inherit' });
const modules = ['proxmox-ve', 'nextcloud', 'database-stack', 'platform'];

const dir = mkdtempSync(path.join(tmpdir(), 'feed-bench-'));
try {
  const feed = path.join(dir, 'feed');
  for (const module of modules) mkdirSync(path.join(feed, module), { recursive: true });
  for (let i = 0; i < advisories; i++) {
    writeFileSync(path.join(feed, modules[i % 4] as string, `adv-${i}.yaml`), benchAdvisory(i));
  }
  const built = buildFeed({ feedDir: feed, expiresInMs: 14 * 86_400_000 });
  if (!built.ok)
    throw new Error(`generated feed does not build: ${JSON.stringify(built.findings.slice(0, 3))}`);
  const keys = generateKeyPair('bench');
  const pub = path.join(dir, 'bench.pub');
  writeFileSync(pub, keys.publicKey);
  signBenchFeed(feed, keys.secretKey, 'verify with bench.pub');
  const sums = Object.values(built.manifest.modules)
    .flatMap(({ files }) => files.map((f) => `${f.sha256}  ${f.path}`))
    .join('\n');
  writeFileSync(path.join(dir, 'SHA256SUMS'), `${sums}\n`);

  // 1. Full verification, paired runs.
  const verifyRuns: { seconds: number; maxKib: number }[] = [];
  const baselineRuns: number[] = [];
  const signifyRuns: number[] = [];
  for (let run = 0; run < runs; run++) {
    verifyRuns.push(timed(cli, ['verify', '--feed', feed, '--public-key', pub], dir));
    const sha = timed('sha256sum', ['--quiet', '-c', path.join(dir, 'SHA256SUMS')], feed);
    const sig = timed(signify, ['-V', '-q', '-p', pub, '-m', path.join(feed, MANIFEST_FILE)], dir);
    baselineRuns.push(sha.seconds + sig.seconds);
    signifyRuns.push(sig.seconds);
  }
  const startup = timed(cli, ['--help'], dir);

  // 2. The feed step of a refresh of an unchanged feed, in a running appliance.
  const inventory = path.join(dir, 'inventory.yaml');
  writeFileSync(inventory, 'assets: []\n');
  const server = createServer((request, response) => {
    const file = path.join(feed, decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
    let data: Buffer;
    try {
      data = readFileSync(file);
    } catch {
      response.writeHead(404).end();
      return;
    }
    const etag = `"${createHash('sha256').update(data).digest('hex').slice(0, 16)}"`;
    if (request.headers['if-none-match'] === etag) return response.writeHead(304, { etag }).end();
    response.writeHead(200, { etag, 'last-modified': statSync(file).mtime.toUTCString() }).end(data);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const unchanged: Record<string, number[]> = {};
  for (const [name, url] of [
    ['directory', feed],
    ['http', `http://127.0.0.1:${(server.address() as AddressInfo).port}/`],
  ] as const) {
    const stateDir = path.join(dir, `state-${name}`);
    const { appliance } = await openAppliance({
      env: {
        ADVISORY_FEED_URL: url,
        ADVISORY_PUBLIC_KEYS: pub,
        ADVISORY_INVENTORY: inventory,
        ADVISORY_STATE_DIR: stateDir,
        ADVISORY_FEED_CACHE: path.join(dir, `cache-${name}`),
      },
      logger: pino({ level: 'silent' }),
    });
    if ((await appliance.pullFeed())?.outcome !== 'accepted')
      throw new Error(`${name}: the feed was not accepted`);
    const times: number[] = [];
    for (let run = 0; run < Math.max(runs, 9); run++) {
      const started = performance.now();
      const outcome = await appliance.pullFeed();
      times.push((performance.now() - started) / 1000);
      if (outcome?.outcome !== 'unchanged')
        throw new Error(`${name}: expected unchanged, got ${outcome?.outcome}`);
    }
    unchanged[name] = times;
    await appliance.stop();
  }
  server.close();

  // 3. Incremental verification, in a bundled appliance process per round.
  const bundle = path.join(dir, 'bundle');
  await bundleWithWorker(path.join(import.meta.dirname, 'incremental.ts'), 'incremental', bundle);
  const side = (args: string[]): Record<string, number> => {
    const result = spawnSync(process.execPath, [path.join(bundle, 'incremental.mjs'), ...args], {
      cwd: dir,
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(`incremental side failed: ${result.stderr}`);
    return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}');
  };
  // The next day's feed: every 1/CHANGED-th advisory revised (same id, another title),
  // rebuilt and signed; the previous one kept beside it (the feed in use).
  const previous = path.join(dir, 'previous');
  spawnSync('cp', ['-a', feed, previous]);
  const step = Math.max(1, Math.round(1 / changedShare));
  let changed = 0;
  for (let i = 0; i < advisories; i += step) {
    const file = path.join(feed, modules[i % 4] as string, `adv-${i}.yaml`);
    writeFileSync(file, benchAdvisory(i).replace('Generated advisory', 'Revised advisory'));
    changed++;
  }
  const next = buildFeed({ feedDir: feed, expiresInMs: 14 * 86_400_000 });
  if (!next.ok) throw new Error(`changed feed does not build: ${JSON.stringify(next.findings.slice(0, 3))}`);
  signBenchFeed(feed, keys.secretKey, 'verify with bench.pub');
  const nextSums = Object.values(next.manifest.modules)
    .flatMap(({ files }) => files.map((f) => `${f.sha256}  ${f.path}`))
    .join('\n');
  writeFileSync(path.join(dir, 'SHA256SUMS'), `${nextSums}\n`);
  interface Round {
    pull: number;
    restart: number;
    cold: number;
    baseline: number;
    reused: number;
    /** CPU seconds, all threads: the part of the figure the machine's other load does not change. */
    cpu: { pull: number; restart: number; cold: number; baseline: number };
  }
  const rounds: Round[] = [];
  for (let run = 0; run < runs; run++) {
    const measured = side([previous, feed, pub, path.join(dir, 'results')]);
    const sha = timed('sha256sum', ['--quiet', '-c', path.join(dir, 'SHA256SUMS')], feed);
    const sig = timed(signify, ['-V', '-q', '-p', pub, '-m', path.join(feed, MANIFEST_FILE)], dir);
    rounds.push({
      pull: (measured.pullMs as number) / 1000,
      restart: (measured.restartMs as number) / 1000,
      cold: (measured.coldMs as number) / 1000,
      baseline: sha.seconds + sig.seconds,
      reused: measured.reused as number,
      cpu: {
        pull: (measured.pullCpuMs as number) / 1000,
        restart: (measured.restartCpuMs as number) / 1000,
        cold: (measured.coldCpuMs as number) / 1000,
        baseline: sha.cpuSeconds + sig.cpuSeconds,
      },
    });
  }

  const verifySeconds = median(verifyRuns.map((r) => r.seconds));
  const baselineSeconds = median(baselineRuns);
  const signifySeconds = median(signifyRuns);
  console.log(
    `\nfeed of ${advisories} advisories (manifest ${(statSync(path.join(feed, MANIFEST_FILE)).size / 1e6).toFixed(1)} MB), median of ${runs} runs`,
  );
  console.log('| what | seconds | peak RSS MiB |');
  console.log('|---|---:|---:|');
  console.log(`| sha256sum -c + signify -V (bytes-only baseline) | ${baselineSeconds.toFixed(3)} | |`);
  console.log(`| signify -V alone | ${signifySeconds.toFixed(3)} | |`);
  console.log(
    `| advisory-feed verify (whole process) | ${verifySeconds.toFixed(3)} | ${(Math.max(...verifyRuns.map((r) => r.maxKib)) / 1024).toFixed(1)} |`,
  );
  console.log(
    `| of which process start (advisory-feed --help) | ${startup.seconds.toFixed(3)} | ${(startup.maxKib / 1024).toFixed(1)} |`,
  );
  for (const [name, times] of Object.entries(unchanged)) {
    console.log(
      `| refresh of the unchanged feed, ${name} (in the appliance) | ${median(times).toFixed(4)} | |`,
    );
  }
  console.log(
    `\nfull verify / bytes-only baseline: ${(verifySeconds / baselineSeconds).toFixed(2)} (target <= 4)`,
  );
  for (const [name, times] of Object.entries(unchanged)) {
    console.log(
      `unchanged refresh (${name}) / signify -V: ${(median(times) / signifySeconds).toFixed(2)} (target <= 1.5)`,
    );
  }
  console.log(
    `\nincremental: ${changed} of ${advisories} advisories changed, ${rounds[0]?.reused} reused; seconds per round:`,
  );
  console.log(
    '| round | bytes-only baseline | pull (results in memory) | ratio | start (results from the file) | ratio | from scratch (same process) | ratio |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  const ratio = (value: number, r: { baseline: number }) => (value / r.baseline).toFixed(2);
  const cpuTable = rounds.map(
    (r, i) =>
      `| ${i + 1} | ${r.cpu.baseline.toFixed(3)} | ${r.cpu.pull.toFixed(3)} | ${r.cpu.restart.toFixed(3)} | ${r.cpu.cold.toFixed(3)} |`,
  );
  rounds.forEach((r, i) => {
    console.log(
      `| ${i + 1} | ${r.baseline.toFixed(3)} | ${r.pull.toFixed(3)} | ${ratio(r.pull, r)} | ${r.restart.toFixed(3)} | ${ratio(r.restart, r)} | ${r.cold.toFixed(3)} | ${ratio(r.cold, r)} |`,
    );
  });
  console.log('\nCPU seconds (user + system, all threads) of the same rounds:');
  console.log('| round | bytes-only baseline | pull | start | from scratch |');
  console.log('|---:|---:|---:|---:|---:|');
  for (const line of cpuTable) console.log(line);
  const medianRatio = (pick: (r: Round) => number) =>
    median(rounds.map((r) => pick(r) / r.baseline)).toFixed(2);
  console.log(
    `incremental verify / bytes-only baseline, median of rounds: pull ${medianRatio((r) => r.pull)} (target <= 1.5), start ${medianRatio((r) => r.restart)}, from scratch ${medianRatio((r) => r.cold)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
