/**
 * One measured side of bench/appliance-cycle, in a fresh process so its peak memory is
 * its own: `side.ts refresh|verify <feed dir> <public key> <inventory> <state dir>`.
 * - refresh: the appliance's first refresh of a new installation: pull and verify the
 *   feed, write the cache and the state, ask the inventory, evaluate every asset, log
 *   the decisions, queue the summary alert.
 * - verify: verifying the same feed alone (the library, advisories kept), the floor.
 * - copy: copying the feed's files into a new directory, file by file (what the cache
 *   costs at least on this disk).
 * Prints one JSON line: { ms, maxRssMb, assets, advisories }.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { openAppliance } from '../../advisory/src/appliance/open.ts';
import { parsePublicKey } from '../../advisory/src/crypto/signify.ts';
import { DirectorySource } from '../../advisory/src/feed/sources/directory.ts';
import { verifyFeed } from '../../advisory/src/feed/verify/verify-feed.ts';

const [mode, feed, key, inventory, stateDir] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
let result: { ms: number; assets: number; advisories: number };
if (mode === 'refresh') {
  const { appliance } = await openAppliance({
    env: {
      ADVISORY_FEED_URL: feed,
      ADVISORY_PUBLIC_KEYS: key,
      ADVISORY_INVENTORY: inventory,
      ADVISORY_STATE_DIR: stateDir,
    },
    logger: pino({ level: 'silent' }),
  });
  const started = performance.now();
  const status = await appliance.refresh();
  const ms = performance.now() - started;
  if (status.lastPull?.outcome !== 'accepted')
    throw new Error(`feed ${status.lastPull?.outcome}: ${status.lastPull?.message}`);
  result = { ms, assets: status.evaluations.length, advisories: status.feed?.feed.advisoryCount ?? 0 };
  await appliance.stop();
} else if (mode === 'verify') {
  const trustedKeys = [parsePublicKey(readFileSync(key, 'utf8'))];
  const started = performance.now();
  const verified = await verifyFeed(new DirectorySource(feed), { trustedKeys });
  const ms = performance.now() - started;
  if (!verified.ok) throw new Error(JSON.stringify(verified));
  result = { ms, assets: 0, advisories: verified.feed.advisoryCount };
} else if (mode === 'copy') {
  const started = performance.now();
  let files = 0;
  const copy = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      if (entry.isDirectory()) copy(path.join(from, entry.name), path.join(to, entry.name));
      else {
        writeFileSync(path.join(to, entry.name), readFileSync(path.join(from, entry.name)));
        files += 1;
      }
    }
  };
  copy(feed, stateDir);
  result = { ms: performance.now() - started, assets: 0, advisories: files };
} else {
  throw new Error('usage: side.ts refresh|verify|copy <feed> <key> <inventory> <state dir>');
}
process.stdout.write(`${JSON.stringify({ ...result, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
