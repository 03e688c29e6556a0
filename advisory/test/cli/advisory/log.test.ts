import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXPORT_FORMAT } from '../../../src/dashboard/export.ts';
import { APPLIANCE_PUBLIC_KEY, CHECKPOINT_FILE, DecisionStore } from '../../../src/decisions/store.ts';
import { runAdvisory } from '../../support/cli.ts';

/**
 * `advisory log verify` as an operator reads it: the verdict line, where each break is,
 * what is not signed yet, and a clear refusal (exit 2) of what cannot be verified.
 */
const day = (d: number) => new Date(Date.UTC(2026, 10, d));

async function logWith(n: number): Promise<{ dir: string; store: DecisionStore }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'log-verify-'));
  const store = await DecisionStore.open(dir, day(1));
  for (let i = 1; i <= n; i++)
    await store.append(
      [{ kind: 'verdict-changed', data: { asset: `host-${i}`, from: null, to: 'install' } }],
      day(i),
    );
  return { dir, store };
}

const checkpointLines = (dir: string) =>
  readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8').trimEnd().split('\n');
const writeCheckpoints = (dir: string, lines: string[]) =>
  writeFileSync(path.join(dir, CHECKPOINT_FILE), lines.map((l) => `${l}\n`).join(''));

const verify = (argv: string[], env: NodeJS.ProcessEnv = {}) => runAdvisory(['log', 'verify', ...argv], env);

async function exported(n: number, change: (data: Record<string, unknown>) => void = () => undefined) {
  const { dir, store } = await logWith(n);
  const data: Record<string, unknown> = {
    format: EXPORT_FORMAT,
    appliance_key: readFileSync(path.join(dir, APPLIANCE_PUBLIC_KEY), 'utf8'),
    entries: await store.entries(),
    checkpoints: await store.checkpoints(),
  };
  change(data);
  const file = path.join(dir, 'decisions.json');
  writeFileSync(file, JSON.stringify(data));
  return { dir, file };
}

describe('advisory log verify: the command', () => {
  it('needs the word verify', async () => {
    expect(await runAdvisory(['log'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('log needs a command: verify'),
    });
    expect(await runAdvisory(['log', 'check'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown log command "check"'),
    });
  });

  it('verifies the state directory ADVISORY_STATE_DIR names when --state-dir is not given', async () => {
    const { dir } = await logWith(1);
    expect(await verify([], { ADVISORY_STATE_DIR: dir })).toMatchObject({
      code: 0,
      out: expect.stringMatching(new RegExp(`^HASH CHAIN INTACT: 1 entries, 2 checkpoints; .*\\(${dir}\\)$`)),
    });
  });
});

describe('advisory log verify: what cannot be read', () => {
  it('names the setting the state directory came from', async () => {
    const nowhere = path.join(mkdtempSync(path.join(tmpdir(), 'log-verify-')), 'nowhere');
    expect(await verify(['--state-dir', nowhere])).toMatchObject({
      code: 2,
      err: expect.stringContaining(`--state-dir ${nowhere}: no such directory`),
    });
    expect(await verify([], { ADVISORY_STATE_DIR: nowhere })).toMatchObject({
      code: 2,
      err: expect.stringContaining(`ADVISORY_STATE_DIR ${nowhere}: no such directory`),
    });
    // The option wins over the variable, and is the one named.
    expect(await verify(['--state-dir', nowhere], { ADVISORY_STATE_DIR: '/var/lib/advisory' })).toMatchObject(
      {
        code: 2,
        err: expect.stringContaining(`--state-dir ${nowhere}: no such directory`),
      },
    );
  });

  it('names the export file or the log that cannot be read', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'log-verify-'));
    const missing = path.join(dir, 'decisions.json');
    expect(await verify(['--export', missing])).toMatchObject({
      code: 2,
      err: expect.stringContaining(`--export ${missing}`),
    });
    const { dir: state } = await logWith(1);
    rmSync(path.join(state, 'decisions.jsonl'));
    mkdirSync(path.join(state, 'decisions.jsonl'));
    expect(await verify(['--state-dir', state])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^log: .*decisions\.jsonl: is a directory, expected a file/),
    });
  });
});

