import { readdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { POLL_TIMEOUT_MS } from '../../../scripts/test-wait.ts';
import type { Alert } from '../../src/alerts/alert.ts';
import { dashboardSource } from '../../src/cli/advisory/run.ts';
import {
  appliances,
  openTest,
  publish,
  setup,
  startFeedServer,
  widgetAdvisories,
} from '../support/appliance.ts';
import { serve } from '../support/dashboard.ts';
import { makeFeed } from '../support/feed.ts';
import { bodyOf, type MailServer, startMailServer, subjectOf } from '../support/smtp-server.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

/**
 * Conditions of the appliance reach operators end to end, through the outbox, on an
 * injected clock: a refused live feed with its reason, a feed about to expire and then
 * expired, a channel that keeps failing (told on the other channel), and the advice of
 * each changed verdict in the alerts themselves.
 */
const PUBLISHED = new Date('2026-11-21T12:00:00Z');
const DAY = 86_400_000;
/** setup() and publish() sign feeds valid for 300 days. */
const VALIDITY = 300 * DAY;
const calm = 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n';

const { start, stop } = appliances(PUBLISHED);
const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const server of closing.splice(0)) await server.close();
});

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  closing.push(started);
  return started;
}

async function mailServer(): Promise<MailServer> {
  const started = await startMailServer();
  closing.push(started);
  return started;
}

const conditionsOf = (alerts: Alert[]) =>
  alerts.filter((a) => a.kind === 'condition').map((a) => [a.condition?.code, a.condition?.state]);

