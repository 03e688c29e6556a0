import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from '../src/data-dir-lock.ts';

function stateDir(): string {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'lock-')), 'state');
  mkdirSync(dir);
  return dir;
}

const deadPid = () =>
  Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
      .stdout,
  );

/** In this process, so that mutation testing sees them: who holds, who is gone, what is cleared. */
describe('the state lock, in this process', () => {
  it('names its holder fully and refuses a second open here with the holder named', async () => {
    const dir = stateDir();
    const release = await lockDataDir(dir);
    try {
      const [owner] = readdirSync(path.join(dir, 'lock'));
      // pid, pid namespace, boot id and start time, as /proc tells them.
      expect(owner).toMatch(new RegExp(`^${process.pid}\\.n\\d+\\.b[0-9a-f-]{36}\\.s\\d+$`));
      const refused = await lockDataDir(dir).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DataDirLockedError);
      expect(refused).toMatchObject({
        name: 'DataDirLockedError',
        code: 'ELOCKED',
        pid: process.pid,
        dir,
        message: `${dir} is in use by process ${process.pid}`,
      });
    } finally {
      await release();
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('clears locks being made by processes that are gone, and keeps those of live ones', async () => {
    const dir = stateDir();
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const gone = `.lock.new-${deadPid()}-0123456789ab`;
      const live = `.lock.new-${sleeper.pid}-0123456789ac`;
      const oldEmpty = `.lock.new-${deadPid()}-0123456789ad`;
      const newEmpty = `.lock.new-${deadPid()}-0123456789ae`;
      const notOurs = '.lock.new-x-0123456789af';
      for (const name of [gone, live, oldEmpty, newEmpty, notOurs]) mkdirSync(path.join(dir, name));
      writeFileSync(path.join(dir, gone, String(deadPid())), '');
      writeFileSync(path.join(dir, live, String(sleeper.pid)), '');
      // Naming nobody: judged by age (its maker was killed before it wrote its name).
      const past = new Date(Date.now() - 31_000);
      utimesSync(path.join(dir, oldEmpty), past, past);
      const release = await lockDataDir(dir);
      expect(readdirSync(dir).sort()).toEqual([live, newEmpty, notOurs, 'lock'].sort());
      await release();
    } finally {
      sleeper.kill();
    }
  });

  it('takes over the lock of a pid that is gone, and of another namespace left untouched', async () => {
    const dir = stateDir();
    mkdirSync(path.join(dir, 'lock'));
    writeFileSync(path.join(dir, 'lock', String(deadPid())), '');
    const release = await lockDataDir(dir);
    await release();
    // Touched just now by process 7 of another container: held.
    mkdirSync(path.join(dir, 'lock'));
    const other = path.join(dir, 'lock', '7.n1');
    writeFileSync(other, '');
    await expect(lockDataDir(dir)).rejects.toMatchObject({ code: 'ELOCKED', pid: 7 });
    // Untouched for exactly the stale time: gone.
    const past = new Date(Date.now() - 30_000);
    utimesSync(other, past, past);
    const again = await lockDataDir(dir);
    await again();
  });

  it('refuses a lock path that is a file, with the error it is', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lock-'));
    writeFileSync(path.join(dir, 'lock'), 'not a directory');
    await expect(lockDataDir(dir)).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(readdirSync(dir)).toEqual(['lock']);
  });

  it('touches nothing in the directory but locks being made: old state files and look-alikes stay', async () => {
    const dir = stateDir();
    const past = new Date(Date.now() - 3_600_000);
    for (const name of ['decisions.jsonl', '.lock.new-x-0123456789af', '.lock.new-1-short']) {
      if (name.endsWith('.jsonl')) writeFileSync(path.join(dir, name), '{}\n');
      else mkdirSync(path.join(dir, name));
      utimesSync(path.join(dir, name), past, past);
    }
    const release = await lockDataDir(dir);
    expect(readdirSync(dir).sort()).toEqual([
      '.lock.new-1-short',
      '.lock.new-x-0123456789af',
      'decisions.jsonl',
      'lock',
    ]);
    await release();
  });
});
