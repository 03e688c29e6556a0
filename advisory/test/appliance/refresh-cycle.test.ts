import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Appliance } from '../../src/appliance/appliance.ts';
import { openAppliance } from '../../src/appliance/open.ts';
import type { Recording } from '../../src/appliance/record.ts';
import {
  Clock,
  capturingLogger,
  holdWidget25,
  publish,
  setup,
  widgetAdvisories,
} from '../support/appliance.ts';
import { startMailServer, subjectOf } from '../support/smtp-server.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

/**
 * The refresh's own bookkeeping, in-process: a recording a failure interrupted is
 * finished at the next refresh (entries once, the alert under its id), a refresh failure
 * stays in the status until one goes through, the inventory is re-read, the refresh
 * cycle runs and stops, and a read-only appliance changes nothing on disk.
 */
const DAY = 86_400_000;
const PUBLISHED = new Date('2026-11-21T12:00:00Z');
const open: Appliance[] = [];
let receiver: Receiver | null = null;
afterEach(async () => {
  vi.useRealTimers();
  for (const appliance of open.splice(0)) await appliance.stop();
  await receiver?.close();
  receiver = null;
});

async function start(
  env: NodeJS.ProcessEnv,
  options: { clock?: Clock | (() => Date); readOnly?: boolean } = {},
) {
  const log = capturingLogger();
  const clock = options.clock ?? new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
  const { appliance } = await openAppliance({
    env,
    logger: log.logger,
    now: typeof clock === 'function' ? clock : clock.now,
    ...(options.readOnly ? { readOnly: true } : {}),
  });
  open.push(appliance);
  return { appliance, log };
}

async function withWebhook() {
  const s = setup({ publishedAt: PUBLISHED });
  receiver = await startReceiver();
  return { s, env: { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: receiver.url } };
}

const kinds = async (appliance: Appliance) =>
  ((await appliance.decisions?.entries()) ?? []).map((e) => e.kind);
const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/**
 * Three refreshes at 0, 10 s and 30 s, each delivery refused by `hook` (a retry of 10 s,
 * doubling): after them the webhook counts as failing.
 */
async function threeFailedAttempts(appliance: Appliance, clock: Clock, hook: Receiver): Promise<void> {
  await appliance.refresh();
  clock.advance(10_000);
  await appliance.refresh();
  clock.advance(20_000);
  await appliance.refresh();
  expect(hook.attempts).toBe(3);
}

/** Replaces the outbox folder with a file: the next alert cannot be queued. */
function breakOutbox(stateDir: string): () => void {
  const outbox = path.join(stateDir, 'outbox');
  rmSync(outbox, { recursive: true, force: true });
  writeFileSync(outbox, 'in the way\n');
  return () => {
    rmSync(outbox);
    mkdirSync(outbox);
  };
}

