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
});
