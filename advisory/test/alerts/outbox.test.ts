import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { initialAlert } from '../../src/alerts/alert.ts';
import { Outbox } from '../../src/alerts/outbox.ts';

/** An outbox in a new folder whose webhook records what it was sent. */
function recordingOutbox() {
  const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
  const sent: string[] = [];
  const outbox = new Outbox(
    dir,
    { webhook: async (a) => void sent.push(a.id) },
    { retryBaseMs: 10, maxAttempts: 3 },
  );
  return { dir, sent, outbox };
}

describe('the outbox', () => {
  it('sets a damaged delivery file apart, visibly, instead of skipping it', async () => {
    const { dir, sent, outbox } = recordingOutbox();
    const alert = initialAlert([], [], '2026.11.26', null, new Date('2026-11-26T00:00:00Z'));
    await outbox.enqueue(alert);
    // A delivery cut short by a full disk under an older version, and one of a wrong shape.
    writeFileSync(path.join(dir, '1-cut-webhook.json'), '{"channel":"webhook","alert":{"id":"x","summ');
    writeFileSync(path.join(dir, '2-shape-webhook.json'), '{"channel":"pager"}');
    expect((await outbox.pending()).map((d) => d.alert.id)).toEqual([alert.id]);
    expect((await outbox.damaged()).sort()).toEqual(['1-cut-webhook.json', '2-shape-webhook.json']);
    await outbox.flush();
    expect(sent).toEqual([alert.id]);
    expect(readdirSync(dir).sort()).toEqual(['damaged']);
  });

  it('stop() waits for the judgement after a delivery, which writes state, and starts none after', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    const outbox = new Outbox(dir, { webhook: async () => undefined }, { retryBaseMs: 10, maxAttempts: 3 });
    await outbox.enqueue(initialAlert([], [], '2026.11.26', null, new Date('2026-11-26T00:00:00Z')));
    let begun: () => void = () => undefined;
    const judging = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const judged: string[] = [];
    outbox.start(async () => {
      begun();
      await new Promise((resolve) => setTimeout(resolve, 200));
      judged.push('done');
    });
    await judging;
    await outbox.stop();
    expect(judged).toEqual(['done']);
    // Stopped: a flush from outside (a refresh's) schedules no tick, so nothing is judged.
    await outbox.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(judged).toEqual(['done']);
  });

  it('queues an alert once per channel, however often it is queued', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    const outbox = new Outbox(dir, { webhook: async () => undefined }, { retryBaseMs: 10, maxAttempts: 3 });
    const alert = initialAlert([], [], '2026.11.26', null, new Date('2026-11-26T00:00:00Z'));
    await outbox.enqueue(alert);
    await outbox.enqueue(alert);
    expect(await outbox.pending()).toHaveLength(1);
  });

  it('delivers channels side by side, and a failing channel waits one timeout per flush, not one per alert', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    let release: (error: Error) => void = () => undefined;
    const webhookCalls: string[] = [];
    const mails: string[] = [];
    const outbox = new Outbox(
      dir,
      {
        // A webhook that hangs until the test lets it fail, as a dead host does until its timeout.
        webhook: (a) => {
          webhookCalls.push(a.id);
          return new Promise<void>((_, reject) => {
            release = reject;
          });
        },
        email: async (a) => void mails.push(a.id),
      },
      { retryBaseMs: 60_000, maxAttempts: 3 },
    );
    const alerts = [1, 2, 3].map((day) =>
      initialAlert([], [], '2026.11.26', null, new Date(`2026-11-2${day}T00:00:00Z`)),
    );
    for (const alert of alerts) await outbox.enqueue(alert);
    const flushing = outbox.flush();
    // Mail goes out while the webhook still hangs on the first alert.
    await expect.poll(() => mails).toEqual(alerts.map((a) => a.id));
    expect(webhookCalls).toHaveLength(1);
    release(new Error('connect ETIMEDOUT'));
    await flushing;
    // The two behind it were not tried in this flush: still due, no attempt spent.
    expect(webhookCalls).toHaveLength(1);
    const left = await outbox.pending();
    expect(left.map((d) => [d.channel, d.attempts])).toEqual([
      ['webhook', 1],
      ['webhook', 0],
      ['webhook', 0],
    ]);
  });

  it('never queues again what is waiting for a retry or was given up, and waits twice as long each time', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    let now = new Date('2026-11-26T00:00:00Z');
    const outbox = new Outbox(
      dir,
      { webhook: async () => Promise.reject(new Error('HTTP 503')), email: undefined },
      { retryBaseMs: 1_000, maxAttempts: 3, now: () => now },
    );
    expect(outbox.channels).toEqual(['webhook']);
    const alert = initialAlert([], [], 'v', null, now);
    await outbox.enqueue(alert);
    await outbox.flush();
    expect(await outbox.pending()).toMatchObject([
      { attempts: 1, lastError: 'HTTP 503', nextAttemptAt: '2026-11-26T00:00:01.000Z' },
    ]);
    // Queued again (a recording finished after a crash): the attempt count is kept.
    await outbox.enqueue(alert);
    expect(await outbox.pending()).toMatchObject([{ attempts: 1 }]);
    // Not due yet: no attempt.
    await outbox.flush();
    expect(await outbox.pending()).toMatchObject([{ attempts: 1 }]);
    now = new Date('2026-11-26T00:00:01Z');
    await outbox.flush();
    expect(await outbox.pending()).toMatchObject([
      { attempts: 2, nextAttemptAt: '2026-11-26T00:00:03.000Z' },
    ]);
    now = new Date('2026-11-26T00:00:03Z');
    await outbox.flush();
    expect(await outbox.pending()).toEqual([]);
    expect(await outbox.failed()).toMatchObject([{ attempts: 3 }]);
    // Given up, and queued once more: it stays given up, not sent again.
    await outbox.enqueue(alert);
    expect(await outbox.pending()).toEqual([]);
  });

  it('sets apart every file that is not a delivery, field by field', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    const outbox = new Outbox(dir, { webhook: async () => undefined }, { retryBaseMs: 10, maxAttempts: 3 });
    const good = {
      channel: 'webhook',
      alert: { id: 'a', summary: 's' },
      attempts: 0,
      nextAttemptAt: '2026-11-26T00:00:00Z',
      lastError: null,
    };
    const bad: Record<string, unknown> = {
      'null.json': null,
      'array.json': [1],
      'number.json': 5,
      'channel.json': { ...good, channel: 'pager' },
      'channel-type.json': { ...good, channel: 7 },
      'attempts.json': { ...good, attempts: 1.5 },
      'next.json': { ...good, nextAttemptAt: 'soon' },
      'next-type.json': { ...good, nextAttemptAt: 5 },
      'error.json': { ...good, lastError: 5 },
      'alert.json': { ...good, alert: null },
      'alert-id.json': { ...good, alert: { summary: 's' } },
      'alert-summary.json': { ...good, alert: { id: 'a' } },
    };
    for (const [name, value] of Object.entries(bad))
      writeFileSync(path.join(dir, name), JSON.stringify(value));
    writeFileSync(path.join(dir, 'good.json'), JSON.stringify(good));
    writeFileSync(path.join(dir, 'notes.txt'), 'not a delivery file name');
    expect((await outbox.pending()).map((d) => d.file)).toEqual(['good.json']);
    expect((await outbox.damaged()).sort()).toEqual(Object.keys(bad).sort());
    expect(readdirSync(dir).sort()).toEqual(['damaged', 'good.json', 'notes.txt']);
  });

  it('delivers whenever the next delivery is due once started, and stops', async () => {
    const { sent, outbox } = recordingOutbox();
    // Due in a moment: the first pass finds it not due and waits until it is.
    const alert = initialAlert([], [], 'v', null, new Date(Date.now() + 300));
    await outbox.enqueue(alert);
    outbox.start();
    expect(sent).toEqual([]);
    await expect.poll(() => sent).toEqual([alert.id]);
    await outbox.stop();
    const later = initialAlert([], [], 'v', null, new Date());
    await outbox.enqueue(later);
    // A wait for what must not happen (a delivery after stop): a slower machine can only
    // make it weaker, never fail it wrongly.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sent).toEqual([alert.id]);
  });
});

