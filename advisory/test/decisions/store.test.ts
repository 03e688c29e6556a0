import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { runAdvisoryCli } from '../../src/cli/advisory/main.ts';
import { generateKeyPair, parsePublicKey, parseSecretKey } from '../../src/crypto/signify.ts';
import { chainEntry, type DecisionEntry, entryHash, GENESIS } from '../../src/decisions/chain.ts';
import { checkpointMessage, signCheckpoint } from '../../src/decisions/checkpoints.ts';
import { CHECKPOINT_FILE, DecisionStore, LOG_FILE } from '../../src/decisions/store.ts';
import { verifyLog } from '../../src/decisions/verify.ts';
import { NEEDS_SIGNIFY, signifyBinary } from '../support/feed.ts';

/**
 * The hash-chained decision log and its signed checkpoints: every kind of tampering is
 * found, and said where.
 */
async function logWith(n: number): Promise<{ dir: string; store: DecisionStore }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'decisions-'));
  const store = await DecisionStore.open(dir);
  for (let i = 1; i <= n; i++) {
    await store.append(
      [{ kind: 'verdict-changed', data: { asset: `host-${i}`, from: null, to: 'install' } }],
      new Date(Date.UTC(2026, 10, i)),
    );
  }
  return { dir, store };
}

const logLines = (dir: string) => readFileSync(path.join(dir, LOG_FILE), 'utf8').trimEnd().split('\n');
const writeLines = (dir: string, lines: string[]) =>
  writeFileSync(path.join(dir, LOG_FILE), `${lines.join('\n')}\n`);

describe('the chain', () => {
  it('hashes the canonical JSON of each entry, linked to the one before', () => {
    const first = chainEntry(null, '2026-11-01T00:00:00.000Z', 'feed-accepted', {
      b: 1,
      a: [2, { d: 1, c: 2 }],
    });
    expect(first.seq).toBe(1);
    expect(first.prev).toBe(GENESIS);
    // RFC 8785: keys sorted at every depth, no spaces; any implementation recomputes it.
    const canonical = `{"at":"2026-11-01T00:00:00.000Z","data":{"a":[2,{"c":2,"d":1}],"b":1},"kind":"feed-accepted","prev":"${GENESIS}","seq":1}`;
    expect(first.hash).toBe(createHash('sha256').update(canonical).digest('hex'));
    const second = chainEntry(first, '2026-11-02T00:00:00.000Z', 'reminder-due', {});
    expect(second).toMatchObject({ seq: 2, prev: first.hash });
    expect(entryHash(second)).toBe(second.hash);
  });
});

