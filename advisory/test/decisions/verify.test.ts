import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DecisionStore } from '../../src/decisions/store.ts';
import { runAdvisory } from '../support/cli.ts';
import { startWriter } from '../support/log-writer-process.ts';

/**
 * Verification reads the log and its checkpoints as of one moment, while the daemon
 * writes both: a batch recorded between the two reads is no "cut tail".
 */
const ROUNDS = Number(process.env.ROUNDS ?? 150);

describe('verification while the log is written', () => {
  it('advisory log verify, with a daemon recording in another process, never reports a break', {
    timeout: ROUNDS * 400,
  }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'log-race-'));
    const writer = await startWriter(dir);
    const failures: string[] = [];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        // Two batches recorded while the look reads the files; the next round once they are.
        const written = writer.write(2);
        const result = await runAdvisory(['log', 'verify', '--state-dir', dir]);
        if (result.code !== 0 || !/^HASH CHAIN INTACT/.test(result.out))
          failures.push(`round ${round}: ${result.out}`);
        await written;
      }
    } finally {
      expect(await writer.stop(), writer.output.text()).toBe(0);
    }
    expect(failures).toEqual([]);
    // And once the writer stopped, the log it left verifies, every entry signed.
    const last = await runAdvisory(['log', 'verify', '--state-dir', dir]);
    expect(last.out).toMatch(new RegExp(`^HASH CHAIN INTACT: ${ROUNDS * 2 * 3} entries`));
    expect(last.out).not.toMatch(/not signed/);
  });

  it('the daemon verifying its own log while it records never reports a break', async () => {
    const store = await DecisionStore.open(mkdtempSync(path.join(tmpdir(), 'log-race-')));
    const failures: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const written = store.append([
        { kind: 'reminder-due', data: { asset: `host-${round}`, task: 'patch' } },
      ]);
      const verification = await store.verify();
      if (!verification.intact) failures.push(`round ${round}: ${JSON.stringify(verification.breaks)}`);
      await written;
    }
    expect(failures).toEqual([]);
  });
});