describe('a recording a failure interrupted', () => {
  it('is finished at the next refresh: entries logged once, the alert sent under its id, then the state', async () => {
    const { s, env } = await withWebhook();
    const clock = new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
    const { appliance, log } = await start(env, { clock });
    await appliance.refresh();
    expect(receiver?.received.map((a) => a.kind)).toEqual(['initial']);

    clock.advance(2 * DAY);
    publish(
      s,
      { ...widgetAdvisories, 'widgets/hold.yaml': holdWidget25('W-HOLD-3') },
      new Date(PUBLISHED.getTime() + DAY),
    );
    const repair = breakOutbox(s.stateDir);
    await expect(appliance.refresh()).rejects.toMatchObject({ code: 'EEXIST', syscall: 'mkdir' });
    const recording = readJson<Recording>(path.join(s.stateDir, 'recording.json'));
    expect(recording.entries.map((e) => e.kind)).toEqual(['verdict-changed']);
    expect(recording.alert?.id).toBe(recording.id);
    // The log was written before the alert failed; the state was not.
    expect(await kinds(appliance)).toEqual([
      'feed-accepted',
      'initial-evaluation',
      'feed-accepted',
      'verdict-changed',
    ]);
    expect(readJson<{ record?: string }>(path.join(s.stateDir, 'evaluation.json')).record).not.toBe(
      recording.id,
    );
    expect(appliance.status.lastRefreshError).toEqual({
      at: expect.any(String),
      message: expect.stringMatching(/^E[A-Z]+: \w+ .*outbox.* failed$/),
    });
    expect(appliance.health()).toMatchObject({ status: 'degraded', problems: [{ code: 'refresh-failed' }] });

    repair();
    await appliance.refresh();
    expect(appliance.status.lastRefreshError).toBeNull();
    expect(log.messages()).toContain('finishing a recording left under way');
    expect(log.messages()).not.toContain(
      'the decision log moved on since this recording was planned; its entries are not appended again',
    );
    expect(await kinds(appliance)).toEqual([
      'feed-accepted',
      'initial-evaluation',
      'feed-accepted',
      'verdict-changed',
    ]);
    expect(receiver?.received.map((a) => [a.kind, a.id])).toEqual([
      ['initial', expect.any(String)],
      ['changes', recording.id],
    ]);
    expect(existsSync(path.join(s.stateDir, 'recording.json'))).toBe(false);
    expect((await appliance.decisions?.verify())?.intact).toBe(true);
  });

  it('only clears a recording whose state was saved already: nothing logged or sent again', async () => {
    const { s, env } = await withWebhook();
    const { appliance, log } = await start(env);
    await appliance.refresh();
    const record = readJson<{ record: string }>(path.join(s.stateDir, 'evaluation.json')).record;
    const evaluation = readJson<Recording['evaluation']>(path.join(s.stateDir, 'evaluation.json'));
    // A crash after the state was saved and before recording.json was removed.
    const left: Recording = {
      id: record,
      at: new Date().toISOString(),
      after: null,
      entries: [{ kind: 'initial-evaluation', data: { again: true } }],
      alert: { id: record, at: new Date().toISOString() } as Recording['alert'],
      evaluation,
    };
    writeFileSync(path.join(s.stateDir, 'recording.json'), JSON.stringify(left));
    const sent = receiver?.received.length;
    await appliance.refresh();
    expect(existsSync(path.join(s.stateDir, 'recording.json'))).toBe(false);
    expect(await kinds(appliance)).toEqual(['feed-accepted', 'initial-evaluation']);
    expect(receiver?.received.length).toBe(sent);
    expect(log.messages()).not.toContain('finishing a recording left under way');
  });

  it('appends the entries of a recording planned after the current head, once', async () => {
    const { s, env } = await withWebhook();
    const { appliance } = await start(env);
    await appliance.refresh();
    const evaluation = readJson<Recording['evaluation']>(path.join(s.stateDir, 'evaluation.json'));
    const head = appliance.decisions?.head ?? null;
    const planned: Recording = {
      id: 'r-planned',
      at: '2026-11-21T13:30:00.000Z',
      after: head,
      entries: [{ kind: 'verdict-changed', data: { asset: 'done-box', from: null, to: 'hold' } }],
      alert: null,
      evaluation: { ...evaluation, record: 'r-planned' },
    };
    writeFileSync(path.join(s.stateDir, 'recording.json'), JSON.stringify(planned));
    await appliance.refresh();
    await appliance.refresh();
    const entries = (await appliance.decisions?.entries()) ?? [];
    expect(entries.map((e) => e.kind)).toEqual(['feed-accepted', 'initial-evaluation', 'verdict-changed']);
    expect(entries[2]).toMatchObject({ at: '2026-11-21T13:30:00.000Z', data: { asset: 'done-box' } });
    expect(existsSync(path.join(s.stateDir, 'recording.json'))).toBe(false);
  });

  it('does not append entries when the log moved on otherwise, and says so; the alert still goes', async () => {
    const { s, env } = await withWebhook();
    const { appliance, log } = await start(env);
    await appliance.refresh();
    const evaluation = readJson<Recording['evaluation']>(path.join(s.stateDir, 'evaluation.json'));
    const stray: Recording = {
      id: 'r-stray',
      at: '2026-11-21T13:30:00.000Z',
      after: { seq: 7, hash: 'f'.repeat(64) },
      entries: [{ kind: 'verdict-changed', data: { asset: 'done-box' } }],
      alert: { ...(receiver?.received[0] as NonNullable<Recording['alert']>), id: 'r-stray' },
      evaluation: { ...evaluation, record: 'r-stray' },
    };
    writeFileSync(path.join(s.stateDir, 'recording.json'), JSON.stringify(stray));
    await appliance.refresh();
    expect(log.lines.find((l) => l.recording === 'r-stray' && l.level === 40)?.msg).toBe(
      'the decision log moved on since this recording was planned; its entries are not appended again',
    );
    expect(await kinds(appliance)).toEqual(['feed-accepted', 'initial-evaluation']);
    expect(receiver?.received.map((a) => a.id)).toContain('r-stray');
    expect(existsSync(path.join(s.stateDir, 'recording.json'))).toBe(false);
  });
});