describe('DecisionStore', () => {
  it('appends in order, signs a checkpoint after each batch, and verifies intact', async () => {
    const { dir, store } = await logWith(3);
    const verification = await store.verify();
    // The first checkpoint, made with the log, vouches for "no entries yet".
    expect(verification).toMatchObject({ intact: true, entries: 3, checkpoints: 4, unsigned: 0, breaks: [] });
    expect(verification.lastCheckpoint).toMatchObject({
      size: 3,
      head: JSON.parse(logLines(dir)[2] as string).hash,
    });
    expect(statSync(path.join(dir, 'appliance.sec')).mode & 0o777).toBe(0o600);
    // Reopened, it chains on and keeps its key.
    const key = readFileSync(path.join(dir, 'appliance.pub'), 'utf8');
    const again = await DecisionStore.open(dir);
    await again.append([{ kind: 'reminder-due', data: { asset: 'x' } }]);
    expect(readFileSync(path.join(dir, 'appliance.pub'), 'utf8')).toBe(key);
    expect(await again.verify()).toMatchObject({ intact: true, entries: 4 });
  });

  it('makes its key pair so that a start killed midway leaves none or both, matching', async () => {
    const matching = (dir: string) => {
      const secret = parseSecretKey(readFileSync(path.join(dir, 'appliance.sec'), 'utf8'));
      const pub = parsePublicKey(readFileSync(path.join(dir, 'appliance.pub'), 'utf8'));
      return secret.keynum.equals(pub.keynum);
    };
    // Killed after the secret key was in place, before the public key was written: the
    // public key is written from the secret one, and checkpoints verify with it.
    const between = mkdtempSync(path.join(tmpdir(), 'keys-'));
    const pair = generateKeyPair('advisory appliance decision log');
    writeFileSync(path.join(between, 'appliance.sec'), pair.secretKey, { mode: 0o600 });
    const store = await DecisionStore.open(between);
    await store.append([{ kind: 'reminder-due', data: { asset: 'x' } }]);
    expect(await store.verify()).toMatchObject({ intact: true, unsigned: 0 });
    expect(readFileSync(path.join(between, 'appliance.pub'), 'utf8')).toBe(pair.publicKey);
    // Killed while the secret key was being written (a public key left from elsewhere):
    // a pair is made afresh, the half-made file is removed, the two belong together.
    const during = mkdtempSync(path.join(tmpdir(), 'keys-'));
    writeFileSync(path.join(during, 'appliance.pub'), generateKeyPair('left over').publicKey);
    writeFileSync(path.join(during, 'appliance.sec.new-1'), 'untrusted comment: half', { mode: 0o644 });
    await DecisionStore.open(during);
    expect(matching(during)).toBe(true);
    expect(statSync(path.join(during, 'appliance.sec')).mode & 0o777).toBe(0o600);
    expect(readdirSync(during).filter((name) => name.includes('.new-'))).toEqual([]);
  });

  it('keeps the order of concurrent appends', async () => {
    const { store } = await logWith(0);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.append([{ kind: 'reminder-due', data: { n: i } }])),
    );
    const entries = await store.entries();
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(entries.map((e) => e.data.n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect((await store.verify()).intact).toBe(true);
  });

  it('finds an edited entry', async () => {
    const { dir, store } = await logWith(4);
    const lines = logLines(dir);
    lines[1] = (lines[1] as string).replace('"to":"install"', '"to":"hold"');
    writeLines(dir, lines);
    const verification = await store.verify();
    expect(verification.intact).toBe(false);
    expect(verification.breaks[0]).toEqual({
      file: 'log',
      line: 2,
      message: 'entry 2 does not match its hash: it was edited',
    });
  });

  it('finds an edited entry whose hash was recomputed too: the next one no longer follows', async () => {
    const { dir, store } = await logWith(4);
    const lines = logLines(dir);
    const entry = JSON.parse(lines[1] as string) as DecisionEntry;
    entry.data.to = 'hold';
    entry.hash = entryHash(entry);
    lines[1] = JSON.stringify(entry);
    writeLines(dir, lines);
    const breaks = (await store.verify()).breaks.filter((b) => b.file === 'log');
    expect(breaks).toEqual([
      {
        file: 'log',
        line: 2,
        message: expect.stringMatching(/entry 2 is not the one signed then: the log was rewritten/),
      },
      {
        file: 'log',
        line: 3,
        message: 'entry 3 does not follow entry 2: the entry before it was removed, replaced or edited',
      },
    ]);
  });

  it('finds a removed middle entry', async () => {
    const { dir, store } = await logWith(5);
    const lines = logLines(dir);
    lines.splice(2, 1);
    writeLines(dir, lines);
    const verification = await store.verify();
    expect(verification.intact).toBe(false);
    expect(verification.breaks[0]).toEqual({
      file: 'log',
      line: 3,
      message: 'line 3 holds entry 4: entries were removed, added or reordered before it',
    });
  });

  it('finds a cut tail, which the chain alone cannot', async () => {
    const { dir, store } = await logWith(5);
    writeLines(dir, logLines(dir).slice(0, 3));
    const verification = await store.verify();
    expect(verification.intact).toBe(false);
    expect(verification.breaks.map((b) => b.message)).toContain(
      `checkpoint 6 (${new Date(Date.UTC(2026, 10, 5)).toISOString()}, 5 entries): the log ends at entry 3, so its tail was cut`,
    );
  });

  it('finds a full rewrite, consistent in itself, by the checkpoints it no longer matches', async () => {
    const { dir, store } = await logWith(3);
    let previous: DecisionEntry | null = null;
    const forged = [1, 2, 3].map((i) => {
      previous = chainEntry(previous, new Date(Date.UTC(2026, 10, i)).toISOString(), 'verdict-changed', {
        asset: `host-${i}`,
        from: null,
        to: 'hold',
      });
      return JSON.stringify(previous);
    });
    writeLines(dir, forged);
    const verification = await store.verify();
    expect(verification.intact).toBe(false);
    expect(verification.breaks.filter((b) => b.file === 'log').map((b) => b.message)).toEqual([
      expect.stringMatching(/^checkpoint 2 .*: entry 1 is not the one signed then: the log was rewritten$/),
      expect.stringMatching(/^checkpoint 3 .*: entry 2 is not the one signed then/),
      expect.stringMatching(/^checkpoint 4 .*: entry 3 is not the one signed then/),
    ]);
  });

  it('finds a forged or removed checkpoint', async () => {
    const { dir, store } = await logWith(2);
    const checkpoints = readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8').trimEnd().split('\n');
    const forged = { ...JSON.parse(checkpoints[2] as string), size: 1 };
    writeFileSync(path.join(dir, CHECKPOINT_FILE), `${checkpoints[0]}\n${JSON.stringify(forged)}\n`);
    expect((await store.verify()).breaks).toContainEqual({
      file: 'checkpoints',
      line: 2,
      message: expect.stringMatching(/its signature does not verify with the appliance key/),
    });
    writeFileSync(path.join(dir, CHECKPOINT_FILE), '');
    expect((await store.verify()).breaks).toEqual([
      { file: 'checkpoints', line: 0, message: 'no signed checkpoint covers the 2 entries of the log' },
    ]);
  });

  it(
    'signs checkpoints as signify does: a witness checks one with signify -V',
    runsIf(signifyBinary, NEEDS_SIGNIFY),
    async () => {
      const signify = signifyBinary as string;
      const { dir, store } = await logWith(1);
      const checkpoint = store.latestCheckpoint;
      if (!checkpoint) throw new Error('no checkpoint');
      writeFileSync(path.join(dir, 'cp.txt'), checkpointMessage(checkpoint));
      writeFileSync(path.join(dir, 'cp.sig'), checkpoint.signature);
      const output = execFileSync(signify, [
        '-V',
        '-p',
        path.join(dir, 'appliance.pub'),
        '-m',
        path.join(dir, 'cp.txt'),
        '-x',
        path.join(dir, 'cp.sig'),
      ]);
      expect(output.toString()).toMatch(/Signature Verified/);
    },
  );

  it('verifies incrementally, yet finds an edit anywhere at the next look', async () => {
    const { dir, store } = await logWith(5);
    expect(await store.verify()).toMatchObject({ intact: true, entries: 5 });
    await store.append([{ kind: 'reminder-due', data: { asset: 'x' } }]);
    expect(await store.verify()).toMatchObject({ intact: true, entries: 6, unsigned: 0 });
    const lines = logLines(dir);
    lines[0] = (lines[0] as string).replace('host-1', 'host-X');
    writeLines(dir, lines);
    expect((await store.verify()).breaks[0]).toEqual({
      file: 'log',
      line: 1,
      message: 'entry 1 does not match its hash: it was edited',
    });
  });

  it('reads one page of the log, newest first', async () => {
    const { store } = await logWith(7);
    const first = await store.page(1, 3);
    expect(first.total).toBe(7);
    expect(first.entries.map((e) => e.seq)).toEqual([7, 6, 5]);
    expect((await store.page(3, 3)).entries.map((e) => e.seq)).toEqual([1]);
    expect((await store.page(4, 3)).entries).toEqual([]);
  });

  it('reads what the dashboard and catch-ups need from the end, as of one moment', async () => {
    const { dir, store } = await logWith(5);
    await store.append([{ kind: 'feed-accepted', data: { feed_version: 'a' } }]);
    await store.append([{ kind: 'reminder-due', data: { asset: 'h' } }]);
    expect((await store.lastEntry('feed-accepted'))?.data).toEqual({ feed_version: 'a' });
    expect((await store.lastEntry('verdict-changed'))?.seq).toBe(5);
    expect(await store.lastEntry('log-repaired')).toBeNull();
    // A line that does not parse is passed over by every reader (verification reports it).
    const lines = logLines(dir);
    writeLines(dir, [...lines.slice(0, 2), 'not json', ...lines.slice(2)]);
    expect((await store.lastEntry('verdict-changed'))?.seq).toBe(5);
    expect((await store.entries()).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect((await store.page(3, 3)).entries.map((e) => e.seq)).toEqual([1, 2].reverse());
    const look = await store.look(1, 3);
    expect(look.page).toEqual({ entries: (await store.page(1, 3)).entries, total: 8 });
    expect(look.page.entries.map((e) => e.seq)).toEqual([7, 6, 5]);
    expect(look.verification).toMatchObject({ intact: false, entries: 8 });
    // Without counting, reading stops after the page.
    expect((await store.page(1, 3, undefined, false)).total).toBe(4);
    const snapshot = await store.snapshot();
    const stored: string[] = [];
    for await (const { text } of store.storedLines(LOG_FILE, snapshot.log)) stored.push(text);
    expect(stored).toHaveLength(7);
    expect(stored[0]).toBe(lines[0]);
    expect(await store.checkpoints()).toHaveLength(8);
    writeFileSync(
      path.join(dir, CHECKPOINT_FILE),
      `${readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8')}{"cut\n`,
    );
    expect(await store.checkpoints()).toHaveLength(8);
  });

  it('sets a partial last line apart before appending, and logs the repair', async () => {
    const { dir } = await logWith(2);
    const whole = readFileSync(path.join(dir, LOG_FILE), 'utf8');
    // A crash (or a full disk) mid-append: half an entry, no newline.
    const half = '{"seq":3,"at":"2026-11-03T00:00:00.000Z","kind":"verdict-ch';
    writeFileSync(path.join(dir, LOG_FILE), whole + half);
    const reopened = await DecisionStore.open(dir, new Date('2026-11-04T00:00:00Z'));
    await reopened.append([{ kind: 'reminder-due', data: { asset: 'x' } }], new Date('2026-11-04T00:00:01Z'));
    expect(await reopened.verify()).toMatchObject({ intact: true, entries: 4, unsigned: 0, breaks: [] });
    const entries = await reopened.entries();
    expect(entries[2]).toMatchObject({
      seq: 3,
      kind: 'log-repaired',
      data: {
        file: LOG_FILE,
        removed_bytes: Buffer.byteLength(half),
        removed_sha256: createHash('sha256').update(half).digest('hex'),
        kept_in: 'decisions.jsonl.partial-2026-11-04T00-00-00-000Z',
      },
    });
    expect(readFileSync(path.join(dir, 'decisions.jsonl.partial-2026-11-04T00-00-00-000Z'), 'utf8')).toBe(
      half,
    );
    // A whole last entry that only lost its newline is kept as it is.
    const lines = readFileSync(path.join(dir, LOG_FILE), 'utf8');
    writeFileSync(path.join(dir, LOG_FILE), lines.trimEnd());
    const again = await DecisionStore.open(dir);
    expect(await again.verify()).toMatchObject({ intact: true, entries: 4 });
  });

  it('chains on by position after a damaged last line, and the break stays visible', async () => {
    const { dir } = await logWith(2);
    const lines = logLines(dir);
    writeLines(dir, [...lines, '{"not":"an entry"}', '']);
    const reopened = await DecisionStore.open(dir);
    expect(reopened.head).toEqual({ seq: 3, hash: GENESIS });
    const [entry] = await reopened.append([{ kind: 'reminder-due', data: {} }]);
    expect(entry).toMatchObject({ seq: 4, prev: GENESIS });
    expect((await reopened.verify()).breaks[0]).toEqual({
      file: 'log',
      line: 3,
      message: 'line 3 is not a decision entry',
    });
  });

  it('does not sign entries after the last checkpoint when the chain up to them is broken', async () => {
    const { dir } = await logWith(3);
    const checkpoints = readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8').trimEnd().split('\n');
    // The last checkpoint lost (a crash before it), and entry 3 edited meanwhile.
    writeFileSync(path.join(dir, CHECKPOINT_FILE), `${checkpoints.slice(0, -1).join('\n')}\n`);
    const lines = logLines(dir);
    lines[2] = (lines[2] as string).replace('host-3', 'host-X');
    writeLines(dir, lines);
    const reopened = await DecisionStore.open(dir);
    expect(reopened.unaccounted).toBe(
      'the decision log does not verify (entry 3 does not match its hash: it was edited): entries after checkpoint 2 are not signed',
    );
    expect(await reopened.verify()).toMatchObject({ intact: false, unsigned: 1 });
  });

  it('does not sign a log whose checkpoints are all gone, and says so', async () => {
    const { dir } = await logWith(3);
    const lines = logLines(dir);
    lines[1] = (lines[1] as string).replace('"to":"install"', '"to":"hold"');
    // An edit with the hashes made to fit, and every checkpoint removed: signing the log
    // at start would make the edit verify.
    let previous: DecisionEntry | null = null;
    const rewritten = lines.map((line) => {
      const entry = JSON.parse(line) as DecisionEntry;
      previous = chainEntry(previous, entry.at, entry.kind, entry.data);
      return JSON.stringify(previous);
    });
    writeLines(dir, rewritten);
    writeFileSync(path.join(dir, CHECKPOINT_FILE), '');
    const reopened = await DecisionStore.open(dir);
    expect(reopened.unaccounted).toMatch(/3 entries and no checkpoint: it is not signed over/);
    await reopened.append([{ kind: 'reminder-due', data: { asset: 'x' } }]);
    expect(await reopened.verify()).toMatchObject({ intact: false, checkpoints: 0 });
  });

  it('signs, when it opens, entries appended just before a crash', async () => {
    const { dir } = await logWith(2);
    const lines = readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8').trimEnd().split('\n');
    writeFileSync(path.join(dir, CHECKPOINT_FILE), `${lines[0]}\n${lines[1]}\n`);
    const reopened = await DecisionStore.open(dir);
    expect(await reopened.verify()).toMatchObject({ intact: true, checkpoints: 3, unsigned: 0 });
  });
});

describe('advisory log verify', () => {
  const run = async (argv: string[]) => {
    const out: string[] = [];
    const code = await runAdvisoryCli(
      ['log', 'verify', ...argv],
      { out: (l) => out.push(l), err: (l) => out.push(l) },
      {},
    );
    return { code, out: out.join('\n') };
  };

  it('says intact (exit 0) or exactly where the break is (exit 1)', async () => {
    const { dir } = await logWith(3);
    expect(await run(['--state-dir', dir])).toEqual({
      code: 0,
      out: `HASH CHAIN INTACT: 3 entries, 4 checkpoints; the last (${new Date(Date.UTC(2026, 10, 3)).toISOString()}) covers 3 (${dir})`,
    });
    const lines = logLines(dir);
    lines[0] = (lines[0] as string).replace('host-1', 'host-9');
    writeLines(dir, lines);
    const broken = await run(['--state-dir', dir]);
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('log line 1: entry 1 does not match its hash: it was edited');
  });

  it('verifies an export, with the key pinned or taken from the export', async () => {
    const { dir, store } = await logWith(2);
    const exported = {
      format: 'advisory-decision-log/1',
      exported_at: new Date().toISOString(),
      appliance_key: readFileSync(path.join(dir, 'appliance.pub'), 'utf8'),
      verification: await store.verify(),
      entries: await store.entries(),
      checkpoints: await store.checkpoints(),
    };
    const file = path.join(dir, 'export.json');
    writeFileSync(file, JSON.stringify(exported));
    expect((await run(['--export', file])).code).toBe(0);
    expect((await run(['--export', file, '--appliance-key', path.join(dir, 'appliance.pub')])).code).toBe(0);
    const other = await logWith(0);
    const wrongKey = await run(['--export', file, '--appliance-key', path.join(other.dir, 'appliance.pub')]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toMatch(/signature does not verify/);
  });

  it('refuses what cannot be used (exit 2)', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'nolog-'));
    expect((await run(['--state-dir', empty])).code).toBe(2);
    expect((await run(['--state-dir', path.join(empty, 'nowhere')])).code).toBe(2);
    writeFileSync(path.join(empty, 'x.json'), '{"format":"something else"}');
    expect(await run(['--export', path.join(empty, 'x.json')])).toMatchObject({
      code: 2,
      out: expect.stringMatching(/not a decision log export/),
    });
    expect((await run(['--bogus'])).code).toBe(2);
    const none = await runAdvisoryCli(['log'], { out: () => {}, err: () => {} }, {});
    expect(none).toBe(2);
  });
});

