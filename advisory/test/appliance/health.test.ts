import { renameSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Clock, openTest, publish, setup, startFeedServer, widgetAdvisories } from '../support/appliance.ts';
import { runAdvisory } from '../support/cli.ts';
import { makeFeed } from '../support/feed.ts';
import { startReceiver } from '../support/webhook-receiver.ts';

const DAY = 86_400_000;
const PUBLISHED = new Date('2026-11-21T12:00:00Z');
/** One asset on the recommended version: nothing needs action while the appliance is well. */
const calm = 'assets:\n  - { name: done-box, products: { widget: "2.5" } }\n';

const check = (env: NodeJS.ProcessEnv) => runAdvisory(['check'], env);

/**
 * Monitoring sees what the dashboard sees: a refused live feed, a stale feed and an expiry
 * make `advisory check` exit non-zero with the reason, the moment they hold.
 */
describe('honest status', () => {
  it('advisory check exits 1 with the reason while a refused live feed leaves the last good one serving', async () => {
    const s = setup({ publishedAt: new Date(Date.now() - DAY), assets: calm });
    expect(await check(s.env)).toMatchObject({ code: 0 });
    // Signed by a key the appliance does not trust.
    const stranger = makeFeed(widgetAdvisories, {
      now: new Date(Date.now() - 3_600_000),
      expiresInMs: 300 * DAY,
    });
    publish({ feedDir: s.feedDir, key: stranger.key }, widgetAdvisories, new Date(Date.now() - 3_600_000));
    const refused = await check(s.env);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/^feed \S+ from the cache/m);
    expect(refused.out).toMatch(
      /^warning: the feed is signed by key [0-9a-f]{16}, which is not among the trusted keys$/m,
    );
    expect(refused.out).toMatch(/^the appliance needs attention: feed-refused$/m);
  });

  it('takes a feed out of service the moment it expires, without a refresh', async () => {
    const s = setup({ publishedAt: PUBLISHED, assets: calm });
    const clock = new Clock(new Date(PUBLISHED.getTime() + DAY));
    const appliance = await openTest(s.env, clock);
    try {
      await appliance.refresh();
      expect(appliance.health()).toEqual({ status: 'ok', problems: [] });
      const expires = Date.parse(appliance.status.feed?.feed.manifest.expires_at ?? '');
      clock.time = new Date(expires - 1);
      expect(appliance.status.feed).not.toBeNull();
      clock.time = new Date(expires);
      expect(appliance.status.feed).toBeNull();
      expect(appliance.health()).toMatchObject({ status: 'down', problems: [{ code: 'feed-expired' }] });
      expect(appliance.status.problem?.message).toMatch(/expired at/);
    } finally {
      await appliance.stop();
    }
  });

  it('says the feed is stale when the host answers "not modified" for ever', async () => {
    const s = setup({ publishedAt: PUBLISHED, assets: calm });
    const server = await startFeedServer(s.feedDir);
    const clock = new Clock(new Date(PUBLISHED.getTime() + DAY));
    const appliance = await openTest(
      { ...s.env, ADVISORY_FEED_URL: server.url, ADVISORY_FEED_MAX_AGE: '7d' },
      clock,
    );
    try {
      await appliance.refresh();
      clock.advance(5 * DAY);
      await appliance.refresh();
      expect(server.requests.at(-1)?.status).toBe(304);
      expect(appliance.health().status).toBe('ok');
      clock.advance(2 * DAY);
      await appliance.refresh();
      expect(server.requests.at(-1)?.status).toBe(304);
      expect(appliance.status.feed?.from).toBe('live');
      expect(appliance.health()).toMatchObject({
        status: 'degraded',
        problems: [
          { code: 'feed-stale', message: expect.stringMatching(/published at 2026-11-21T12:00:00Z/) },
        ],
      });
      // A fresher feed clears it.
      publish(s, widgetAdvisories, clock.time);
      await appliance.refresh();
      expect(appliance.health()).toEqual({ status: 'ok', problems: [] });
    } finally {
      await appliance.stop();
      await server.close();
    }
  });

  it('alerts a refused live feed once when it starts and once when it clears', async () => {
    const receiver = await startReceiver();
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const env = { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: receiver.url };
    try {
      expect((await check(env)).code).toBe(0);
      const stranger = makeFeed(widgetAdvisories, {
        now: new Date(Date.now() - 3_600_000),
        expiresInMs: 300 * DAY,
      });
      publish({ feedDir: s.feedDir, key: stranger.key }, widgetAdvisories, new Date(Date.now() - 3_600_000));
      expect((await check(env)).code).toBe(1);
      expect((await check(env)).code).toBe(1);
      publish(s, widgetAdvisories, new Date(Date.now() - 60_000));
      expect((await check(env)).code).toBe(0);
      const conditions = receiver.received.filter((a) => a.kind === 'condition');
      expect(conditions.map((a) => [a.condition?.code, a.condition?.state])).toEqual([
        ['feed-refused', 'started'],
        ['feed-refused', 'cleared'],
      ]);
      expect(conditions[0]?.summary).toMatch(
        /^Needs attention: the feed from the feed directory was refused: the feed is signed by key [0-9a-f]{16}, which is not among the trusted keys$/,
      );
      expect(conditions[1]?.summary).toMatch(/^Cleared: feed-refused \(since /);
    } finally {
      await receiver.close();
    }
  });

  it('keeps a refused feed alarmed while the host cannot be reached, across restarts, until a feed is accepted', async () => {
    const receiver = await startReceiver();
    const s = setup({ publishedAt: new Date(Date.now() - 86_400_000), assets: calm });
    const env = { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: receiver.url };
    const blocked = `${s.feedDir}.blocked`;
    try {
      expect((await check(env)).code).toBe(0);
      const stranger = makeFeed(widgetAdvisories, {
        now: new Date(Date.now() - 3_600_000),
        expiresInMs: 300 * DAY,
      });
      publish({ feedDir: s.feedDir, key: stranger.key }, widgetAdvisories, new Date(Date.now() - 3_600_000));
      expect((await check(env)).code).toBe(1);
      // The host is blocked: each check is a new process, as after a restart.
      renameSync(s.feedDir, blocked);
      for (let i = 0; i < 2; i++) {
        const blockedRun = await runAdvisory(['check', '--json'], env);
        expect(blockedRun.code).toBe(1);
        const codes = (
          JSON.parse(blockedRun.out) as { health: { problems: { code: string }[] } }
        ).health.problems.map((p) => p.code);
        expect(codes).toEqual(['feed-refused', 'feed-unreachable']);
      }
      const table = await check(env);
      expect(table.out).toMatch(/^warning: .*no such feed directory$/m);
      expect(table.out).toMatch(
        /^warning: the feed from the feed directory was refused: the feed is signed by key/m,
      );
      renameSync(blocked, s.feedDir);
      publish(s, widgetAdvisories, new Date(Date.now() - 60_000));
      expect((await check(env)).code).toBe(0);
      const conditions = receiver.received.filter((a) => a.kind === 'condition');
      expect(conditions.map((a) => [a.condition?.code, a.condition?.state])).toEqual([
        ['feed-refused', 'started'],
        ['feed-refused', 'cleared'],
      ]);
    } finally {
      await receiver.close();
    }
  });
});