describe('a refresh', () => {
  it('shares one run between concurrent callers, and starts a new one after', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    const first = appliance.refresh();
    expect(appliance.refresh()).toBe(first);
    await first;
    const second = appliance.refresh();
    expect(second).not.toBe(first);
    await second;
  });

  it('times itself with the appliance clock', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    // A clock that moves 250 ms each time it is read.
    const ticking = new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
    const { appliance } = await start(s.env, {
      clock: () => {
        ticking.advance(250);
        return ticking.now();
      },
    });
    const status = await appliance.refresh();
    const { startedAt, finishedAt, ms } = status.lastRefresh ?? { startedAt: '', finishedAt: '', ms: -1 };
    expect(ms).toBeGreaterThan(0);
    expect(ms % 250).toBe(0);
    expect(Date.parse(finishedAt) - Date.parse(startedAt)).toBe(ms);
    expect(Date.parse(status.evaluatedAt ?? '')).toBeGreaterThan(Date.parse(startedAt));
    expect(Date.parse(status.evaluatedAt ?? '')).toBeLessThan(Date.parse(finishedAt));
  });

  it('reports the failure of a system call by its code, call and path', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    // evaluation.json cannot be replaced by a file while a folder holds its name.
    const evaluation = path.join(s.stateDir, 'evaluation.json');
    rmSync(evaluation);
    mkdirSync(path.join(evaluation, 'in-the-way'), { recursive: true });
    await expect(appliance.refresh()).rejects.toThrow();
    expect(appliance.status.lastRefreshError?.message).toMatch(
      /^E[A-Z]+: rename .*\.evaluation\.json\.tmp-[0-9a-f]{12} failed$/,
    );
    rmSync(evaluation, { recursive: true });
    await appliance.refresh();
    expect(appliance.status.lastRefreshError).toBeNull();
  });

  it('re-reads the inventory; one that does not parse leaves the last good one in use, and says why', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, log } = await start(s.env);
    await appliance.refresh();
    writeFileSync(s.inventoryFile, 'assets: [\n');
    await appliance.refresh();
    expect(appliance.status.inventoryError).toMatch(/.+/);
    expect(appliance.status.evaluations.map((e) => e.asset).sort()).toEqual([
      'done-box',
      'new-box',
      'old-box',
    ]);
    expect(log.lines.find((l) => l.level === 40 && l.problem === appliance.status.inventoryError)?.msg).toBe(
      'inventory file refused; the last good one stays in use',
    );
    writeFileSync(s.inventoryFile, 'assets:\n  - { name: only-box, products: { widget: "1.0" } }\n');
    await appliance.refresh();
    expect(appliance.status.inventoryError).toBeNull();
    expect(appliance.status.evaluations.map((e) => e.asset)).toEqual(['only-box']);
  });
});

/**
 * Waits on real I/O (fsync takes its time) while the timers are fake; setImmediate is real.
 * No deadline of its own: the test's timeout is the one bound.
 */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

describe('the refresh cycle', () => {
  it('refreshes at start and every interval after the previous one ends, until stopped', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start({ ...s.env, ADVISORY_REFRESH_INTERVAL: '10m' });
    const refresh = vi.spyOn(appliance, 'refresh');
    appliance.start();
    await until(() => appliance.status.lastRefresh !== null);
    expect(refresh).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(10 * 60_000 - 1);
    expect(refresh).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(refresh).toHaveBeenCalledTimes(2);
    await appliance.stop();
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(refresh).toHaveBeenCalledTimes(2);
  });

  it('logs a failed refresh and keeps the cycle going', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, log } = await start({ ...s.env, ADVISORY_REFRESH_INTERVAL: '1m' });
    const refresh = vi.spyOn(appliance, 'refresh').mockRejectedValueOnce(new Error('EMFILE'));
    appliance.start();
    await until(() => log.messages().includes('refresh failed'));
    expect(log.lines.find((l) => l.msg === 'refresh failed')).toMatchObject({
      level: 50,
      err: { message: 'EMFILE' },
    });
    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => appliance.status.lastRefresh !== null);
    expect(refresh).toHaveBeenCalledTimes(2);
  });
});

