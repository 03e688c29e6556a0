/**
 * One look at a decision log in a process of its own, for its peak memory: prints the
 * process's peak resident set size (MiB) before and after the look. Run by run.ts:
 *
 *   node --import tsx bench/decision-log-view/look.ts <state dir> <look> <whole|streamed>
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decisionsExport } from '../../advisory/src/dashboard/export.ts';
import { LOG_PAGE_SIZE } from '../../advisory/src/dashboard/pages.ts';
import {
  CHECKPOINT_FILE,
  DecisionStore,
  LOG_FILE,
  verifyStateDir,
} from '../../advisory/src/decisions/store.ts';
import { verifyLog } from '../../advisory/src/decisions/verify.ts';

const [dir = '', look = '', side = ''] = process.argv.slice(2);
const store = await DecisionStore.open(dir);
const readWhole = (name: string) => readFileSync(path.join(dir, name), 'utf8');
const deepPage = Number(process.env.PAGE ?? 1);

// The whole-file way, as the readers did it before: every line held at once.
const whole: Record<string, () => Promise<unknown>> = {
  log: async () => {
    const text = readWhole(LOG_FILE);
    const lines = text.split('\n').filter(Boolean);
    const end = lines.length - (deepPage - 1) * LOG_PAGE_SIZE;
    const page = lines
      .slice(Math.max(0, end - LOG_PAGE_SIZE), end)
      .map((line) => JSON.parse(line) as unknown);
    return [page, await verifyLog(text, readWhole(CHECKPOINT_FILE), store.publicKey)];
  },
  export: async () =>
    JSON.stringify({
      verification: await verifyLog(readWhole(LOG_FILE), readWhole(CHECKPOINT_FILE), store.publicKey),
      entries: readWhole(LOG_FILE)
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as unknown),
      checkpoints: readWhole(CHECKPOINT_FILE)
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as unknown),
    }).length,
  verify: () => verifyLog(readWhole(LOG_FILE), readWhole(CHECKPOINT_FILE), store.publicKey),
};
const streamed: Record<string, () => Promise<unknown>> = {
  log: () => store.look(deepPage, LOG_PAGE_SIZE),
  export: async () => {
    let bytes = 0;
    for await (const piece of await decisionsExport(store, new Date())) bytes += piece.length;
    return bytes;
  },
  verify: () => verifyStateDir(dir, store.publicKey),
};
const run = (side === 'whole' ? whole : streamed)[look];
if (!run) throw new Error(`no look ${look} ${side}`);
const mib = () => process.resourceUsage().maxRSS / 1024;
const before = mib();
await run();
console.log(JSON.stringify({ before, after: mib() }));
