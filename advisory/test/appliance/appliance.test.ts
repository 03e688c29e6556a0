import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Appliance } from '../../src/appliance/appliance.ts';
import { ACCEPTED_FILE } from '../../src/appliance/state.ts';
import { runFeedCli } from '../../src/cli/feed/main.ts';
import { StateError } from '../../src/feed/format/accepted-state.ts';
import {
  appliances,
  holdWidget25,
  openTest,
  publish,
  setup,
  startFeedServer,
  widgetAdvisories,
} from '../support/appliance.ts';

/**
 * The appliance's refresh: pull, verify, cache, evaluate, log; against a feed directory
 * and a local HTTP server that behaves as web servers and mirrors do, and misbehaves.
 */
const DAY = 86_400_000;
const PUBLISHED = new Date('2026-11-21T12:00:00Z');
const { open, start } = appliances(PUBLISHED);

const verdicts = (appliance: Appliance) =>
  Object.fromEntries(
    appliance.status.evaluations.map((e) => [e.asset, e.status === 'unknown' ? 'unknown' : e.verdict]),
  );

async function feedVerifies(dir: string, keyFile: string, now: Date): Promise<string> {
  const out: string[] = [];
  const code = await runFeedCli(
    ['verify', '--feed', dir, '--public-key', keyFile],
    { out: (l) => out.push(l), err: (l) => out.push(l) },
    now,
  );
  if (code !== 0) throw new Error(`advisory-feed verify of ${dir}: ${out.join('\n')}`);
  return out[0] ?? '';
}

describe('a refresh from a feed directory', () => {
  it('accepts the feed, caches it as a feed verify accepts, evaluates, and logs both', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock } = await start(s.env);
    await appliance.refresh();
    expect(appliance.status.feed).toMatchObject({
      from: 'live',
      feed: { manifest: { feed_version: '2026.11.21' } },
    });
    expect(appliance.status.lastPull?.outcome).toBe('accepted');
    expect(verdicts(appliance)).toEqual({ 'old-box': 'eol', 'new-box': 'install', 'done-box': null });
    expect(await feedVerifies(s.cacheDir, s.keyFile, clock.now())).toBe('feed 2026.11.21 OK (schema 2.0)');
    const entries = await appliance.decisions?.entries();
    expect(entries?.map((e) => e.kind)).toEqual(['feed-accepted', 'initial-evaluation']);
    expect(entries?.[1]?.data).toEqual({
      feed_version: '2026.11.21',
      verdicts: { 'old-box': 'eol', 'new-box': 'install', 'done-box': null },
      due_reminders: [],
    });
    expect(JSON.parse(readFileSync(path.join(s.stateDir, ACCEPTED_FILE), 'utf8'))).toMatchObject({
      feed_version: '2026.11.21',
    });
    expect((await appliance.decisions?.verify())?.intact).toBe(true);

    // A second refresh of the same feed: nothing new to log.
    await appliance.refresh();
    expect(appliance.status.lastPull?.outcome).toBe('unchanged');
    expect((await appliance.decisions?.entries())?.length).toBe(2);
  });

  it('logs a verdict change once, when a newer feed changes it', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock } = await start(s.env);
    await appliance.refresh();
    clock.advance(2 * DAY);
    publish(
      s,
      {
        ...widgetAdvisories,
        'widgets/hold.yaml': holdWidget25('W-HOLD-3'),
      },
      new Date(PUBLISHED.getTime() + DAY),
    );
    await appliance.refresh();
    await appliance.refresh();
    const entries = (await appliance.decisions?.entries()) ?? [];
    expect(entries.map((e) => e.kind)).toEqual([
      'feed-accepted',
      'initial-evaluation',
      'feed-accepted',
      'verdict-changed',
    ]);
    expect(entries[3]?.data).toEqual({
      asset: 'done-box',
      from: null,
      to: 'hold',
      advisories: ['W-HOLD-3'],
      feed_version: '2026.11.22',
    });
  });

  it('keeps serving the feed it has when the live one is refused, logs the refusal once, and says why', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    appendFileSync(path.join(s.feedDir, 'manifest.yaml'), '# edited\n');
    await appliance.refresh();
    await appliance.refresh();
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.21');
    expect(appliance.status.problem).toMatchObject({
      outcome: 'rejected',
      message: expect.stringMatching(/signature does not verify/),
    });
    const kinds = ((await appliance.decisions?.entries()) ?? []).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'feed-rejected')).toHaveLength(1);
    expect(verdicts(appliance)['old-box']).toBe('eol');
  });

  it('refuses an older feed (rollback) and a feed published in the future', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock } = await start(s.env);
    await appliance.refresh();
    publish(s, widgetAdvisories, new Date(PUBLISHED.getTime() - 3 * DAY));
    await appliance.refresh();
    expect(appliance.status.problem?.rejection?.reason).toBe('rollback');
    publish(s, widgetAdvisories, new Date(clock.now().getTime() + DAY));
    await appliance.refresh();
    expect(appliance.status.problem?.rejection?.reason).toBe('published-in-future');
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.21');
  });

  it('stops using a feed once it has expired, and says so', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock } = await start(s.env);
    await appliance.refresh();
    const evaluatedAt = appliance.status.evaluatedAt;
    expect(evaluatedAt).toEqual(expect.any(String));
    clock.advance(301 * DAY);
    await appliance.refresh();
    expect(appliance.status.feed).toBeNull();
    expect(appliance.status.problem?.message).toMatch(/expired/);
    // Nothing is evaluated without a feed: the last verdicts stay, with their time.
    expect(appliance.status.evaluatedAt).toBe(evaluatedAt);
    expect(Object.keys(verdicts(appliance))).toHaveLength(3);
  });
});

