/**
 * bench/decision-log-view: what one look at the dashboard's Decision log page costs with
 * a long log (50,000 entries, a checkpoint per 10), against what it cost before, measured
 * in the same run on the same files:
 *   before  the whole log parsed for display and verified from scratch (every entry hashed,
 *           every checkpoint's signature checked), as /log did at every view
 *   now     the incremental verification (the verified prefix recognised by its SHA-256,
 *           only appended lines parsed) and one page of 100 entries parsed
 * Each side is timed for single views and for six views at once (the "six tabs" case),
 * with the CPU time and the heap growth of the six. Then the peak memory (resident set
 * size, each look in a fresh process: look.ts) of one look of each kind, whole against
 * streamed:
 *   /log          the whole log read as one string, split, verified from its text
 *                 against: store.look (verification streamed, the page read backwards)
 *   /decisions.json  every entry and checkpoint parsed, held and serialised at once
 *                 against: the streamed export, drained as a client would
 *   log verify    both files read whole and verified from their text
 *                 against: verifyStateDir (streamed)
 *
 *   npm run bench:decision-log-view     (ENTRIES=50000 ROUNDS=5 to change)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LOG_PAGE_SIZE } from '../../advisory/src/dashboard/pages.ts';
import { CHECKPOINT_FILE, DecisionStore, LOG_FILE } from '../../advisory/src/decisions/store.ts';
import { verifyLog } from '../../advisory/src/decisions/verify.ts';

const entries = Number(process.env.ENTRIES ?? 50_000);
const rounds = Number(process.env.ROUNDS ?? 5);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

const dir = mkdtempSync(path.join(tmpdir(), 'log-view-bench-'));
try {
  const store = await DecisionStore.open(dir, new Date('2026-01-01T00:00:00Z'));
  for (let i = 0; i < entries; i += 10) {
    await store.append(
      Array.from({ length: 10 }, (_, j) => ({
        kind: 'verdict-changed' as const,
        data: {
          asset: `host-${i + j}`,
          from: 'install',
          to: 'hold',
          advisories: ['PVE-2026-9.2'],
          feed_version: '2026.11.26',
        },
      })),
      new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    );
  }

  // The whole-file way, as the page did it before: every line held, verified from the text.
  const readWhole = (name: string) => readFileSync(path.join(dir, name), 'utf8');
  const before = async () => {
    const text = readWhole(LOG_FILE);
    const lines = text.split('\n').filter(Boolean);
    const page = lines.slice(-LOG_PAGE_SIZE).map((line) => JSON.parse(line) as unknown);
    const verification = await verifyLog(text, readWhole(CHECKPOINT_FILE), store.publicKey);
    return page.length + verification.entries;
  };
  const now = async () => {
    const { verification, page } = await store.look(1, LOG_PAGE_SIZE);
    return page.entries.length + verification.entries;
  };
  await now(); // The first look verifies everything once, as the daemon's first view does.

  const time = async (view: () => Promise<number>, parallel: number) => {
    const started = performance.now();
    const cpu = process.cpuUsage();
    global.gc?.();
    const heap = process.memoryUsage().heapUsed;
    let peak = heap;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 5);
    await Promise.all(Array.from({ length: parallel }, view));
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    const used = process.cpuUsage(cpu);
    return {
      ms: performance.now() - started,
      cpuMs: (used.user + used.system) / 1000,
      heapMb: (peak - heap) / 2 ** 20,
    };
  };

  const results = {
    before: { one: [] as number[], six: [] as number[], cpu: [] as number[], heap: [] as number[] },
    now: { one: [] as number[], six: [] as number[], cpu: [] as number[], heap: [] as number[] },
  };
  for (let round = 0; round < rounds; round++) {
    // Alternate the sides, so neither always runs on a warmer machine.
    for (const side of round % 2 === 0 ? (['before', 'now'] as const) : (['now', 'before'] as const)) {
      const view = side === 'before' ? before : now;
      results[side].one.push((await time(view, 1)).ms);
      const six = await time(view, 6);
      results[side].six.push(six.ms);
      results[side].cpu.push(six.cpuMs);
      results[side].heap.push(six.heapMb);
    }
  }
  const row = (label: string, pick: (r: typeof results.before) => number[], unit: string) => {
    const b = median(pick(results.before));
    const n = median(pick(results.now));
    console.log(
      `${label.padEnd(28)} before ${b.toFixed(1).padStart(8)} ${unit}   now ${n.toFixed(1).padStart(8)} ${unit}   before/now ${(b / Math.max(n, 0.01)).toFixed(1)}x`,
    );
  };
  console.log(`decision log of ${entries} entries (${entries / 10} checkpoints), median of ${rounds} rounds`);
  row('one view, wall', (r) => r.one, 'ms');
  row('six views at once, wall', (r) => r.six, 'ms');
  row('six views at once, CPU', (r) => r.cpu, 'ms');
  row('six views at once, heap', (r) => r.heap, 'MB');

  // Peak memory of one look, each in a fresh process (look.ts): its peak resident set
  // size after the look, and what the look added to the peak before it.
  const lookScript = path.join(import.meta.dirname, 'look.ts');
  const peakOf = (look: string, side: string, page: number) => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', lookScript, dir, look, side], {
      env: { ...process.env, PAGE: String(page) },
      encoding: 'utf8',
    });
    const { before: start, after } = JSON.parse(out) as { before: number; after: number };
    return { peak: after, added: after - start };
  };
  const deepPage = Math.ceil(entries / LOG_PAGE_SIZE / 2);
  const looks: [string, string, number][] = [
    ['/log page 1', 'log', 1],
    [`/log page ${deepPage}`, 'log', deepPage],
    ['/decisions.json', 'export', 1],
    ['log verify', 'verify', 1],
  ];
  console.log(
    `\npeak RSS of one look in a fresh process, MiB (added by the look), median of ${rounds} rounds`,
  );
  for (const [label, look, page] of looks) {
    const w: { peak: number; added: number }[] = [];
    const s: { peak: number; added: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      w.push(peakOf(look, 'whole', page));
      s.push(peakOf(look, 'streamed', page));
    }
    const a = median(w.map((r) => r.peak));
    const b = median(s.map((r) => r.peak));
    console.log(
      `${label.padEnd(20)} whole ${a.toFixed(0).padStart(5)} (+${median(w.map((r) => r.added)).toFixed(0)})   streamed ${b.toFixed(0).padStart(5)} (+${median(s.map((r) => r.added)).toFixed(0)})   whole/streamed ${(a / b).toFixed(1)}x`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