describe('condition alerts', () => {
  it('say why the feed from the feed directory was refused: the rejection code and message, started and cleared', async () => {
    const hook = await receiver();
    const s = setup({ publishedAt: PUBLISHED, assets: calm });
    const { appliance, clock } = await start({ ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: hook.url });
    await appliance.refresh();
    // Signed by a key the appliance does not trust.
    clock.advance(DAY);
    const stranger = makeFeed(widgetAdvisories, { now: clock.time, expiresInMs: VALIDITY });
    publish({ feedDir: s.feedDir, key: stranger.key }, widgetAdvisories, clock.time);
    const refusedAt = clock.time.toISOString();
    await appliance.refresh();
    await appliance.refresh();
    clock.advance(DAY);
    publish(s, widgetAdvisories, clock.time);
    await appliance.refresh();

    const conditions = hook.received.filter((a) => a.kind === 'condition');
    expect(conditionsOf(hook.received)).toEqual([
      ['feed-refused', 'started'],
      ['feed-refused', 'cleared'],
    ]);
    const message = expect.stringMatching(
      /^the feed is signed by key [0-9a-f]{16}, which is not among the trusted keys$/,
    );
    expect(conditions[0]?.condition).toEqual({
      code: 'feed-refused',
      state: 'started',
      since: refusedAt,
      message: expect.stringMatching(
        /^the feed from the feed directory was refused: the feed is signed by key [0-9a-f]{16}/,
      ),
      rejection: { reason: 'signature-unknown-key', message, file: 'manifest.yaml.sig' },
    });
    expect(conditions[1]?.condition).toEqual({ ...conditions[0]?.condition, state: 'cleared' });
    expect(conditions[1]?.summary).toBe(`Cleared: feed-refused (since ${refusedAt})`);
  });

  it('warn of a feed about to expire, then that it expired (one alert), and clear when a newer feed comes', async () => {
    const hook = await receiver();
    const s = setup({ publishedAt: PUBLISHED, assets: calm });
    const server = await startFeedServer(s.feedDir);
    closing.push(server);
    const env = {
      ...s.env,
      ADVISORY_FEED_URL: server.url,
      ADVISORY_NOTIFY_WEBHOOK_URL: hook.url,
      ADVISORY_FEED_EXPIRY_WARNING: '10d',
      ADVISORY_FEED_MAX_AGE: '366d',
    };
    const started = await start(env);
    const clock = started.clock;
    let appliance = started.appliance;
    const expires = PUBLISHED.getTime() + VALIDITY;
    await appliance.refresh();
    clock.time = new Date(expires - 10 * DAY - 1);
    await appliance.refresh();
    expect(conditionsOf(hook.received)).toEqual([]);

    // Within the lead time: expiring, once.
    clock.time = new Date(expires - 10 * DAY);
    await appliance.refresh();
    await appliance.refresh();
    expect(conditionsOf(hook.received)).toEqual([['feed-expiring', 'started']]);
    expect(hook.received.at(-1)?.summary).toBe(
      'Needs attention: the feed in use (2026.11.21) expires at 2027-09-17T12:00:00Z, within 10d (ADVISORY_FEED_EXPIRY_WARNING), and no newer feed was accepted: without one the appliance stops evaluating then',
    );
    expect(appliance.health()).toMatchObject({ status: 'degraded', problems: [{ code: 'feed-expiring' }] });

    // Past it: expired, said once; "expiring" ends without a "cleared", which would read as good news.
    clock.time = new Date(expires);
    await appliance.refresh();
    await appliance.refresh();
    expect(conditionsOf(hook.received)).toEqual([
      ['feed-expiring', 'started'],
      ['feed-expired', 'started'],
    ]);
    expect(hook.received.at(-1)?.summary).toBe(
      'Needs attention: the feed in use expired at 2027-09-17T12:00:00Z and no fresher feed was accepted',
    );
    expect(appliance.health()).toMatchObject({ status: 'down', problems: [{ code: 'feed-expired' }] });

    // The feed host gone meanwhile, or a restart on the expired cache: still expired, no news.
    server.mode = 'down';
    clock.advance(3_600_000);
    await appliance.refresh();
    expect(appliance.health()).toMatchObject({
      status: 'down',
      problems: [{ code: 'feed-expired' }, { code: 'feed-unreachable' }],
    });
    await stop(appliance);
    const restarted = await start(env, clock);
    await restarted.appliance.refresh();
    expect(restarted.appliance.health()).toMatchObject({
      status: 'down',
      problems: [
        {
          code: 'feed-expired',
          message: expect.stringMatching(/^the cached feed does not verify: .*expired/),
        },
        { code: 'feed-unreachable', message: expect.stringMatching(/HTTP 503$/) },
      ],
    });
    expect(conditionsOf(hook.received)).toEqual([
      ['feed-expiring', 'started'],
      ['feed-expired', 'started'],
    ]);
    appliance = restarted.appliance;
    server.mode = 'normal';

    // A newer feed ends it.
    clock.advance(DAY);
    publish(s, widgetAdvisories, clock.time);
    await appliance.refresh();
    expect(conditionsOf(hook.received)).toEqual([
      ['feed-expiring', 'started'],
      ['feed-expired', 'started'],
      ['feed-expired', 'cleared'],
    ]);
    expect(appliance.health()).toEqual({ status: 'ok', problems: [] });

    // Expiring again, and a newer feed in time clears it.
    clock.time = new Date(clock.time.getTime() + VALIDITY - 5 * DAY);
    await appliance.refresh();
    publish(s, widgetAdvisories, clock.time);
    await appliance.refresh();
    expect(conditionsOf(hook.received).slice(3)).toEqual([
      ['feed-expiring', 'started'],
      ['feed-expiring', 'cleared'],
    ]);
  });

  it('tell the mail recipients that the webhook keeps failing, never the webhook, and that it works again', async () => {
    const hook = await receiver();
    const mail = await mailServer();
    hook.script = Array(20).fill(500);
    const s = setup({ publishedAt: PUBLISHED, assets: calm });
    const env = { ...s.env, ...mail.env, ADVISORY_NOTIFY_WEBHOOK_URL: hook.url, ADVISORY_ALERT_RETRY: '10s' };
    const { appliance, clock, log } = await start(env);
    await appliance.refresh();
    expect(mail.mails.map(subjectOf)).toEqual(['[advisory] First evaluation of 1 asset: no verdicts']);
    // An alert that failed twice is not yet "failing": retries are normal.
    clock.advance(10_000);
    await appliance.refresh();
    expect(hook.attempts).toBe(2);
    expect(appliance.health()).toEqual({ status: 'ok', problems: [] });
    const firstFailure = new Date(clock.time.getTime() - 10_000).toISOString();
    clock.advance(20_000);
    await appliance.refresh();
    expect(hook.attempts).toBe(3);

    // The third: failing, announced by mail at once.
    const message = `alert delivery by webhook keeps failing since ${firstFailure}: an alert failed 3 attempts, the last: HTTP 500`;
    expect(appliance.health()).toEqual({
      status: 'degraded',
      problems: [{ code: 'alerts-failing-webhook', channel: 'webhook', message }],
    });
    expect(mail.mails.map(subjectOf).slice(1)).toEqual([`[advisory] Needs attention: ${message}`]);
    const failingAt = clock.time.toISOString();
    expect(bodyOf(mail.mails[1] as (typeof mail.mails)[number])).toContain(
      `Condition: alerts-failing-webhook, started (in effect since ${failingAt}).`,
    );
    // Nothing of it queued for the webhook: only the first alert waits there.
    expect((await appliance.outbox.pending()).map((d) => [d.channel, d.alert.kind])).toEqual([
      ['webhook', 'initial'],
    ]);
    // The dashboard shows it on every page and /health lists it.
    const served = await serve(dashboardSource(appliance, []), { now: clock.now });
    try {
      const page = await (await fetch(`${served.url}/`)).text();
      expect(page).toContain('data-problem="alerts-failing-webhook"');
      expect(await (await fetch(`${served.url}/health`)).json()).toMatchObject({
        status: 'degraded',
        problems: [{ code: 'alerts-failing-webhook', channel: 'webhook', message }],
      });
    } finally {
      await served.close();
    }
    // Every failed attempt was logged, with the channel and the reason.
    expect(log.messages().filter((m) => m.startsWith('alert delivery by webhook f'))).toEqual([
      'alert delivery by webhook failed: HTTP 500',
      'alert delivery by webhook failed: HTTP 500',
      'alert delivery by webhook failed: HTTP 500',
    ]);

    // The receiver takes deliveries again: the waiting alert goes, the mail says it works.
    hook.script = [];
    clock.advance(40_000);
    await appliance.refresh();
    expect(hook.received.map((a) => a.kind)).toEqual(['initial']);
    expect(appliance.health()).toEqual({ status: 'ok', problems: [] });
    expect(mail.mails.map(subjectOf).slice(2)).toEqual([
      `[advisory] Cleared: alerts-failing-webhook (since ${failingAt})`,
    ]);
    expect(log.messages()).toContain('alert delivery by webhook works again');
  });

  it("are judged after the daemon's own delivery attempts too, not only at the next refresh", async () => {
    const hook = await receiver();
    const mail = await mailServer();
    hook.script = Array(20).fill(500);
    const s = setup({ publishedAt: new Date(Date.now() - DAY), assets: calm });
    // The real clock: retries after 1 s and 2 s, so the third failure comes about 3 s in.
    const appliance = await openTest({
      ...s.env,
      ...mail.env,
      ADVISORY_NOTIFY_WEBHOOK_URL: hook.url,
      ADVISORY_ALERT_RETRY: '1s',
    });
    try {
      appliance.start();
      await vi.waitFor(
        () =>
          expect(mail.mails.map(subjectOf).at(-1)).toMatch(
            /^\[advisory\] Needs attention: alert delivery by webhook keeps failing since \S+: an alert failed 3 attempts/,
          ),
        { timeout: POLL_TIMEOUT_MS, interval: 100 },
      );
      expect(hook.attempts).toBe(3);
      // Nothing judged before the first refresh pulled the feed (no "no feed" alert).
      expect(mail.mails.map(subjectOf)).toEqual([
        '[advisory] First evaluation of 1 asset: no verdicts',
        expect.stringMatching(/^\[advisory\] Needs attention: alert delivery by webhook keeps failing/),
      ]);
    } finally {
      await appliance.stop();
    }
  });

  it('tell the webhook that mail keeps being refused (a delivery given up counts), until a mail goes through', async () => {
    const hook = await receiver();
    const mail = await mailServer();
    mail.refuse = true;
    const s = setup({ publishedAt: PUBLISHED, assets: calm });
    const env = {
      ...s.env,
      ...mail.env,
      ADVISORY_NOTIFY_WEBHOOK_URL: hook.url,
      ADVISORY_ALERT_RETRY: '10s',
      ADVISORY_ALERT_ATTEMPTS: '2',
    };
    const { appliance, clock } = await start(env);
    await appliance.refresh();
    clock.advance(10_000);
    await appliance.refresh();
    // Two attempts allowed, both refused: given up, and the channel is failing.
    expect(await appliance.outbox.failed()).toMatchObject([
      { channel: 'email', attempts: 2, lastError: expect.stringMatching(/550 relay access denied/) },
    ]);
    expect(conditionsOf(hook.received)).toEqual([['alerts-failing-email', 'started']]);
    expect(hook.received.at(-1)?.condition).toMatchObject({
      code: 'alerts-failing-email',
      channel: 'email',
      message: expect.stringMatching(
        /^alert delivery by e-mail keeps failing since \S+: an alert failed 2 attempts, the last: .*550 relay access denied/,
      ),
    });
    expect(mail.mails).toEqual([]);

    // Still failing: no repeat. Then the next alert's mail goes through, and that is news.
    clock.advance(DAY);
    await appliance.refresh();
    expect(conditionsOf(hook.received)).toEqual([['alerts-failing-email', 'started']]);
    mail.refuse = false;
    writeFileSync(s.inventoryFile, `${calm}  - { name: new-box, products: { widget: "2.1" } }\n`);
    await appliance.refresh();
    expect(mail.mails.map(subjectOf)).toEqual(['[advisory] 1 verdict change']);
    expect(conditionsOf(hook.received)).toEqual([
      ['alerts-failing-email', 'started'],
      ['alerts-failing-email', 'cleared'],
    ]);
    expect(appliance.health().problems).toEqual([]);
    expect(readdirSync(appliance.outbox.dir)).toContain('channels.state');
  });
});