describe('the status', () => {
  // A read judges as of now, and changes nothing: reading twice gives the same, a status
  // read earlier stays as it was, and what is read cannot be changed through it.
  it('is a pure read: a feed past its expiry is shown expired without being taken out of use', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock } = await start(s.env);
    await appliance.refresh();
    const before = appliance.status;
    clock.advance(301 * DAY);
    const first = appliance.status;
    const second = appliance.status;
    expect(second).toEqual(first);
    expect(first.feed).toBeNull();
    expect(first.problem?.message).toMatch(/^the feed in use expired at /);
    expect(first.expired).toEqual(first.problem);
    // The status read before is a snapshot: it still shows the feed.
    expect(before.feed?.feed.manifest.feed_version).toBe('2026.11.21');
    expect(before.problem).toBeNull();
    // Nothing changed: with the clock back, the feed serves again (no refresh in between).
    clock.advance(-301 * DAY);
    expect(appliance.status).toEqual(before);
    expect(appliance.health().status).toBe('ok');
  });

  it('cannot be changed through what a reader was given', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    const read = appliance.status;
    const evaluations = read.evaluations.length;
    read.evaluations = [];
    read.feed = null;
    read.lastRefresh = null;
    expect(appliance.status.evaluations).toHaveLength(evaluations);
    expect(appliance.status.feed).not.toBeNull();
    expect(appliance.status.lastRefresh).not.toBeNull();
  });
});

describe('the cache at start', () => {
  it('is re-verified and serves while the live feed is unreachable, saying why', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const first = await start(s.env);
    await first.appliance.refresh();
    await first.appliance.stop();
    open.splice(0);
    rmSync(s.feedDir, { recursive: true });
    const { appliance } = await start(s.env);
    expect(appliance.status.feed).toMatchObject({ from: 'cache' });
    await appliance.refresh();
    expect(appliance.status.feed?.from).toBe('cache');
    expect(appliance.status.problem).toMatchObject({
      outcome: 'unreachable',
      message: expect.stringMatching(/no such feed directory/),
    });
    expect(verdicts(appliance)['new-box']).toBe('install');
  });

  it('is not used when it no longer verifies: no feed, and the reason', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const first = await start(s.env);
    await first.appliance.refresh();
    await first.appliance.stop();
    open.splice(0);
    appendFileSync(path.join(s.cacheDir, 'widgets/eol.yaml'), '# tampered\n');
    rmSync(s.feedDir, { recursive: true });
    const { appliance } = await start(s.env);
    expect(appliance.status.feed).toBeNull();
    expect(appliance.status.problem?.message).toMatch(
      /the cached feed does not verify: widgets\/eol\.yaml is larger/,
    );
    await appliance.refresh();
    expect(appliance.status.feed).toBeNull();
    expect(appliance.status.evaluations).toEqual([]);
  });

  it('leaves files beside the cache alone, whatever their names (feed.pub beside feed)', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const beside = ['feed.pub', 'feed.d/notes.txt', 'feed.1', 'feed.backup/manifest.yaml'].map((name) =>
      path.join(path.dirname(s.cacheDir), name),
    );
    for (const file of beside) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, 'mine\n');
    }
    const first = await start(s.env);
    await first.appliance.refresh();
    publish(s, widgetAdvisories, new Date(PUBLISHED.getTime() + 60_000));
    first.clock.advance(DAY);
    await first.appliance.refresh();
    await first.appliance.stop();
    open.splice(0);
    await start(s.env);
    for (const file of beside) expect(readFileSync(file, 'utf8'), file).toBe('mine\n');
    expect(await feedVerifies(s.cacheDir, s.keyFile, first.clock.now())).toMatch(/OK/);
  });

  it('refuses to start on a damaged remembered state rather than forget it', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const first = await start(s.env);
    await first.appliance.refresh();
    await first.appliance.stop();
    open.splice(0);
    for (const text of ['', '{"feed_version":"2026.11.21"}', 'not json']) {
      writeFileSync(path.join(s.stateDir, ACCEPTED_FILE), text);
      await expect(openTest(s.env)).rejects.toThrow(StateError);
    }
  });
});