describe('verifyLog over the two files as text', async () => {
  const pair = generateKeyPair('test appliance');
  const secret = parseSecretKey(pair.secretKey);
  const key = parsePublicKey(pair.publicKey);
  const chain = (n: number) => {
    const entries: DecisionEntry[] = [];
    for (let i = 0; i < n; i++)
      entries.push(
        chainEntry(entries.at(-1) ?? null, `2026-11-0${i + 1}T00:00:00.000Z`, 'reminder-due', { i }),
      );
    return entries;
  };
  const text = (values: unknown[]) =>
    values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n');
  const checkpoint = (entries: DecisionEntry[], size: number) =>
    signCheckpoint(
      secret,
      size,
      size > 0 ? (entries[size - 1] as DecisionEntry).hash : GENESIS,
      '2026-11-09T00:00:00.000Z',
    );

  it('reports an intact log with its counts, head, last checkpoint and unsigned tail', async () => {
    const entries = chain(3);
    const cps = [checkpoint(entries, 1), checkpoint(entries, 2)];
    // A trailing newline is no extra line.
    const result = await verifyLog(`${text(entries)}\n`, `${text(cps)}\n`, key);
    expect(result).toEqual({
      intact: true,
      entries: 3,
      head: entries[2]?.hash,
      checkpoints: 2,
      lastCheckpoint: cps[1],
      unsigned: 1,
      breaks: [],
    });
    expect(await verifyLog('', '', key)).toEqual({
      intact: true,
      entries: 0,
      head: null,
      checkpoints: 0,
      lastCheckpoint: null,
      unsigned: 0,
      breaks: [],
    });
  });

  it('refuses lines that are not entries, field by field, and goes on after them', async () => {
    const entries = chain(2);
    const good = entries[0] as DecisionEntry;
    for (const bad of [
      'not json',
      'null',
      '42',
      { ...good, seq: 1.5 },
      { ...good, seq: '1' },
      { ...good, at: 1 },
      { ...good, kind: null },
      { ...good, data: null },
      { ...good, data: 'x' },
      { ...good, prev: 'abc' },
      { ...good, prev: `${good.prev}0` },
      { ...good, hash: good.hash.toUpperCase() },
      { ...good, hash: `x${good.hash}` },
    ]) {
      const result = await verifyLog(text([bad, entries[1]]), text([checkpoint(entries, 2)]), key);
      expect(result.intact, JSON.stringify(bad)).toBe(false);
      expect(result.entries).toBe(2);
      expect(result.breaks[0], JSON.stringify(bad)).toEqual({
        file: 'log',
        line: 1,
        message: 'line 1 is not a decision entry',
      });
    }
  });

  it('refuses lines that are not checkpoints, and names each checkpoint break and its place', async () => {
    const entries = chain(3);
    const good = checkpoint(entries, 2);
    for (const bad of [
      'nope',
      'null',
      { ...good, size: -1 },
      { ...good, size: 1.5 },
      { ...good, head: 'abc' },
      { ...good, at: 5 },
      { ...good, signature: 7 },
    ]) {
      const result = await verifyLog(text(entries), text([bad, checkpoint(entries, 3)]), key);
      expect(result.breaks, JSON.stringify(bad)).toEqual([
        { file: 'checkpoints', line: 1, message: 'checkpoint line 1 is not a checkpoint' },
      ]);
      expect(result).toMatchObject({ intact: false, checkpoints: 1, unsigned: 0 });
    }
    // Going backwards, beyond the end, and an empty log's checkpoint.
    const backwards = await verifyLog(
      text(entries),
      text([checkpoint(entries, 3), checkpoint(entries, 2)]),
      key,
    );
    expect(backwards.breaks).toEqual([
      {
        file: 'checkpoints',
        line: 2,
        message:
          'checkpoint 2 (2026-11-09T00:00:00.000Z, 2 entries): covers fewer entries than the checkpoint before it',
      },
    ]);
    expect(backwards.unsigned).toBe(1);
    const sameSize = await verifyLog(
      text(entries),
      text([checkpoint(entries, 2), checkpoint(entries, 2)]),
      key,
    );
    // Two checkpoints of the same size are no break (nothing was appended in between).
    expect(sameSize).toMatchObject({ intact: true, breaks: [], unsigned: 1 });
    const cut = await verifyLog(text(entries.slice(0, 2)), text([checkpoint(entries, 3)]), key);
    expect(cut.breaks).toEqual([
      {
        file: 'checkpoints',
        line: 1,
        message:
          'checkpoint 1 (2026-11-09T00:00:00.000Z, 3 entries): the log ends at entry 2, so its tail was cut',
      },
    ]);
    expect(await verifyLog('', text([checkpoint([], 0)]), key)).toMatchObject({
      intact: true,
      checkpoints: 1,
    });
    // Breaks come sorted: the log's first, each file by line.
    const both = await verifyLog(text(['x', entries[1], 'y']), text(['z']), key);
    expect(both.breaks.map((b) => `${b.file}:${b.line}`)).toEqual([
      'log:1',
      'log:2',
      'log:3',
      'checkpoints:0',
      'checkpoints:1',
    ]);
  });
});
