import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { verifyStateDir } from '../../src/decisions/store.ts';
import { Clock, holdWidget25, openTest, publish, setup, widgetAdvisories } from '../support/appliance.ts';
import { mountSmallFs, NEEDS_SMALL_FS, type SmallFs, smallFsSkip } from '../support/small-fs.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

/**
 * The appliance's state directory on a real filesystem that fills up: refreshes fail
 * while it is full, and nothing is lost or damaged. Once space is back, the appliance
 * starts, the log verifies intact (no half line, no entry twice) and every alert is sent,
 * once, under one id.
 */
describe('a full state filesystem', runsIf(!smallFsSkip, NEEDS_SMALL_FS), () => {
  let fs: SmallFs;
  let receiver: Receiver;
  beforeAll(async () => {
    fs = mountSmallFs(1024);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    fs?.unmount();
  });

  it('loses nothing and raises no false alarm across a full disk and a restart', async () => {
    const clock = new Clock(new Date('2026-11-20T00:00:00Z'));
    const s = setup({ publishedAt: new Date('2026-11-19T00:00:00Z') });
    const env = {
      ...s.env,
      ADVISORY_STATE_DIR: path.join(fs.dir, 'state'),
      ADVISORY_NOTIFY_WEBHOOK_URL: receiver.url,
    };
    const first = await openTest(env, clock);
    await first.refresh();
    expect(receiver.received.map((a) => a.kind)).toEqual(['initial']);

    // A new feed with news, pulled while the disk is full at several fill levels: the
    // refreshes fail at different steps (the remembered feed after its log entry, the
    // outbox after the verdict changes were logged), none leaves damage.
    publish(s, { ...widgetAdvisories, 'widgets/hold.yaml': holdWidget25('W-HOLD') }, clock.time);
    clock.advance(3_600_000);
    const failures: string[] = [];
    for (const leave of [0, 0, 4096, 8192, 12_288, 16_384, 20_480]) {
      fs.fill(leave);
      await first
        .refresh()
        .catch((error: NodeJS.ErrnoException) => failures.push(error.code ?? error.message));
      fs.free();
      const verification = await verifyStateDir(env.ADVISORY_STATE_DIR);
      expect(verification.breaks).toEqual([]);
    }
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((code) => code === 'ENOSPC')).toBe(true);
    await first.refresh();
    expect(first.status.lastRefreshError).toBeNull();
    await first.stop();

    const second = await openTest(env, clock);
    await second.refresh();
    await second.refresh();
    await second.stop();
    const verification = await verifyStateDir(env.ADVISORY_STATE_DIR);
    expect(verification).toMatchObject({ intact: true, unsigned: 0, breaks: [] });
    const entries = readFileSync(path.join(env.ADVISORY_STATE_DIR, 'decisions.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; data: Record<string, unknown> });
    // The new feed is logged once, and done-box's change once, however many tries it took.
    expect(entries.filter((e) => e.kind === 'feed-accepted')).toHaveLength(2);
    expect(entries.filter((e) => e.kind === 'verdict-changed').map((e) => e.data.asset)).toEqual([
      'done-box',
    ]);
    expect(receiver.received.map((a) => a.kind)).toEqual(['initial', 'changes']);
    expect(new Set(receiver.received.map((a) => a.id)).size).toBe(2);
  });
});