describe('a failing channel', () => {
  it('is remembered across restarts, counts the failed attempts of one delivery, and ends with a success', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    let now = new Date('2026-11-26T00:00:00Z');
    const options = { retryBaseMs: 1000, maxAttempts: 5, now: () => now };
    let webhookUp = false;
    const senders = {
      webhook: async () => {
        if (!webhookUp) throw new Error('HTTP 502');
      },
      email: async () => undefined,
    };
    const first = new Outbox(dir, senders, options);
    await first.enqueue(initialAlert([], [], '2026.11.26', null, now));
    await first.flush();
    now = new Date(now.getTime() + 1000);
    await first.flush();
    expect(await first.troubled()).toEqual([
      { channel: 'webhook', failures: 2, since: '2026-11-26T00:00:00.000Z', lastError: 'HTTP 502' },
    ]);
    expect(await first.failing()).toEqual([]);
    // Restarted: the run goes on from where it was; the third failure makes it failing.
    const second = new Outbox(dir, senders, options);
    now = new Date(now.getTime() + 2000);
    await second.flush();
    expect(await second.failing()).toEqual([
      { channel: 'webhook', failures: 3, since: '2026-11-26T00:00:00.000Z', lastError: 'HTTP 502' },
    ]);
    // A condition about the webhook goes to the other channels only.
    const about = initialAlert([], [], '2026.11.26', null, now);
    await second.enqueue(about, ['webhook']);
    expect((await second.pending()).filter((d) => d.alert.id === about.id).map((d) => d.channel)).toEqual([
      'email',
    ]);
    webhookUp = true;
    now = new Date(now.getTime() + 4000);
    await second.flush();
    expect(await second.troubled()).toEqual([]);
    expect(await new Outbox(dir, senders, options).failing()).toEqual([]);
  });

  it('is failing after fewer failures when fewer attempts are allowed; a damaged record reads as none', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    const now = new Date('2026-11-26T00:00:00Z');
    const senders = {
      webhook: async () => {
        throw new Error('timed out');
      },
    };
    const outbox = new Outbox(dir, senders, { retryBaseMs: 1000, maxAttempts: 1, now: () => now });
    await outbox.enqueue(initialAlert([], [], '2026.11.26', null, now));
    await outbox.flush();
    expect(await outbox.failing()).toMatchObject([{ channel: 'webhook', failures: 1 }]);
    writeFileSync(path.join(dir, 'channels.state'), '{"webhook":{"failures":"many"');
    const reopened = new Outbox(dir, senders, { retryBaseMs: 1000, maxAttempts: 1, now: () => now });
    expect(await reopened.troubled()).toEqual([]);
    // The record is not a delivery: nothing was set apart as damaged.
    expect(await reopened.damaged()).toEqual([]);
  });
});