describe('the advice in alerts', () => {
  it("gives each changed verdict its advisory's id, title, summary, references and CVE records", async () => {
    const hook = await receiver();
    const mail = await mailServer();
    const s = setup({ publishedAt: PUBLISHED, assets: calm });
    const { appliance } = await start({ ...s.env, ...mail.env, ADVISORY_NOTIFY_WEBHOOK_URL: hook.url });
    await appliance.refresh();
    writeFileSync(s.inventoryFile, `${calm}  - { name: new-box, products: { widget: "2.1" } }\n`);
    await appliance.refresh();
    const [, changes] = hook.received;
    expect(changes).toEqual({
      id: expect.any(String),
      kind: 'changes',
      at: '2026-11-21T13:00:00.000Z',
      summary: '1 verdict change',
      feedVersion: '2026.11.21',
      changes: [
        {
          asset: 'new-box',
          from: null,
          to: 'install',
          advisories: [
            {
              id: 'W-2.5',
              title: 'Widget 2.5',
              verdict: 'install',
              summary: 'Something happened.',
              references: ['https://example.org/advisory'],
              cves: [{ id: 'CVE-2026-0001', url: 'https://www.cve.org/CVERecord?id=CVE-2026-0001' }],
            },
          ],
        },
      ],
      reminders: [],
      verdicts: [],
      checkpoint: expect.objectContaining({ size: expect.any(Number) }),
    });
    expect(bodyOf(mail.mails[1] as (typeof mail.mails)[number])).toContain(
      [
        'new-box: no verdict -> install',
        '  install: Widget 2.5 (W-2.5)',
        '    Something happened.',
        '    CVE-2026-0001: https://www.cve.org/CVERecord?id=CVE-2026-0001',
        '    https://example.org/advisory',
      ].join('\n'),
    );
  });
});
