/**
 * The in-appliance side of bench/feed-verify's incremental case, run bundled in a fresh
 * process as the installed appliance runs (with its checker worker beside it):
 *   incremental.mjs <previous feed> <changed feed> <public key> <results file>
 * Verifies the previous feed whole (the feed in use; this also warms the process up) and
 * stores its validated results, sealed, as the cache does. Then verifies the changed
 * feed three ways, timed: as a pull does (reusing the results of the feed in use, held in
 * memory, and taking unchanged files from its copy instead of reading them again), as a start does (reusing the results read and checked from their file), and
 * from scratch. Prints one JSON line.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parsePublicKey } from '../../advisory/src/crypto/signify.ts';
import { DirectorySource } from '../../advisory/src/feed/sources/directory.ts';
import {
  decodeResults,
  encodeResults,
  type ReusableResults,
  resultsOf,
} from '../../advisory/src/feed/verify/stored-results.ts';
import { verifyFeed } from '../../advisory/src/feed/verify/verify-feed.ts';

const [previous, changed, pub, resultsFile] = process.argv.slice(2) as [string, string, string, string];
const trustedKeys = [parsePublicKey(readFileSync(pub, 'utf8'))];
const key = randomBytes(32);

const inUse = await verifyFeed(new DirectorySource(previous), { trustedKeys });
if (!inUse.ok) throw new Error(JSON.stringify(inUse));
writeFileSync(resultsFile, encodeResults(inUse.feed, key));

async function timedVerify(reuse: () => ReusableResults | null) {
  const started = performance.now();
  // The process's CPU time covers every thread: the checkers' work is counted too.
  const cpuBefore = process.cpuUsage();
  const verified = await verifyFeed(new DirectorySource(changed), { trustedKeys, reuse: reuse() });
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  if (!verified.ok) throw new Error(JSON.stringify(verified));
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, reused: verified.feed.reusedCount };
}

// A pull: the feed in use's results in memory, its bytes in its copy (here its directory).
const pull = await timedVerify(() => ({ ...resultsOf(inUse.feed), bytesIn: previous }));
const restart = await timedVerify(() => {
  const read = decodeResults(readFileSync(resultsFile), inUse.feed.manifestSha256, key);
  if (!read.ok) throw new Error(read.problem);
  return read.results;
});
const cold = await timedVerify(() => null);
console.log(
  JSON.stringify({
    pullMs: pull.ms,
    pullCpuMs: pull.cpuMs,
    restartMs: restart.ms,
    restartCpuMs: restart.cpuMs,
    coldMs: cold.ms,
    coldCpuMs: cold.cpuMs,
    reused: pull.reused,
    reusedAtRestart: restart.reused,
  }),
);