describe('a read-only appliance (a check beside the daemon)', () => {
  it('leaves temporaries, recordings and the outbox as the daemon has them', async () => {
    const { s, env } = await withWebhook();
    const daemon = await start(env);
    await daemon.appliance.refresh();
    const temporary = path.join(s.stateDir, '.evaluation.json.tmp-0123456789ab');
    const outboxTemporary = path.join(s.stateDir, 'outbox', '.x.json.tmp-0123456789ab');
    writeFileSync(temporary, 'half');
    writeFileSync(outboxTemporary, 'half');
    writeFileSync(path.join(s.stateDir, 'recording.json'), JSON.stringify({ not: 'read' }));
    const reader = await start(env, { readOnly: true });
    const status = await reader.appliance.refresh();
    expect(status.readOnly).toBe(true);
    expect(status.evaluations).toHaveLength(3);
    expect(reader.appliance.decisions).toBeNull();
    expect(existsSync(temporary)).toBe(true);
    expect(existsSync(outboxTemporary)).toBe(true);
    expect(readJson(path.join(s.stateDir, 'recording.json'))).toEqual({ not: 'read' });
    expect(status.outbox).toEqual({ channels: ['webhook'], pending: 0, failed: 0, damaged: 0, failing: [] });
  });

  it('a writing appliance clears temporaries at start', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const first = await start(s.env);
    await first.appliance.refresh();
    await first.appliance.stop();
    open.splice(0);
    const temporary = path.join(s.stateDir, '.evaluation.json.tmp-0123456789ab');
    const outboxTemporary = path.join(s.stateDir, 'outbox', '.x.json.tmp-0123456789ab');
    mkdirSync(path.dirname(outboxTemporary), { recursive: true });
    writeFileSync(temporary, 'half');
    writeFileSync(outboxTemporary, 'half');
    await start(s.env);
    expect(existsSync(temporary)).toBe(false);
    expect(existsSync(outboxTemporary)).toBe(false);
  });
});

describe('the appliance clock', () => {
  it('dates the start, the log and the alerts by the clock it is given', async () => {
    const clock = new Clock(new Date(PUBLISHED.getTime() + 2 * DAY));
    const { env } = await withWebhook();
    const { appliance } = await start(env, { clock });
    expect(appliance.status.startedAt).toBe(clock.now().toISOString());
    await appliance.refresh();
    const entries = (await appliance.decisions?.entries()) ?? [];
    expect(new Set(entries.map((e) => e.at))).toEqual(new Set([clock.now().toISOString()]));
    expect(receiver?.received[0]?.at).toBe(clock.now().toISOString());
  });
});

describe('what the appliance counts and keeps for monitoring', () => {
  it('counts refreshes that went through and failed, and pulls by outcome (for /metrics)', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    const counted = () => JSON.parse(JSON.stringify(appliance.counters));
    expect(counted()).toEqual({
      refreshes: { succeeded: 0, failed: 0 },
      pulls: { accepted: 0, unchanged: 0, rejected: 0, unreachable: 0 },
    });
    await appliance.refresh();
    await appliance.refresh();
    appendFileSync(path.join(s.feedDir, 'manifest.yaml'), '# edited\n');
    await appliance.refresh();
    rmSync(s.feedDir, { recursive: true });
    await appliance.refresh();
    expect(counted()).toEqual({
      refreshes: { succeeded: 4, failed: 0 },
      pulls: { accepted: 1, unchanged: 1, rejected: 1, unreachable: 1 },
    });
    // evaluation.json cannot be replaced while a folder holds its name: the refresh fails.
    publish(
      s,
      { ...widgetAdvisories, 'widgets/hold.yaml': holdWidget25('W-HOLD') },
      new Date(PUBLISHED.getTime() + 1),
    );
    const evaluation = path.join(s.stateDir, 'evaluation.json');
    rmSync(evaluation);
    mkdirSync(path.join(evaluation, 'in-the-way'), { recursive: true });
    await expect(appliance.refresh()).rejects.toThrow();
    expect(counted().refreshes).toEqual({ succeeded: 4, failed: 1 });
  });

  it('the feed step alone (pullFeed) pulls and answers with its outcome', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    expect(await appliance.pullFeed()).toMatchObject({
      outcome: 'accepted',
      message: 'feed 2026.11.21 accepted',
    });
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.21');
    expect(await appliance.pullFeed()).toMatchObject({ outcome: 'unchanged' });
  });

  it('keeps its health in health.json for a check beside it, written only when the problems change', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const clock = new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
    const { appliance } = await start(s.env, { clock });
    const file = path.join(s.stateDir, 'health.json');
    const kept = () => JSON.parse(readFileSync(file, 'utf8'));
    await appliance.refresh();
    const first = clock.now().toISOString();
    expect(kept()).toEqual({ at: first, pid: process.pid, problems: [] });
    clock.advance(60_000);
    await appliance.refresh();
    expect(kept().at).toBe(first);
    appendFileSync(path.join(s.feedDir, 'manifest.yaml'), '# edited\n');
    await appliance.refresh();
    expect(kept()).toMatchObject({
      at: clock.now().toISOString(),
      problems: [
        {
          code: 'feed-refused',
          message: expect.stringMatching(/^the feed from the feed directory was refused: /),
        },
      ],
    });
  });

  it('logs a health.json the disk refuses, and writes it at the next judgement', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, log } = await start(s.env);
    const file = path.join(s.stateDir, 'health.json');
    mkdirSync(path.join(file, 'in-the-way'), { recursive: true });
    await appliance.refresh();
    expect(
      log.lines.find((l) => l.msg === 'the health could not be kept in the state directory'),
    ).toMatchObject({
      level: 40,
      err: expect.anything(),
    });
    rmSync(file, { recursive: true });
    // The same problems (none) as before: written all the same, as they were never kept.
    await appliance.refresh();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ problems: [] });
  });

  it('says at start that the decision log it recorded is gone, and not otherwise', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const first = await start(s.env);
    await first.appliance.refresh();
    expect(first.log.lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(first.appliance.logger).toBe(first.log.logger);
    await first.appliance.stop();
    open.splice(open.indexOf(first.appliance), 1);
    rmSync(path.join(s.stateDir, 'decisions.jsonl'));
    rmSync(path.join(s.stateDir, 'checkpoints.jsonl'), { force: true });
    const second = await start(s.env);
    expect(second.appliance.status.logLost).toMatch(/^the decision log had 2 entries/);
    expect(second.log.lines.find((l) => l.msg === 'decision log missing')).toMatchObject({
      level: 50,
      problem: second.appliance.status.logLost,
    });
  });
});

