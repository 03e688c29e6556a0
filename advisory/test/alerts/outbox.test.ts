import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { initialAlert } from '../../src/alerts/alert.ts';
import { Outbox } from '../../src/alerts/outbox.ts';

describe('the outbox', () => {
  it('sets a damaged delivery file apart, visibly, instead of skipping it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outbox-'));
    const sent: string[] = [];
    const outbox = new Outbox(
      dir,
      { webhook: async (a) => void sent.push(a.id) },
      { retryBaseMs: 10, maxAttempts: 3 },
    );
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
    for (let i = 0; i < 100 && mails.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(mails).toEqual(alerts.map((a) => a.id));
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
});