describe('a refresh over HTTP', () => {
  it('asks "changed since?": an unchanged feed costs one small request and is not parsed again', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const server = await startFeedServer(s.feedDir);
    try {
      const { appliance } = await start({ ...s.env, ADVISORY_FEED_URL: server.url });
      await appliance.refresh();
      expect(appliance.status.lastPull?.outcome).toBe('accepted');
      expect(server.requests.length).toBe(4); // manifest, signature, two advisories
      const inUse = appliance.status.feed?.feed;
      server.requests.length = 0;
      await appliance.refresh();
      expect(server.requests).toEqual([{ path: '/feed/manifest.yaml', status: 304 }]);
      expect(appliance.status.lastPull?.outcome).toBe('unchanged');
      expect(appliance.status.feed?.feed).toBe(inUse);
    } finally {
      await server.close();
    }
  });

  it('follows a redirect, but not a loop; gives up on a slow server; caps an endless answer', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const server = await startFeedServer(s.feedDir);
    try {
      const { appliance } = await start({
        ...s.env,
        ADVISORY_FEED_URL: server.url,
        // Short, for the slow server below; not so short that a loaded machine misses it.
        ADVISORY_FEED_TIMEOUT: '3s',
      });
      server.mode = 'redirect-once';
      await appliance.refresh();
      expect(appliance.status.lastPull?.outcome).toBe('accepted');

      publish(s, widgetAdvisories, new Date(PUBLISHED.getTime() + 1000));
      server.mode = 'redirect-loop';
      server.requests.length = 0;
      await appliance.refresh();
      expect(appliance.status.problem).toMatchObject({
        outcome: 'unreachable',
        message: expect.stringMatching(/redirect/i),
      });
      expect(server.requests.length).toBeLessThanOrEqual(6);

      server.mode = 'slow';
      const started = Date.now();
      await appliance.refresh();
      expect(appliance.status.problem).toMatchObject({
        outcome: 'unreachable',
        message: expect.stringMatching(/timed out/),
      });
      // Ended by the configured timeout (3 s), not by anything sooner.
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
      expect(Date.now() - started).toBeLessThan(15_000);

      server.mode = 'endless';
      await appliance.refresh();
      expect(appliance.status.problem?.rejection?.reason).toBe('manifest-too-large');
      // Through all of it the accepted feed kept serving.
      expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.21');
    } finally {
      await server.close();
    }
  });

  it('ends a pull at its own deadline, however each file keeps within the request deadline', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const server = await startFeedServer(s.feedDir);
    try {
      const { appliance } = await start({
        ...s.env,
        ADVISORY_FEED_URL: server.url,
        ADVISORY_FEED_TIMEOUT: '30s',
        ADVISORY_FEED_PULL_TIMEOUT: '1s',
      });
      server.mode = 'slow-files';
      await appliance.refresh();
      expect(appliance.status.problem).toMatchObject({
        outcome: 'unreachable',
        message: expect.stringMatching(/the pull took longer than 1 s$/),
      });
      server.mode = 'normal';
      await appliance.refresh();
      expect(appliance.status.lastPull?.outcome).toBe('accepted');
    } finally {
      await server.close();
    }
  });

  it('refuses a file served larger than listed without reading it whole', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    writeFileSync(
      path.join(s.feedDir, 'widgets/eol.yaml'),
      `${readFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), 'utf8')}${'#'.repeat(5_000_000)}\n`,
    );
    const server = await startFeedServer(s.feedDir);
    try {
      const { appliance } = await start({ ...s.env, ADVISORY_FEED_URL: server.url });
      await appliance.refresh();
      expect(appliance.status.problem?.rejection).toMatchObject({
        reason: 'file-size-mismatch',
        file: 'widgets/eol.yaml',
      });
      expect(appliance.status.feed).toBeNull();
    } finally {
      await server.close();
    }
  });
});

describe('a second process on the same state', () => {
  it('may not run beside the first; a check beside it reads the cache and writes nothing', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    await expect(openTest(s.env)).rejects.toMatchObject({ code: 'ELOCKED' });
    const { openAppliance } = await import('../../src/appliance/open.ts');
    const pino = (await import('pino')).default;
    const reader = await openAppliance({
      env: s.env,
      readOnly: true,
      logger: pino({ level: 'silent' }),
      now: () => new Date(PUBLISHED.getTime() + 7_200_000),
    });
    const before = readFileSync(path.join(s.stateDir, 'decisions.jsonl'), 'utf8');
    await reader.appliance.refresh();
    expect(reader.appliance.status.readOnly).toBe(true);
    expect(Object.keys(verdicts(reader.appliance))).toHaveLength(3);
    expect(readFileSync(path.join(s.stateDir, 'decisions.jsonl'), 'utf8')).toBe(before);
    await reader.appliance.stop();
  });
});