describe('a failing alert channel that is the only one', () => {
  it('is logged as such: no other channel can carry the news', async () => {
    const hook = await startReceiver();
    try {
      hook.script = Array(20).fill(500);
      const s = setup({
        publishedAt: PUBLISHED,
        assets: 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n',
      });
      const clock = new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
      const { appliance, log } = await start(
        { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: hook.url, ADVISORY_ALERT_RETRY: '10s' },
        { clock },
      );
      const alone =
        'no other alert channel is configured: this shows on the dashboard, /health and advisory check only';
      await appliance.refresh();
      clock.advance(10_000);
      await appliance.refresh();
      expect(log.messages()).not.toContain(alone);
      clock.advance(20_000);
      await appliance.refresh();
      expect(hook.attempts).toBe(3);
      expect(log.lines.filter((l) => l.msg === alone)).toEqual([
        expect.objectContaining({ level: 40, condition: 'alerts-failing-webhook' }),
      ]);
      // The condition itself is logged too, as it started.
      expect(
        log.lines.find((l) => l.condition === 'alerts-failing-webhook' && l.state === 'started'),
      ).toMatchObject({
        level: 40,
        msg: expect.stringMatching(/^alert delivery by webhook keeps failing since /),
      });
      // Nothing was queued for the failing webhook about itself.
      expect((await appliance.outbox.pending()).map((d) => d.alert.kind)).toEqual(['initial']);
    } finally {
      await hook.close();
    }
  });
});

describe('the status and what a refresh keeps, read by the outputs', () => {
  it('starts empty: no verdicts, no sources, an empty outbox, the log vouched for', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    expect(appliance.status).toMatchObject({
      readOnly: false,
      inventory: [],
      evaluations: [],
      evaluatedAt: null,
      lastRefresh: null,
      lastRefreshError: null,
      logProblem: null,
      outbox: { channels: [], pending: 0, failed: 0, damaged: 0 },
    });
    await appliance.stop();
    open.splice(0);
    const reader = await start(s.env, { readOnly: true });
    expect(reader.appliance.status.readOnly).toBe(true);
  });

  it('read-only: takes the daemon kept health, and writes no evaluation', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const daemon = await start(s.env);
    await daemon.appliance.refresh();
    appendFileSync(path.join(s.feedDir, 'manifest.yaml'), '# edited\n');
    await daemon.appliance.refresh();
    const kept = readJson<{ problems: { code: string }[] }>(path.join(s.stateDir, 'health.json'));
    expect(kept.problems.map((p) => p.code)).toEqual(['feed-refused']);
    const evaluation = readFileSync(path.join(s.stateDir, 'evaluation.json'), 'utf8');
    const reader = await start(s.env, { readOnly: true });
    const status = await reader.appliance.refresh();
    expect(status.kept).toEqual(kept);
    expect(readFileSync(path.join(s.stateDir, 'evaluation.json'), 'utf8')).toBe(evaluation);
  });

  it('records the log head as it moves, and names a damaged recording in the refresh failure', async () => {
    const { s, env } = await withWebhook();
    const { appliance } = await start(env);
    await appliance.refresh();
    const head = () => readJson<{ seq: number }>(path.join(s.stateDir, 'log-head.json')).seq;
    expect(head()).toBe(appliance.decisions?.head?.seq);
    publish(
      s,
      { ...widgetAdvisories, 'widgets/hold.yaml': holdWidget25('W-HOLD') },
      new Date(PUBLISHED.getTime() + 1),
    );
    await appliance.refresh();
    expect(appliance.decisions?.head?.seq).toBeGreaterThan(2);
    expect(head()).toBe(appliance.decisions?.head?.seq);
    // The verdict change went out with the feed in use and the log's latest checkpoint.
    const changed = receiver?.received.at(-1);
    expect(changed?.feedVersion).toBe(appliance.status.feed?.feed.manifest.feed_version);
    // A condition alert names the feed in use too.
    appendFileSync(path.join(s.feedDir, 'manifest.yaml'), '# edited\n');
    await appliance.refresh();
    const condition = receiver?.received.find((a) => a.kind === 'condition');
    expect(condition?.feedVersion).toBe(appliance.status.feed?.feed.manifest.feed_version);
    // The log's checkpoint as it stood when the alert was queued (the refusal's entry after).
    expect(condition?.checkpoint).toMatchObject({ size: expect.any(Number), head: expect.any(String) });
    expect(condition?.checkpoint?.size).toBeGreaterThanOrEqual(3);
    writeFileSync(path.join(s.stateDir, 'recording.json'), '{"id":');
    await expect(appliance.refresh()).rejects.toThrow();
    expect(appliance.status.lastRefreshError?.message).toMatch(/recording\.json: not JSON/);
  });
});

