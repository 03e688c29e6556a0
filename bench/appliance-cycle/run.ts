/**
 * bench/appliance-cycle: one refresh of a new installation with a feed of 20,000
 * advisories and an inventory of 5,000 assets (pull and verify, cache, inventory,
 * evaluation, decision log, alert queue), against verifying the same feed alone,
 * measured in the same run. Each side runs in a fresh process (its peak RSS is its own);
 * rounds alternate the two.
 *
 *   npm run bench:appliance-cycle     (ADVISORIES=20000 ASSETS=5000 ROUNDS=3 to change)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateKeyPair } from '../../advisory/src/crypto/signify.ts';
import { buildFeed } from '../../advisory/src/feed/author/build.ts';
import { benchAdvisory, bundleWithWorker, median, signBenchFeed } from '../feed-verify/feed.ts';

const advisories = Number(process.env.ADVISORIES ?? 20_000);
const assets = Number(process.env.ASSETS ?? 5_000);
const rounds = Number(process.env.ROUNDS ?? 3);
const modules = ['proxmox-ve', 'nextcloud', 'database-stack', 'platform'];

interface Measure {
  ms: number;
  maxRssMb: number;
  assets: number;
  advisories: number;
}

const dir = mkdtempSync(path.join(tmpdir(), 'cycle-bench-'));
try {
  const feed = path.join(dir, 'feed');
  for (const module of modules) mkdirSync(path.join(feed, module), { recursive: true });
  for (let i = 0; i < advisories; i++)
    writeFileSync(path.join(feed, modules[i % 4] as string, `adv-${i}.yaml`), benchAdvisory(i));
  const built = buildFeed({ feedDir: feed, expiresInMs: 14 * 86_400_000 });
  if (!built.ok) throw new Error('the generated feed does not build');
  const keys = generateKeyPair('bench');
  const key = path.join(dir, 'bench.pub');
  writeFileSync(key, keys.publicKey);
  signBenchFeed(feed, keys.secretKey, 'bench');
  // An estate of many hosts on a few hundred versions: each runs Debian and one service.
  const lines = ['assets:'];
  const services = ['proxmox-ve', 'nextcloud', 'postgresql'];
  for (let i = 0; i < assets; i++) {
    const service = services[i % 3] as string;
    lines.push(
      `  - { name: host-${i}, products: { ${service}: "${10 + (i % 20)}.${i % 9}.${i % 5}", debian: "${10 + (i % 20)}.${i % 7}" }, facts: { last_restore_test: "2026-0${1 + (i % 9)}-15" } }`,
    );
  }
  const inventory = path.join(dir, 'inventory.yaml');
  writeFileSync(inventory, `${lines.join('\n')}\n`);

  // Both sides run bundled, as the installed appliance does (with its worker beside it).
  const bundle = path.join(dir, 'bundle');
  await bundleWithWorker(path.join(import.meta.dirname, 'side.ts'), 'side', bundle);
  if (process.env.KEEP_DIR) {
    console.log(`kept ${dir}`);
    process.exit(0);
  }
  const side = (mode: 'refresh' | 'verify' | 'copy', round: number): Measure => {
    const output = execFileSync(
      process.execPath,
      [path.join(bundle, 'side.mjs'), mode, feed, key, inventory, path.join(dir, `${mode}-${round}`)],
      { encoding: 'utf8' },
    );
    return JSON.parse(output.trim().split('\n').at(-1) as string) as Measure;
  };

  side('verify', 0); // warm the page cache
  const results = { verify: [] as Measure[], copy: [] as Measure[], refresh: [] as Measure[] };
  console.log(`\nappliance refresh: ${advisories} advisories, ${assets} assets, ${rounds} paired rounds`);
  console.log(
    '| round | verify alone ms | verify peak RSS MB | copy files alone ms | refresh ms | refresh peak RSS MB | refresh/verify |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (let round = 1; round <= rounds; round++) {
    const verify = side('verify', round);
    const copy = side('copy', round);
    const refresh = side('refresh', round);
    results.copy.push(copy);
    if (refresh.assets !== assets || refresh.advisories !== advisories)
      throw new Error(`refresh saw ${JSON.stringify(refresh)}`);
    results.verify.push(verify);
    results.refresh.push(refresh);
    console.log(
      `| ${round} | ${verify.ms.toFixed(0)} | ${verify.maxRssMb.toFixed(0)} | ${copy.ms.toFixed(0)} | ${refresh.ms.toFixed(0)} | ${refresh.maxRssMb.toFixed(0)} | ${(refresh.ms / verify.ms).toFixed(2)} |`,
    );
  }
  const v = median(results.verify.map((m) => m.ms));
  const r = median(results.refresh.map((m) => m.ms));
  console.log(
    `copying the feed's files alone: median ${median(results.copy.map((m) => m.ms)).toFixed(0)} ms`,
  );
  console.log(
    `\nrefresh: median ${r.toFixed(0)} ms, peak RSS ${median(results.refresh.map((m) => m.maxRssMb)).toFixed(0)} MB; verify alone ${v.toFixed(0)} ms, ${median(results.verify.map((m) => m.maxRssMb)).toFixed(0)} MB; ratio ${(r / v).toFixed(2)}`,
  );
} finally {
  if (!process.env.KEEP_DIR) rmSync(dir, { recursive: true, force: true });
}
