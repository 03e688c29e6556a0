/**
 * A real concurrent writer of the decision log, in its own process, as the daemon is to
 * `advisory log verify`: opens the store in the directory given and prints `ready`; then,
 * for each line `<n>` read on stdin, appends n batches one after the other (each followed
 * by its checkpoint, as the daemon records), printing `batch <total>` after each. Exits
 * when its stdin closes.
 *
 *   node --import tsx test/support/log-writer.ts <state dir>
 */
import { createInterface } from 'node:readline';
import { DecisionStore } from '../../src/decisions/store.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: log-writer.ts <state dir>');
const store = await DecisionStore.open(dir);
let batches = 0;
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  for (let n = Number(line); n > 0; n--) {
    await store.append(
      Array.from({ length: 3 }, (_, i) => ({
        kind: 'reminder-due' as const,
        data: { asset: `host-${batches}-${i}`, task: 'patch', advisory: 'PVE-2026-1' },
      })),
    );
    batches++;
    process.stdout.write(`batch ${batches}\n`);
  }
}