/** The evaluation state a refresh of the usual setup keeps (for recordings made by hand). */
async function anEvaluation(): Promise<Recording['evaluation']> {
  const other = setup({ publishedAt: PUBLISHED });
  const { appliance } = await start(other.env);
  await appliance.refresh();
  return readJson<Recording['evaluation']>(path.join(other.stateDir, 'evaluation.json'));
}

describe('what an operator notices of the refresh bookkeeping', () => {
  it('finishes a first recording a crash cut after its append: logged once, no warning, no alert of its own', async () => {
    const { s, env } = await withWebhook();
    const { appliance, log } = await start(env);
    const evaluation = path.join(s.stateDir, 'evaluation.json');
    // Planned on an empty log, without an alert; the state save after the append fails.
    const first: Recording = {
      id: 'r-first',
      at: '2026-11-21T13:30:00.000Z',
      after: null,
      entries: [{ kind: 'verdict-changed', data: { asset: 'done-box', from: null, to: 'hold' } }],
      alert: null,
      evaluation: { ...(await anEvaluation()), record: 'r-first' },
    };
    writeFileSync(path.join(s.stateDir, 'recording.json'), JSON.stringify(first));
    mkdirSync(path.join(evaluation, 'in-the-way'), { recursive: true });
    await expect(appliance.refresh()).rejects.toThrow();
    expect(await kinds(appliance)).toEqual(['verdict-changed']);
    rmSync(evaluation, { recursive: true });
    await appliance.refresh();
    expect(appliance.status.lastRefreshError).toBeNull();
    expect((await kinds(appliance)).filter((k) => k === 'verdict-changed')).toHaveLength(1);
    expect(log.messages()).not.toContain(
      'the decision log moved on since this recording was planned; its entries are not appended again',
    );
    // Its state was the evaluation already: no alert, and none made of the recording's absent one.
    expect(receiver?.received).toEqual([]);
    expect(await appliance.outbox.pending()).toEqual([]);
    expect(await appliance.outbox.failed()).toEqual([]);
  });

  it('finishes a recording planned on a log that is gone without appending it, and says so', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, log } = await start(s.env);
    const stray: Recording = {
      id: 'r-gone',
      at: '2026-11-21T13:30:00.000Z',
      after: { seq: 7, hash: 'f'.repeat(64) },
      entries: [{ kind: 'verdict-changed', data: { asset: 'done-box' } }],
      alert: null,
      evaluation: { ...(await anEvaluation()), record: 'r-gone' },
    };
    writeFileSync(path.join(s.stateDir, 'recording.json'), JSON.stringify(stray));
    await appliance.refresh();
    expect(appliance.status.lastRefreshError).toBeNull();
    expect(log.lines.find((l) => l.recording === 'r-gone' && l.level === 40)?.msg).toBe(
      'the decision log moved on since this recording was planned; its entries are not appended again',
    );
    expect(await kinds(appliance)).not.toContain('verdict-changed');
  });

  it('appends a recording planned on an empty log, and not one planned at the same place with another hash', async () => {
    const first = setup({ publishedAt: PUBLISHED });
    const done = await start(first.env);
    await done.appliance.refresh();
    const evaluation = readJson<Recording['evaluation']>(path.join(first.stateDir, 'evaluation.json'));
    const onEmpty: Recording = {
      id: 'r-empty',
      at: '2026-11-21T13:30:00.000Z',
      after: null,
      entries: [{ kind: 'verdict-changed', data: { asset: 'done-box', from: null, to: 'hold' } }],
      alert: null,
      evaluation: { ...evaluation, record: 'r-empty' },
    };
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, log } = await start(s.env);
    writeFileSync(path.join(s.stateDir, 'recording.json'), JSON.stringify(onEmpty));
    await appliance.refresh();
    expect((await kinds(appliance))[0]).toBe('verdict-changed');
    // A recording without an alert queues none (no channel is set: nothing else could).
    expect(await appliance.outbox.pending()).toEqual([]);
    // A variant: planned at the head's place, but after another entry (its hash differs).
    const head = appliance.decisions?.head;
    if (!head) throw new Error('the log has a head');
    const elsewhere: Recording = {
      ...onEmpty,
      id: 'r-elsewhere',
      after: { seq: head.seq, hash: 'e'.repeat(64) },
      evaluation: { ...evaluation, record: 'r-elsewhere' },
    };
    const before = await kinds(appliance);
    writeFileSync(path.join(s.stateDir, 'recording.json'), JSON.stringify(elsewhere));
    await appliance.refresh();
    expect(await kinds(appliance)).toEqual(before);
    expect(log.lines.find((l) => l.recording === 'r-elsewhere' && l.level === 40)?.msg).toBe(
      'the decision log moved on since this recording was planned; its entries are not appended again',
    );
  });

  it('does not say "no other alert channel" of a condition that is no channel, with no channel set', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, log } = await start(s.env);
    await appliance.refresh();
    appendFileSync(path.join(s.feedDir, 'manifest.yaml'), '# edited\n');
    await appliance.refresh();
    expect(log.lines.find((l) => l.condition === 'feed-refused')).toMatchObject({ state: 'started' });
    expect(log.messages().filter((m) => m.startsWith('no other alert channel'))).toEqual([]);
  });

  it('read-only: neither queues nor sends an alert, even for a condition it sees start', async () => {
    const { s, env } = await withWebhook();
    const daemon = await start(env);
    await daemon.appliance.refresh();
    await daemon.appliance.stop();
    open.splice(open.indexOf(daemon.appliance), 1);
    const received = receiver?.received.length;
    const outbox = path.join(s.stateDir, 'outbox');
    const queued = readdirSync(outbox).sort();
    const conditionsFile = path.join(s.stateDir, 'conditions.json');
    const conditions = existsSync(conditionsFile) ? readFileSync(conditionsFile, 'utf8') : null;
    // Long past the feed's expiry: the check sees the feed expire.
    const reader = await start(env, {
      readOnly: true,
      clock: new Clock(new Date(PUBLISHED.getTime() + 400 * DAY)),
    });
    const status = await reader.appliance.refresh();
    expect(status.feed).toBeNull();
    expect(readdirSync(outbox).sort()).toEqual(queued);
    expect(existsSync(conditionsFile) ? readFileSync(conditionsFile, 'utf8') : null).toBe(conditions);
    expect(receiver?.received.length).toBe(received);
  });

  it('writes log-head.json only when the head moved: a refresh with no news leaves the file as it was', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    const file = path.join(s.stateDir, 'log-head.json');
    const written = statSync(file).ino;
    await appliance.refresh();
    expect(statSync(file).ino).toBe(written);
  });
});

