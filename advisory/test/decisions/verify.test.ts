import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateKeyPair, parsePublicKey, parseSecretKey } from '../../src/crypto/signify.ts';
import { chainEntry, type DecisionEntry, entryHash, GENESIS } from '../../src/decisions/chain.ts';
import { signCheckpoint } from '../../src/decisions/checkpoints.ts';
import { takeSnapshot } from '../../src/decisions/files.ts';
import { CHECKPOINT_FILE, DecisionStore, LOG_FILE } from '../../src/decisions/store.ts';
import { LogVerifier, MAX_BREAKS, verifyLog } from '../../src/decisions/verify.ts';
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

describe('the streamed, incremental verification', () => {
  const pair = generateKeyPair('test appliance');
  const secret = parseSecretKey(pair.secretKey);
  const key = parsePublicKey(pair.publicKey);
  const chain = (n: number) => {
    const entries: DecisionEntry[] = [];
    for (let i = 0; i < n; i++)
      entries.push(chainEntry(entries.at(-1) ?? null, '2026-11-01T00:00:00.000Z', 'reminder-due', { i }));
    return entries;
  };
  const cp = (entries: DecisionEntry[], size: number) =>
    `${JSON.stringify(signCheckpoint(secret, size, size > 0 ? (entries[size - 1] as DecisionEntry).hash : GENESIS, '2026-11-09T00:00:00.000Z'))}\n`;
  const lines = (entries: DecisionEntry[]) => entries.map((e) => `${JSON.stringify(e)}\n`).join('');

  function files() {
    const dir = mkdtempSync(path.join(tmpdir(), 'verify-'));
    const log = path.join(dir, LOG_FILE);
    const checkpoints = path.join(dir, CHECKPOINT_FILE);
    writeFileSync(log, '');
    writeFileSync(checkpoints, '');
    const verifier = new LogVerifier(key);
    const look = async () =>
      verifier.verify({ kind: 'files', log, checkpoints, snapshot: await takeSnapshot(checkpoints, log) });
    return { log, checkpoints, look };
  }

  it('takes a last line without its newline for an append in flight, not a break', async () => {
    const { log, checkpoints, look } = files();
    const entries = chain(3);
    writeFileSync(log, lines(entries.slice(0, 2)) + JSON.stringify(entries[2]).slice(0, 40));
    writeFileSync(checkpoints, cp(entries, 2) + cp(entries, 2).slice(0, 30));
    expect(await look()).toMatchObject({ intact: true, entries: 2, checkpoints: 1, unsigned: 0 });
    // Once written whole, it is read, and checked.
    writeFileSync(log, lines(entries));
    writeFileSync(checkpoints, cp(entries, 2) + cp(entries, 3));
    expect(await look()).toMatchObject({ intact: true, entries: 3, checkpoints: 2, unsigned: 0 });
  });

  it('goes on from what it verified: a new checkpoint over entries read before as unsigned', async () => {
    const { log, checkpoints, look } = files();
    const entries = chain(6);
    writeFileSync(log, lines(entries.slice(0, 4)));
    writeFileSync(checkpoints, cp(entries, 0) + cp(entries, 2));
    expect(await look()).toMatchObject({ intact: true, entries: 4, unsigned: 2 });
    appendFileSync(checkpoints, cp(entries, 4));
    expect(await look()).toMatchObject({ intact: true, entries: 4, unsigned: 0, checkpoints: 3 });
    appendFileSync(log, lines(entries.slice(4)));
    appendFileSync(checkpoints, cp(entries, 6));
    const six = await look();
    expect(six).toMatchObject({ intact: true, entries: 6, unsigned: 0, head: entries[5]?.hash });
    // A checkpoint appended later that signed another head is found, at its entry.
    const other = chain(7).map((e, i) => (i === 4 ? { ...e, data: { i: 'x' } } : e));
    appendFileSync(
      checkpoints,
      `${JSON.stringify(signCheckpoint(secret, 5, entryHash(other[4] as DecisionEntry), 'x'))}\n`,
    );
    expect((await look()).breaks).toEqual([
      {
        file: 'checkpoints',
        line: 5,
        message: 'checkpoint 5 (x, 5 entries): covers fewer entries than the checkpoint before it',
      },
    ]);
  });

  it('finds a cut tail, and the same log grown back past it is compared again', async () => {
    const { log, checkpoints, look } = files();
    const entries = chain(4);
    writeFileSync(log, lines(entries.slice(0, 2)));
    writeFileSync(checkpoints, cp(entries, 1) + cp(entries, 3));
    expect((await look()).breaks).toEqual([
      {
        file: 'checkpoints',
        line: 2,
        message:
          'checkpoint 2 (2026-11-09T00:00:00.000Z, 3 entries): the log ends at entry 2, so its tail was cut',
      },
    ]);
    // The cut entries restored (from a backup): the checkpoint beyond is compared now.
    appendFileSync(log, lines(entries.slice(2)));
    expect(await look()).toMatchObject({ intact: true, entries: 4, unsigned: 1, breaks: [] });
    // An edit in what was verified before is found at once.
    writeFileSync(log, lines(entries).replace('"i":0', '"i":9'));
    expect((await look()).breaks[0]).toMatchObject({ file: 'log', line: 1 });
  });

  it(`lists ${MAX_BREAKS} breaks and counts the rest`, async () => {
    const garbage = 'x\n'.repeat(MAX_BREAKS + 5);
    const result = await verifyLog(garbage, cp([], 0), key);
    expect(result.breaks).toHaveLength(MAX_BREAKS + 1);
    expect(result.breaks.at(-1)).toEqual({
      file: 'checkpoints',
      line: 0,
      message: '5 more breaks are not listed',
    });
    expect(result).toMatchObject({ intact: false, entries: MAX_BREAKS + 5, head: '' });
  });
});
