/**
 * The in-appliance side of bench/feed-verify's incremental case, run bundled in a fresh
 * process as the installed appliance runs (with its checker worker beside it):
 *   incremental.mjs store <feed> <public key> <results file> <key file>
 *     verifies the feed whole and stores its validated results, sealed, as the cache does;
 *   incremental.mjs measure <feed> <public key> <results file> <key file> <manifest sha256>
 *     after one warm-up, verifies the (changed) feed once reusing the stored results (read
 *     and checked from the file, as after a restart) and once from scratch, in this process.
 * Prints one JSON line.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parsePublicKey } from '../../advisory/src/crypto/signify.ts';
import { DirectorySource } from '../../advisory/src/feed/sources/directory.ts';
import { decodeResults, encodeResults } from '../../advisory/src/feed/verify/stored-results.ts';
import { verifyFeed } from '../../advisory/src/feed/verify/verify-feed.ts';

const [mode, feed, pub, resultsFile, keyFile, manifestSha] = process.argv.slice(2) as string[];
const trustedKeys = [parsePublicKey(readFileSync(pub as string, 'utf8'))];
const source = () => new DirectorySource(feed as string);

if (mode === 'store') {
  const verified = await verifyFeed(source(), { trustedKeys });
  if (!verified.ok) throw new Error(JSON.stringify(verified));
  const key = readFileSync(keyFile as string);
  writeFileSync(resultsFile as string, encodeResults(verified.feed, key));
  console.log(JSON.stringify({ manifestSha256: verified.feed.manifestSha256 }));
} else {
  const key = readFileSync(keyFile as string);
  const incremental = async () => {
    const started = performance.now();
    const read = decodeResults(readFileSync(resultsFile as string), manifestSha as string, key);
    if (!read.ok) throw new Error(read.problem);
    const verified = await verifyFeed(source(), { trustedKeys, reuse: read.results });
    const ms = performance.now() - started;
    if (!verified.ok) throw new Error(JSON.stringify(verified));
    return { ms, reused: verified.feed.reusedCount, advisories: verified.feed.advisoryCount };
  };
  const cold = async () => {
    const started = performance.now();
    const verified = await verifyFeed(source(), { trustedKeys });
    const ms = performance.now() - started;
    if (!verified.ok) throw new Error(JSON.stringify(verified));
    return { ms };
  };
  await incremental(); // warm-up: the process, its code and the page cache
  const inc = await incremental();
  const full = await cold();
  console.log(
    JSON.stringify({
      incrementalMs: inc.ms,
      coldMs: full.ms,
      reused: inc.reused,
      advisories: inc.advisories,
    }),
  );
}