/**
 * A feed host whose answers the test holds back (`holding`) until it lets them go: a
 * refresh stays in its pull meanwhile, so what happens then is the outbox's own doing.
 */
async function heldFeedHost(root: string) {
  const waiting: (() => void)[] = [];
  const host = { holding: false, held: 0 };
  const server = createServer((request, response) => {
    const answer = () => {
      const name = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname).slice(1);
      const file = path.join(root, name);
      if (name.includes('..') || !existsSync(file)) return void response.writeHead(404).end();
      response.writeHead(200).end(readFileSync(file));
    };
    if (!host.holding) return answer();
    host.held += 1;
    waiting.push(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(host, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    release() {
      host.holding = false;
      for (const answer of waiting.splice(0)) answer();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** Resolves after the outbox's next own tick has judged what it delivered (appliance.start). */
function nextTick(appliance: Appliance): Promise<void> {
  const outbox = appliance.outbox;
  const original = outbox.start.bind(outbox);
  return new Promise<void>((resolve) => {
    vi.spyOn(outbox, 'start').mockImplementationOnce((flushed) =>
      original(async () => {
        await flushed?.();
        resolve();
      }),
    );
  });
}

describe("the daemon's own delivery ticks", () => {
  it('judge nothing before the first refresh has pulled: no "no feed" alarm at start', async () => {
    const { s, env } = await withWebhook();
    const host = await heldFeedHost(s.feedDir);
    try {
      host.holding = true;
      const { appliance, log } = await start({ ...env, ADVISORY_FEED_URL: host.url });
      const ticked = nextTick(appliance);
      appliance.start();
      await ticked;
      // The first refresh waits on the feed host: the tick came before it.
      expect(appliance.status.lastRefresh).toBeNull();
      expect(log.lines.filter((l) => l.condition !== undefined)).toEqual([]);
      expect(existsSync(path.join(s.stateDir, 'conditions.json'))).toBe(false);
      expect(await appliance.outbox.pending()).toEqual([]);
      host.release();
      await expect.poll(() => appliance.status.lastRefresh).not.toBeNull();
      expect(appliance.status.feed?.from).toBe('live');
      expect(log.lines.filter((l) => l.condition !== undefined)).toEqual([]);
      expect(receiver?.received.map((a) => a.kind)).toEqual(['initial']);
    } finally {
      host.release();
      for (const appliance of open.splice(0)) await appliance.stop();
      await host.close();
    }
  });

  it('after the first refresh, announce a channel working again at once, without a refresh', async () => {
    const s = setup({
      publishedAt: PUBLISHED,
      assets: 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n',
    });
    const host = await heldFeedHost(s.feedDir);
    const hook = await startReceiver();
    try {
      hook.script = Array(3).fill(500);
      const clock = new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
      const { appliance, log } = await start(
        {
          ...s.env,
          ADVISORY_FEED_URL: host.url,
          ADVISORY_NOTIFY_WEBHOOK_URL: hook.url,
          ADVISORY_ALERT_RETRY: '10s',
          ADVISORY_REFRESH_INTERVAL: '1h',
        },
        { clock },
      );
      await threeFailedAttempts(appliance, clock, hook);
      const failing = (state: string) =>
        log.lines.filter((l) => l.condition === 'alerts-failing-webhook' && l.state === state);
      expect(failing('started')).toHaveLength(1);
      const health = path.join(s.stateDir, 'health.json');
      expect(readJson<{ problems: { code: string }[] }>(health).problems.map((p) => p.code)).toEqual([
        'alerts-failing-webhook',
      ]);
      const last = appliance.status.lastRefresh;
      // The webhook answers again; the next attempt is due. The daemon's refresh is held
      // at the feed host: only the outbox's own tick delivers, and judges.
      clock.advance(40_000);
      host.holding = true;
      const ticked = nextTick(appliance);
      appliance.start();
      await ticked;
      expect(appliance.status.lastRefresh).toEqual(last);
      expect(hook.received.map((a) => a.kind)).toEqual(['initial']);
      expect(failing('cleared')).toHaveLength(1);
      expect(appliance.status.outbox).toMatchObject({ pending: 0, failing: [] });
      expect(appliance.health().problems).toEqual([]);
      expect(readJson<{ problems: unknown[] }>(health).problems).toEqual([]);
      expect(existsSync(path.join(s.stateDir, 'conditions.json'))).toBe(true);
      expect(readJson<Record<string, unknown>>(path.join(s.stateDir, 'conditions.json'))).toEqual({});
    } finally {
      host.release();
      for (const appliance of open.splice(0)) await appliance.stop();
      await host.close();
      await hook.close();
    }
  });
});

describe('alerts and the channels they go by', () => {
  it('send the first evaluation with the checkpoint of the log that holds it', async () => {
    const { env } = await withWebhook();
    const { appliance } = await start(env);
    await appliance.refresh();
    const initial = receiver?.received.find((a) => a.kind === 'initial');
    const head = appliance.decisions?.head;
    expect(head?.seq).toBe(2);
    expect(initial?.checkpoint).toMatchObject({
      size: 2,
      head: head?.hash,
      message: expect.stringContaining(`head: ${head?.hash}`),
    });
  });

  it('do not say "no other alert channel" while e-mail still carries the news of a failing webhook', async () => {
    const hook = await startReceiver();
    const mail = await startMailServer();
    try {
      hook.script = Array(20).fill(500);
      const s = setup({
        publishedAt: PUBLISHED,
        assets: 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n',
      });
      const clock = new Clock(new Date(PUBLISHED.getTime() + 3_600_000));
      const { appliance, log } = await start(
        { ...s.env, ...mail.env, ADVISORY_NOTIFY_WEBHOOK_URL: hook.url, ADVISORY_ALERT_RETRY: '10s' },
        { clock },
      );
      await threeFailedAttempts(appliance, clock, hook);
      expect(
        log.lines.find((l) => l.condition === 'alerts-failing-webhook' && l.state === 'started'),
      ).toMatchObject({ level: 40 });
      expect(log.messages().filter((m) => m.startsWith('no other alert channel'))).toEqual([]);
      // The news went by e-mail: the first evaluation, then the failing webhook.
      expect(mail.mails.map((m) => subjectOf(m))).toEqual([
        expect.any(String),
        expect.stringMatching(/webhook/),
      ]);
    } finally {
      await hook.close();
      await mail.close();
    }
  });
});
