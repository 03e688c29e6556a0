import { spawn, spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from '../src/data-dir-lock.ts';

/**
 * The data directory lock: one holder at a time, whoever races for it, and a lock left
 * by a process that is gone is taken over at once (by exactly one of the racers).
 */
const lockModule = path.resolve(import.meta.dirname, '../src/data-dir-lock.ts');

/** A pid that no process has: one that has just exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}

/**
 * `count` processes that all try to take `dir` at the same moment: each, once loaded, says
 * it is ready (a file in `ready/`) and waits for all the others before trying, so the
 * tries overlap however slowly the processes start. Each says `held` or the error code it
 * got. The holder keeps the lock until every racer has tried (each leaves a file in
 * `tried/`).
 */
async function race(dir: string, count: number): Promise<string[]> {
  const ready = path.join(path.dirname(dir), 'ready');
  const tried = path.join(path.dirname(dir), 'tried');
  mkdirSync(ready);
  mkdirSync(tried);
  const script = `
    import { readdirSync, writeFileSync } from 'node:fs';
    import { lockDataDir } from ${JSON.stringify(lockModule)};
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    writeFileSync(${JSON.stringify(ready)} + '/' + process.pid, '');
    while (readdirSync(${JSON.stringify(ready)}).length < ${count}) await sleep(1);
    let release = null;
    try {
      release = await lockDataDir(${JSON.stringify(dir)});
      process.stdout.write('held');
    } catch (error) {
      process.stdout.write(error.code ?? error.message);
    }
    writeFileSync(${JSON.stringify(tried)} + '/' + process.pid, '');
    while (release && readdirSync(${JSON.stringify(tried)}).length < ${count}) await sleep(20);
    await release?.();`;
  const outcomes = Array.from({ length: count }, () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    return new Promise<string>((resolve) => child.on('close', () => resolve(out)));
  });
  return Promise.all(outcomes);
}

function stateDir(): string {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'lock-')), 'state');
  mkdirSync(dir);
  return dir;
}

describe('the data directory lock', () => {
  it.each([
    ['a free directory', () => {}],
    [
      'a lock left by a process that is gone (and one it was still making)',
      (dir: string) => {
        mkdirSync(path.join(dir, 'lock'));
        writeFileSync(path.join(dir, 'lock', String(deadPid())), '');
        const pid = deadPid();
        mkdirSync(path.join(dir, `.lock.new-${pid}-0123456789ab`));
        writeFileSync(path.join(dir, `.lock.new-${pid}-0123456789ab`, String(pid)), '');
      },
    ],
  ])(
    'on %s: exactly one of many racing processes takes it',
    async (_, prepare) => {
      const dir = stateDir();
      prepare(dir);
      const outcomes = await race(dir, 12);
      expect(outcomes.filter((o) => o === 'held')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'ELOCKED')).toHaveLength(11);
      // Released, it leaves nothing behind.
      expect(readdirSync(dir)).toEqual([]);
    },
    30_000,
  );

  it('refuses a second holder, names the holder, and is free again once released', async () => {
    const dir = stateDir();
    const release = await lockDataDir(dir);
    // Named after this process: pid, pid namespace, boot id and start time.
    const [name] = readdirSync(path.join(dir, 'lock'));
    const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
    expect(name).toMatch(new RegExp(`^${process.pid}\\.n\\d+\\.b${uuid}\\.s\\d+$`));
    const second = await lockDataDir(dir).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(DataDirLockedError);
    expect(second).toMatchObject({ code: 'ELOCKED', pid: process.pid });
    await release();
    expect(readdirSync(dir)).toEqual([]);
    await (await lockDataDir(dir))();
  });

  it('takes over an empty lock (its maker killed before it was named) and keeps live makers', async () => {
    const dir = stateDir();
    mkdirSync(path.join(dir, 'lock'));
    // A lock this very process is making elsewhere (another open) is not cleared away.
    const making = `.lock.new-${process.pid}-abcdefabcdef`;
    mkdirSync(path.join(dir, making));
    const release = await lockDataDir(dir);
    expect(readdirSync(dir).sort()).toEqual([making, 'lock']);
    await release();
  });

  it('takes over a lock naming its own pid that it does not hold (an earlier process with that pid)', async () => {
    const dir = stateDir();
    mkdirSync(path.join(dir, 'lock'));
    writeFileSync(path.join(dir, 'lock', String(process.pid)), '');
    const release = await lockDataDir(dir);
    expect(readdirSync(path.join(dir, 'lock'))).toEqual([
      expect.stringMatching(new RegExp(`^${process.pid}\\.n`)),
    ]);
    await release();
  });

  it('takes over a lock whose pid now belongs to another process (after a power cut)', async () => {
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const pid = other.pid as number;
      const dir = stateDir();
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const taken = async (owner: string) => {
        mkdirSync(path.join(dir, 'lock'));
        writeFileSync(path.join(dir, 'lock', owner), '');
        const release = await lockDataDir(dir);
        expect(readdirSync(path.join(dir, 'lock'))).toEqual([
          expect.stringMatching(new RegExp(`^${process.pid}\\.`)),
        ]);
        await release();
      };
      // The same pid, running now, but the owner was of another boot.
      await taken(`${pid}.b00000000-0000-4000-8000-000000000000.s1`);
      await taken(`${pid}.b00000000-0000-4000-8000-000000000000`);
      // Of this boot, but started at another time: another process has its pid now.
      await taken(`${pid}.b${boot}.s1`);
      // What cannot be told apart is trusted while the pid runs.
      for (const owner of [String(pid), `${pid}.b${boot}`]) {
        mkdirSync(path.join(dir, 'lock'));
        writeFileSync(path.join(dir, 'lock', owner), '');
        await expect(lockDataDir(dir)).rejects.toMatchObject({ code: 'ELOCKED', pid });
        rmSync(path.join(dir, 'lock'), { recursive: true });
      }
    } finally {
      other.kill();
    }
  });

  it('judges an owner in another pid namespace (another container) by when it last touched its file', async () => {
    const dir = stateDir();
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    // Process 1 of another container on this boot: its pid says nothing here.
    const owner = path.join(dir, 'lock', `1.n1.b${boot}.s5`);
    mkdirSync(path.join(dir, 'lock'));
    writeFileSync(owner, '');
    await expect(lockDataDir(dir)).rejects.toMatchObject({ code: 'ELOCKED', pid: 1 });
    // Untouched for longer than three beats: gone (its container stopped without a word).
    const past = new Date(Date.now() - 31_000);
    utimesSync(owner, past, past);
    const release = await lockDataDir(dir);
    expect(readdirSync(path.join(dir, 'lock'))).toEqual([
      expect.stringMatching(new RegExp(`^${process.pid}\\.`)),
    ]);
    await release();
  });

  it('says what is wrong when the lock names no process and cannot be replaced', async () => {
    const dir = stateDir();
    mkdirSync(path.join(dir, 'lock'));
    writeFileSync(path.join(dir, 'lock', 'notes.txt'), 'not a pid');
    await expect(lockDataDir(dir)).rejects.toThrow(
      `${path.join(dir, 'lock')} names no process; remove it if no process uses ${dir}`,
    );
    expect(readdirSync(dir)).toEqual(['lock']);
  });
});