describe('advisory log verify: what it says', () => {
  it('counts the entries no checkpoint signs yet', async () => {
    const { dir } = await logWith(2);
    writeCheckpoints(dir, checkpointLines(dir).slice(0, 2));
    expect(await verify(['--state-dir', dir])).toEqual({
      code: 0,
      out: [
        `HASH CHAIN INTACT: 2 entries, 2 checkpoints; the last (${day(1).toISOString()}) covers 1 (${dir})`,
        '1 entries after the last checkpoint are not signed yet',
      ].join('\n'),
      err: '',
    });
  });

  it('places a break in the checkpoints by its line, or in the checkpoints as a whole', async () => {
    const { dir } = await logWith(2);
    const lines = checkpointLines(dir);
    const second = JSON.parse(lines[1] as string) as { signature: string };
    second.signature = `${second.signature.slice(0, -4)}AAA=`;
    lines[1] = JSON.stringify(second);
    writeCheckpoints(dir, lines);
    const forged = await verify(['--state-dir', dir]);
    expect(forged.code).toBe(1);
    expect(forged.out).toMatch(
      new RegExp(
        `^HASH CHAIN BROKEN \\(${dir}\\):\n  checkpoint line 2: checkpoint 2 \\(.*\\): its signature does not verify`,
      ),
    );
    writeCheckpoints(dir, []);
    expect(await verify(['--state-dir', dir])).toMatchObject({
      code: 1,
      out: `HASH CHAIN BROKEN (${dir}):\n  checkpoints: no signed checkpoint covers the 2 entries of the log`,
    });
  });

  it('trusts a pinned key instead of the one beside the log, which then need not be there', async () => {
    const { dir } = await logWith(1);
    const pinned = path.join(mkdtempSync(path.join(tmpdir(), 'pinned-')), 'appliance.pub');
    writeFileSync(pinned, readFileSync(path.join(dir, APPLIANCE_PUBLIC_KEY)));
    rmSync(path.join(dir, APPLIANCE_PUBLIC_KEY));
    expect((await verify(['--state-dir', dir, '--appliance-key', pinned])).code).toBe(0);
    const without = await verify(['--state-dir', dir]);
    expect(without.code).toBe(2);
    expect(without.err).toContain(`appliance key ${path.join(dir, APPLIANCE_PUBLIC_KEY)}: no such file`);
  });

  it('refuses a key file too large to be a key, naming --appliance-key', async () => {
    const { dir } = await logWith(1);
    const huge = path.join(dir, 'huge.pub');
    writeFileSync(huge, 'x'.repeat(65 * 1024));
    const result = await verify(['--state-dir', dir, '--appliance-key', huge]);
    expect(result.code).toBe(2);
    expect(result.err).toContain('--appliance-key');
  });
});

describe('advisory log verify --export', () => {
  it('verifies an export, named in its verdict, with or without checkpoints', async () => {
    const { file } = await exported(1);
    expect(await verify(['--export', file])).toMatchObject({
      code: 0,
      out: `HASH CHAIN INTACT: 1 entries, 2 checkpoints; the last (${day(1).toISOString()}) covers 1 (${file})`,
    });
    const empty = await exported(0, (data) => {
      data.checkpoints = [];
    });
    expect(await verify(['--export', empty.file])).toMatchObject({
      code: 0,
      out: `HASH CHAIN INTACT: 0 entries, 0 checkpoints (${empty.file})`,
    });
  });

  it('refuses what is not an export (exit 2), saying why', async () => {
    const notJson = path.join(mkdtempSync(path.join(tmpdir(), 'export-')), 'x.json');
    writeFileSync(notJson, '{"format":');
    expect(await verify(['--export', notJson])).toMatchObject({
      code: 2,
      err: expect.stringContaining(`--export ${notJson}: not JSON`),
    });
    for (const spoil of [
      (data: Record<string, unknown>) => {
        data.format = 'advisory-decision-log/0';
      },
      (data: Record<string, unknown>) => {
        data.entries = {};
      },
      (data: Record<string, unknown>) => {
        delete data.checkpoints;
      },
    ]) {
      const { file } = await exported(1, spoil);
      expect(await verify(['--export', file])).toMatchObject({
        code: 2,
        err: expect.stringContaining(`--export ${file}: not a decision log export (${EXPORT_FORMAT})`),
      });
    }
    const { file } = await exported(1, (data) => {
      delete data.appliance_key;
    });
    expect(await verify(['--export', file])).toMatchObject({
      code: 2,
      err: expect.stringContaining(`${file} (appliance_key)`),
    });
  });
});
