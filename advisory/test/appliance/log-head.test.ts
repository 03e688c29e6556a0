import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { logLoss } from '../../src/appliance/log-head.ts';
import { setup } from '../support/appliance.ts';
import { runAdvisory } from '../support/cli.ts';
import { startReceiver } from '../support/webhook-receiver.ts';

const calm = 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n';
const H = 'a'.repeat(64);

describe('logLoss', () => {
  it('says a log with fewer entries than recorded, or another last hash, is not the recorded one', () => {
    expect(logLoss(null, null)).toBeNull();
    expect(logLoss({ seq: 0, hash: H }, null)).toBeNull();
    expect(logLoss({ seq: 2, hash: H }, null)).toMatch(
      /^the decision log had 2 entries \(its last hash aaaaaaaaaaaaaaaa…\) and now has 0: it was deleted or cut short/,
    );
    expect(logLoss({ seq: 2, hash: H }, { seq: 1, hash: H })).toMatch(/and now has 1:/);
    expect(logLoss({ seq: 2, hash: H }, { seq: 2, hash: H })).toBeNull();
    expect(logLoss({ seq: 2, hash: H }, { seq: 3, hash: 'b'.repeat(64) })).toBeNull();
    expect(logLoss({ seq: 2, hash: H }, { seq: 2, hash: 'b'.repeat(64) })).toBe(
      "the decision log's entry 2 is not the one recorded (its hash was aaaaaaaaaaaaaaaa…): the log was replaced (restore decisions.jsonl and checkpoints.jsonl from a backup)",
    );
    expect(logLoss({ seq: 2, hash: H }, null)).toContain(
      '(restore decisions.jsonl and checkpoints.jsonl from a backup; to accept the loss and start a new log, remove log-head.json from the state directory)',
    );
  });
});

describe('a decision log that existed and is gone', () => {
  it('is an alarm in check, log verify and by alert, until restored or the loss is accepted', async () => {
    const receiver = await startReceiver();
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const env = { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: receiver.url };
    const log = path.join(s.stateDir, 'decisions.jsonl');
    const checkpoints = path.join(s.stateDir, 'checkpoints.jsonl');
    try {
      expect((await runAdvisory(['check'], env)).code).toBe(0);
      expect(JSON.parse(readFileSync(path.join(s.stateDir, 'log-head.json'), 'utf8'))).toMatchObject({
        seq: 2,
      });
      const saved = [readFileSync(log), readFileSync(checkpoints)] as const;
      rmSync(log);
      rmSync(checkpoints);
      for (let i = 0; i < 2; i++) {
        const run = await runAdvisory(['check'], env);
        expect(run.code).toBe(1);
        expect(run.out).toMatch(/^warning: the decision log had 2 entries .* and now has 0: it was deleted/m);
        expect(run.out).toMatch(/the appliance needs attention: log-missing/);
        const verify = await runAdvisory(['log', 'verify'], env);
        expect(verify.code).toBe(1);
        expect(verify.out).toMatch(/^HASH CHAIN BROKEN .*\n {2}the decision log had 2 entries/);
      }
      const alerts = receiver.received.filter((a) => a.kind === 'condition');
      expect(alerts.map((a) => [a.condition?.code, a.condition?.state])).toEqual([
        ['log-missing', 'started'],
      ]);
      // Restored from a backup: intact again, and the alarm clears.
      writeFileSync(log, saved[0]);
      writeFileSync(checkpoints, saved[1]);
      expect((await runAdvisory(['log', 'verify'], env)).code).toBe(0);
      expect((await runAdvisory(['check'], env)).code).toBe(0);
      expect(receiver.received.filter((a) => a.kind === 'condition').at(-1)?.condition).toMatchObject({
        code: 'log-missing',
        state: 'cleared',
      });
      // Lost for good: the operator accepts it by removing the recorded head.
      rmSync(log);
      rmSync(checkpoints);
      expect((await runAdvisory(['check'], env)).code).toBe(1);
      rmSync(path.join(s.stateDir, 'log-head.json'));
      expect((await runAdvisory(['check'], env)).code).toBe(0);
      expect((await runAdvisory(['log', 'verify'], env)).code).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it('a damaged recorded head stops log verify from calling the log intact', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    expect((await runAdvisory(['check'], s.env)).code).toBe(0);
    writeFileSync(path.join(s.stateDir, 'log-head.json'), '{"seq":');
    const verify = await runAdvisory(['log', 'verify'], s.env);
    expect(verify.code).toBe(1);
    expect(verify.out).toMatch(/log-head\.json: not JSON .*cannot be checked against the head/);
  });
});
