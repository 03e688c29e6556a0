import { appendFileSync, cpSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Appliance } from '../../src/appliance/appliance.ts';
import { ACCEPTED_FILE } from '../../src/appliance/state.ts';
import { keyId } from '../../src/crypto/signify.ts';
import {
  appliances,
  Clock,
  capturingLogger,
  holdWidget25,
  publish,
  type Setup,
  setup,
  startFeedServer,
  widgetAdvisories,
} from '../support/appliance.ts';
import { startReceiver } from '../support/webhook-receiver.ts';

/**
 * The feed keeper (appliance/feed-keeper.ts) through the appliance: what it logs in the
 * decision log and for the operator, how it catches up an acceptance a crash left half
 * recorded, when it asks "changed since?", and the instant a feed expires.
 */
const DAY = 86_400_000;
const PUBLISHED = new Date('2026-11-21T12:00:00Z');
const { open, start, stop } = appliances(PUBLISHED);

const entries = async (appliance: Appliance) => (await appliance.decisions?.entries()) ?? [];
const manifestOf = (s: Setup) => readFileSync(path.join(s.feedDir, 'manifest.yaml'), 'utf8');
const sha256Of = async (s: Setup) =>
  (await import('node:crypto'))
    .createHash('sha256')
    .update(readFileSync(path.join(s.feedDir, 'manifest.yaml')))
    .digest('hex');

describe('an accepted feed', () => {
  it('is logged with what identifies it, and reported to the operator', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, log } = await start(s.env);
    await appliance.refresh();
    const [accepted] = await entries(appliance);
    const expires = /expires_at: "?([^"\n]+)"?/.exec(manifestOf(s))?.[1];
    expect(accepted?.data).toEqual({
      feed_version: '2026.11.21',
      published_at: PUBLISHED.toISOString().replace('.000Z', 'Z'),
      expires_at: expires,
      manifest_sha256: await sha256Of(s),
      signed_by: [keyId(s.key.publicKey.keynum)],
      advisories: 2,
      source: s.feedDir,
    });
    expect(log.lines.find((l) => l.msg === 'feed accepted')).toMatchObject({
      level: 30,
      feed: '2026.11.21',
      advisories: 2,
    });
    expect(appliance.status.lastPull).toEqual({
      at: '2026-11-21T13:00:00.000Z',
      outcome: 'accepted',
      message: 'feed 2026.11.21 accepted',
    });
    expect(appliance.status.problem).toBeNull();
  });
});

describe('a refused feed', () => {
  it('is logged once per reason and manifest, with the file at fault, and the refusal clears on acceptance', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock, log } = await start(s.env);
    await appliance.refresh();
    // A new feed with a file changed after signing: the file is at fault. It is one the
    // new feed revised: a file equal to the feed in use's is taken from the cache and
    // never read from the source (appliance/feed-results.test.ts).
    const revised = {
      ...widgetAdvisories,
      'widgets/eol.yaml': `${widgetAdvisories['widgets/eol.yaml']}# revised\n`,
    };
    clock.advance(DAY);
    publish(s, revised, new Date(PUBLISHED.getTime() + DAY));
    appendFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), '# edited\n');
    await appliance.refresh();
    await appliance.refresh();
    const refusals = (await entries(appliance)).filter((e) => e.kind === 'feed-rejected');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.data).toEqual({
      reason: 'file-size-mismatch',
      message: expect.stringMatching(/^widgets\/eol\.yaml is larger/),
      file: 'widgets/eol.yaml',
      manifest_sha256: await sha256Of(s),
      source: s.feedDir,
    });
    expect(log.lines.filter((l) => l.msg === 'feed rejected')).toHaveLength(2);
    expect(log.lines.find((l) => l.msg === 'feed rejected')).toMatchObject({
      level: 40,
      reason: 'file-size-mismatch',
    });
    expect(appliance.status.problem).toMatchObject({
      outcome: 'rejected',
      rejection: { reason: 'file-size-mismatch' },
    });
    expect(appliance.status.lastPull).toBe(appliance.status.problem);

    // The same reason for another manifest is news again.
    publish(s, revised, new Date(PUBLISHED.getTime() + DAY + 1000));
    appendFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), '# edited\n');
    await appliance.refresh();
    expect((await entries(appliance)).filter((e) => e.kind === 'feed-rejected')).toHaveLength(2);

    // A bad signature names the manifest it did not vouch for, and the signature file.
    writeFileSync(path.join(s.feedDir, 'manifest.yaml.sig'), 'not a signature\n');
    await appliance.refresh();
    const last = (await entries(appliance)).at(-1);
    expect(last?.kind).toBe('feed-rejected');
    expect(last?.data).toMatchObject({ file: 'manifest.yaml.sig', manifest_sha256: await sha256Of(s) });

    publish(s, widgetAdvisories, new Date(PUBLISHED.getTime() + DAY + 2000));
    await appliance.refresh();
    expect(appliance.status.problem).toBeNull();
    expect(appliance.status.lastPull?.outcome).toBe('accepted');
  });

  it('is reported as unreachable when the feed cannot be read, and the operator is told', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, log } = await start(s.env);
    await appliance.refresh();
    rmSync(s.feedDir, { recursive: true });
    await appliance.refresh();
    expect(appliance.status.problem).toMatchObject({
      outcome: 'unreachable',
      at: '2026-11-21T13:00:00.000Z',
    });
    expect(appliance.status.lastPull).toBe(appliance.status.problem);
    expect(log.lines.find((l) => l.msg === 'feed unreachable')).toMatchObject({
      level: 40,
      problem: appliance.status.problem?.message,
    });
    expect((await entries(appliance)).map((e) => e.kind)).toEqual(['feed-accepted', 'initial-evaluation']);
  });
});

describe('an acceptance a crash left half recorded', () => {
  /** The state directory as it was after the first feed, with the cache of the second. */
  async function crashAfterCaching(s: Setup) {
    const first = await start(s.env);
    await first.appliance.refresh();
    await stop(first.appliance);
    const before = path.join(s.dir, 'state-before');
    cpSync(s.stateDir, before, { recursive: true });
    publish(
      s,
      { ...widgetAdvisories, 'widgets/hold.yaml': holdWidget25('W-HOLD-3') },
      new Date(PUBLISHED.getTime() + DAY),
    );
    const second = await start(s.env, new Clock(new Date(PUBLISHED.getTime() + 2 * DAY)));
    await second.appliance.refresh();
    await stop(second.appliance);
    return before;
  }

  it('is logged and remembered at the next start when neither was done', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const before = await crashAfterCaching(s);
    rmSync(s.stateDir, { recursive: true });
    cpSync(before, s.stateDir, { recursive: true });
    rmSync(s.feedDir, { recursive: true }); // the live feed is gone: only the cache can tell
    const { appliance, log } = await start(s.env, new Clock(new Date(PUBLISHED.getTime() + 2 * DAY)));
    expect(appliance.status.feed).toMatchObject({
      from: 'cache',
      feed: { manifest: { feed_version: '2026.11.22' } },
    });
    expect(log.lines.find((l) => l.msg === 'cached feed verified')).toMatchObject({ feed: '2026.11.22' });
    const accepted = (await entries(appliance)).filter((e) => e.kind === 'feed-accepted');
    expect(accepted.map((e) => e.data.feed_version)).toEqual(['2026.11.21', '2026.11.22']);
    expect(JSON.parse(readFileSync(path.join(s.stateDir, ACCEPTED_FILE), 'utf8'))).toMatchObject({
      feed_version: '2026.11.22',
    });
    expect((await appliance.decisions?.verify())?.intact).toBe(true);
  });

  it('is only remembered when the log has it already: never logged twice', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const before = await crashAfterCaching(s);
    // The log entry was written; the remembered state was not.
    cpSync(path.join(before, ACCEPTED_FILE), path.join(s.stateDir, ACCEPTED_FILE));
    const { appliance } = await start(s.env, new Clock(new Date(PUBLISHED.getTime() + 2 * DAY)));
    const accepted = (await entries(appliance)).filter((e) => e.kind === 'feed-accepted');
    expect(accepted.map((e) => e.data.feed_version)).toEqual(['2026.11.21', '2026.11.22']);
    expect(JSON.parse(readFileSync(path.join(s.stateDir, ACCEPTED_FILE), 'utf8'))).toMatchObject({
      feed_version: '2026.11.22',
    });
  });

  it('is left alone by a read-only check beside the daemon', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const before = await crashAfterCaching(s);
    cpSync(path.join(before, ACCEPTED_FILE), path.join(s.stateDir, ACCEPTED_FILE));
    const remembered = readFileSync(path.join(s.stateDir, ACCEPTED_FILE), 'utf8');
    const { openAppliance } = await import('../../src/appliance/open.ts');
    const { appliance } = await openAppliance({
      env: s.env,
      readOnly: true,
      logger: capturingLogger().logger,
      now: () => new Date(PUBLISHED.getTime() + 2 * DAY),
    });
    open.push(appliance);
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.22');
    expect(readFileSync(path.join(s.stateDir, ACCEPTED_FILE), 'utf8')).toBe(remembered);
  });

  it('reports a cache that no longer verifies to the operator', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const first = await start(s.env);
    await first.appliance.refresh();
    await stop(first.appliance);
    appendFileSync(path.join(s.cacheDir, 'widgets/eol.yaml'), '# tampered\n');
    const { log } = await start(s.env);
    expect(log.lines.find((l) => l.msg === 'cached feed refused')).toMatchObject({
      level: 40,
      problem: expect.stringMatching(/^widgets\/eol\.yaml is larger/),
    });
  });
});

describe('tampering the appliance would otherwise only log', () => {
  it('a cache that does not verify at start is a problem, alerted, after a live feed replaced it too', async () => {
    const receiver = await startReceiver();
    try {
      const s = setup({ publishedAt: PUBLISHED });
      const env = { ...s.env, ADVISORY_NOTIFY_WEBHOOK_URL: receiver.url };
      const first = await start(env);
      await first.appliance.refresh();
      await stop(first.appliance);
      appendFileSync(path.join(s.cacheDir, 'widgets/eol.yaml'), '# tampered\n');
      const { appliance } = await start(env);
      await appliance.refresh();
      expect(appliance.status.feed?.from).toBe('live');
      const health = appliance.health();
      expect(health.status).toBe('degraded');
      expect(health.problems).toEqual([
        {
          code: 'cache-refused',
          message: expect.stringMatching(
            /^the cached feed does not verify: widgets\/eol\.yaml is larger.*\(found at /,
          ),
          rejection: expect.objectContaining({ reason: 'file-size-mismatch', file: 'widgets/eol.yaml' }),
        },
      ]);
      expect(
        receiver.received
          .filter((a) => a.kind === 'condition')
          .map((a) => [a.condition?.code, a.condition?.state]),
      ).toEqual([['cache-refused', 'started']]);
      // Restarted on the cache the live feed rewrote: it verifies, and the alarm clears.
      await stop(appliance);
      const restarted = await start(env);
      await restarted.appliance.refresh();
      expect(restarted.appliance.health().status).toBe('ok');
      expect(receiver.received.filter((a) => a.kind === 'condition').at(-1)?.condition).toMatchObject({
        code: 'cache-refused',
        state: 'cleared',
      });
    } finally {
      await receiver.close();
    }
  });

  it('a cache that expired is feed-expired, not tampering', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const first = await start(s.env);
    await first.appliance.refresh();
    await stop(first.appliance);
    rmSync(s.feedDir, { recursive: true });
    const { appliance } = await start(s.env, new Clock(new Date(PUBLISHED.getTime() + 400 * DAY)));
    await appliance.refresh();
    expect(appliance.health().problems.map((p) => p.code)).toEqual(['feed-expired', 'feed-unreachable']);
  });

  it('a feed with the manifest in use and another, broken signature is refused, never "unchanged"', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    const sig = path.join(s.feedDir, 'manifest.yaml.sig');
    const lines = readFileSync(sig, 'utf8').split('\n');
    // The signature line, one byte of it changed (still base64 of the right length).
    lines[1] = `${lines[1]?.slice(0, 20)}${lines[1]?.[20] === 'A' ? 'B' : 'A'}${lines[1]?.slice(21)}`;
    writeFileSync(sig, lines.join('\n'));
    await appliance.refresh();
    expect(appliance.status.lastPull).toMatchObject({
      outcome: 'rejected',
      rejection: { reason: 'signature-invalid' },
    });
    expect(appliance.health().problems.map((p) => p.code)).toEqual(['feed-refused']);
    // The feed in use keeps serving.
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.21');
  });
});

describe('"changed since?" over HTTP', () => {
  it('refuses a 304 to a request without validators: a fresh appliance says why it has no feed', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const server = await startFeedServer(s.feedDir);
    server.mode = 'always-304';
    try {
      const { appliance } = await start({ ...s.env, ADVISORY_FEED_URL: server.url });
      await appliance.refresh();
      expect(server.requests).toEqual([{ path: '/feed/manifest.yaml', status: 304 }]);
      expect(appliance.status.feed).toBeNull();
      expect(appliance.status.lastPull).toMatchObject({
        outcome: 'rejected',
        rejection: { reason: 'not-modified-unasked', file: 'manifest.yaml' },
        message: expect.stringMatching(/answered 304 Not Modified to a request without validators/),
      });
      expect(appliance.health().problems).toEqual([
        {
          code: 'no-feed',
          message: expect.stringMatching(/^http:.*manifest\.yaml: the feed host answered 304/),
        },
      ]);
      expect((await entries(appliance)).map((e) => [e.kind, e.data.reason])).toEqual([
        ['feed-rejected', 'not-modified-unasked'],
      ]);
    } finally {
      await server.close();
    }
  });

  it('refuses a 304 to an unconditional pull while the cache serves: never "from the live feed"', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const server = await startFeedServer(s.feedDir);
    try {
      const env = { ...s.env, ADVISORY_FEED_URL: server.url };
      const first = await start(env);
      await first.appliance.refresh();
      await stop(first.appliance);
      // No validators remembered (pull.json lost): the next pull asks unconditionally.
      rmSync(path.join(s.stateDir, 'pull.json'));
      server.mode = 'always-304';
      const { appliance } = await start(env);
      await appliance.refresh();
      expect(appliance.status.feed?.from).toBe('cache');
      expect(appliance.status.lastPull?.rejection?.reason).toBe('not-modified-unasked');
      expect(appliance.health().problems.map((p) => p.code)).toEqual(['feed-refused']);
    } finally {
      await server.close();
    }
  });

  it('remembers new validators for the same manifest (another mirror), and asks with them next time', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const server = await startFeedServer(s.feedDir);
    try {
      const { appliance } = await start({ ...s.env, ADVISORY_FEED_URL: server.url });
      await appliance.refresh();
      server.etagSalt = 'mirror-b-';
      server.requests.length = 0;
      await appliance.refresh();
      expect(server.requests).toEqual([
        { path: '/feed/manifest.yaml', status: 200 },
        { path: '/feed/manifest.yaml.sig', status: 200 },
      ]);
      expect(appliance.status.lastPull?.outcome).toBe('unchanged');
      const pull = JSON.parse(readFileSync(path.join(s.stateDir, 'pull.json'), 'utf8'));
      expect(pull.validators.etag).toMatch(/^"mirror-b-/);
      server.requests.length = 0;
      await appliance.refresh();
      expect(server.requests).toEqual([{ path: '/feed/manifest.yaml', status: 304 }]);
      // A 304 to a request with validators is "unchanged", the one legitimate meaning.
      expect(appliance.status.lastPull?.outcome).toBe('unchanged');
      expect(appliance.health().status).toBe('ok');
    } finally {
      await server.close();
    }
  });

  it('asks unconditionally while the feed in use is not the accepted one (a cache refused)', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const server = await startFeedServer(s.feedDir);
    try {
      const env = { ...s.env, ADVISORY_FEED_URL: server.url };
      const first = await start(env);
      await first.appliance.refresh();
      await stop(first.appliance);
      appendFileSync(path.join(s.cacheDir, 'widgets/eol.yaml'), '# tampered\n');
      const { appliance } = await start(env);
      expect(appliance.status.feed).toBeNull();
      server.requests.length = 0;
      await appliance.refresh();
      expect(server.requests[0]).toEqual({ path: '/feed/manifest.yaml', status: 200 });
      expect(appliance.status.feed?.from).toBe('live');
    } finally {
      await server.close();
    }
  });
});

describe('a feed refused before its manifest was read', () => {
  it('is logged without a manifest hash', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    rmSync(path.join(s.feedDir, 'manifest.yaml'));
    const { appliance } = await start(s.env);
    await appliance.refresh();
    const [refusal] = await entries(appliance);
    expect(refusal).toMatchObject({ kind: 'feed-rejected' });
    expect(refusal?.data).toEqual({
      reason: 'manifest-missing',
      message: 'manifest.yaml is missing',
      file: 'manifest.yaml',
      source: s.feedDir,
    });
  });
});

describe('expiry', () => {
  it('takes the feed out of use at the instant it expires, not a millisecond before', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock } = await start(s.env);
    await appliance.refresh();
    const expiresAt = appliance.status.feed?.feed.manifest.expires_at ?? '';
    clock.time = new Date(Date.parse(expiresAt) - 1);
    expect(appliance.status.feed).not.toBeNull();
    expect(appliance.status.problem).toBeNull();
    clock.time = new Date(Date.parse(expiresAt));
    expect(appliance.status.feed).toBeNull();
    const message = `the feed in use expired at ${expiresAt} and no fresher feed was accepted`;
    expect(appliance.status.problem).toEqual({
      at: clock.time.toISOString(),
      outcome: 'rejected',
      message,
      rejection: { reason: 'expired', message },
    });
    // The last pull is what it was: expiry is not a pull.
    expect(appliance.status.lastPull?.outcome).toBe('accepted');
  });
});

describe('out-of-band releases on the same day', () => {
  it('an appliance that accepted 2026.11.26 accepts 2026.11.26.1, then refuses 2026.11.26 and another 2026.11.26.1', async () => {
    const regular = new Date('2026-11-26T08:00:00Z');
    const s = setup({ publishedAt: regular });
    const { appliance, clock } = await start(s.env, new Clock(new Date('2026-11-26T09:00:00Z')));
    await appliance.refresh();
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.26');
    const doneBox = () => appliance.status.evaluations.find((e) => e.asset === 'done-box')?.verdict ?? null;
    expect(doneBox()).toBeNull();

    // An urgent hold on widget 2.5, published out of band the same day.
    clock.time = new Date('2026-11-26T11:00:00Z');
    const urgent = { ...widgetAdvisories, 'widgets/hold.yaml': holdWidget25('W-HOLD-2.5') };
    publish(s, urgent, new Date('2026-11-26T10:30:00Z'), '2026.11.26.1');
    await appliance.refresh();
    expect(appliance.status.lastPull).toEqual({
      at: '2026-11-26T11:00:00.000Z',
      outcome: 'accepted',
      message: 'feed 2026.11.26.1 accepted',
    });
    expect(doneBox()).toBe('hold');
    expect(JSON.parse(readFileSync(path.join(s.stateDir, ACCEPTED_FILE), 'utf8'))).toMatchObject({
      feed_version: '2026.11.26.1',
      published_at: '2026-11-26T10:30:00Z',
    });

    // The day's regular feed again (a mirror behind): a rollback.
    clock.advance(3_600_000);
    publish(s, widgetAdvisories, regular);
    await appliance.refresh();
    expect(appliance.status.problem?.rejection).toEqual({
      reason: 'rollback',
      message: 'feed 2026.11.26 is older than the accepted 2026.11.26.1; a rollback is refused',
    });
    // The same extra release with another manifest: the alarm.
    clock.advance(3_600_000);
    publish(s, widgetAdvisories, new Date('2026-11-26T12:30:00Z'), '2026.11.26.1');
    await appliance.refresh();
    expect(appliance.status.problem?.rejection).toEqual({
      reason: 'version-conflict',
      message:
        'feed 2026.11.26.1 differs from the feed of the same version accepted before; this should never happen and is refused',
    });
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.26.1');
    expect(doneBox()).toBe('hold');
  });
});

describe('the same manifest without its signature', () => {
  it('is refused as unsigned, never taken as unchanged, and the feed in use serves on', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    rmSync(path.join(s.feedDir, 'manifest.yaml.sig'));
    await appliance.refresh();
    expect(appliance.status.lastPull).toMatchObject({
      outcome: 'rejected',
      rejection: { file: 'manifest.yaml.sig' },
    });
    expect(appliance.status.lastRefreshError).toBeNull();
    expect(appliance.health().problems.map((p) => p.code)).toEqual(['feed-refused']);
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.21');
    // Signed again: the same feed, unchanged.
    publish(s, widgetAdvisories, PUBLISHED);
    await appliance.refresh();
    expect(appliance.status.lastPull?.outcome).toBe('unchanged');
    expect(appliance.health().problems).toEqual([]);
  });
});

describe('a refusal repeated', () => {
  const pullFile = (s: Setup) => path.join(s.stateDir, 'pull.json');
  const refusedIn = (s: Setup) => JSON.parse(readFileSync(pullFile(s), 'utf8')).refused;

  it('keeps its first time and is not written again; another reason or message is news', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock } = await start(s.env);
    await appliance.refresh();
    const sig = path.join(s.feedDir, 'manifest.yaml.sig');
    const lines = readFileSync(sig, 'utf8').split('\n');
    lines[1] = `${lines[1]?.slice(0, 20)}${lines[1]?.[20] === 'A' ? 'B' : 'A'}${lines[1]?.slice(21)}`;
    writeFileSync(sig, lines.join('\n'));
    clock.advance(60_000);
    await appliance.refresh();
    const first = appliance.status.refused;
    expect(first).toMatchObject({
      at: clock.now().toISOString(),
      rejection: { reason: 'signature-invalid' },
    });
    expect(refusedIn(s)).toEqual(first);
    const written = statSync(pullFile(s)).ino;
    const rejectedEntries = async () => (await entries(appliance)).filter((e) => e.kind === 'feed-rejected');
    expect(await rejectedEntries()).toHaveLength(1);

    // The same refusal again: its first time kept, pull.json not written, not logged again.
    clock.advance(60_000);
    await appliance.refresh();
    expect(appliance.status.lastPull?.at).toBe(clock.now().toISOString());
    expect(appliance.status.refused).toEqual(first);
    expect(statSync(pullFile(s)).ino).toBe(written);
    expect(await rejectedEntries()).toHaveLength(1);

    // The same manifest refused for another reason: news, logged and remembered.
    rmSync(sig);
    clock.advance(60_000);
    await appliance.refresh();
    const second = appliance.status.refused;
    expect(second?.at).toBe(clock.now().toISOString());
    expect(second?.rejection?.reason).not.toBe('signature-invalid');
    expect(refusedIn(s)).toEqual(second);
    expect((await rejectedEntries()).map((e) => e.data.reason)).toEqual([
      'signature-invalid',
      second?.rejection?.reason,
    ]);

    // The same reason with another message (another file at fault): news too.
    const revised = Object.fromEntries(
      Object.entries(widgetAdvisories).map(([file, text]) => [file, `${text}# revised\n`]),
    );
    publish(s, revised, new Date(PUBLISHED.getTime() + DAY));
    appendFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), '# edited\n');
    clock.advance(DAY);
    await appliance.refresh();
    const third = appliance.status.refused;
    expect(third).toMatchObject({
      at: clock.now().toISOString(),
      rejection: { reason: 'file-size-mismatch' },
    });
    publish(s, revised, new Date(PUBLISHED.getTime() + DAY));
    appendFileSync(path.join(s.feedDir, 'widgets/install.yaml'), '# edited\n');
    clock.advance(60_000);
    await appliance.refresh();
    const fourth = appliance.status.refused;
    expect(fourth).toMatchObject({
      at: clock.now().toISOString(),
      rejection: { reason: 'file-size-mismatch' },
    });
    expect(fourth?.message).not.toBe(third?.message);
    expect(refusedIn(s)).toEqual(fourth);

    // The host unreachable: the refusal stays, as it was. A feed accepted: it is gone.
    rmSync(s.feedDir, { recursive: true });
    clock.advance(60_000);
    await appliance.refresh();
    expect(appliance.status.lastPull?.outcome).toBe('unreachable');
    expect(appliance.status.refused).toEqual(fourth);
    expect(refusedIn(s)).toEqual(fourth);
    publish(s, revised, new Date(PUBLISHED.getTime() + DAY + 60_000));
    clock.advance(DAY);
    await appliance.refresh();
    expect(appliance.status.lastPull?.outcome).toBe('accepted');
    expect(appliance.status.refused).toBeNull();
    expect(refusedIn(s)).toBeNull();
  });
});

describe('a restart that finds the same feed at its source', () => {
  it('serves it as read from the source again, not as the cache, and says it has not changed', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const first = await start(s.env);
    await first.appliance.refresh();
    await stop(first.appliance);
    const { appliance } = await start(s.env);
    expect(appliance.status.feed?.from).toBe('cache');
    const status = await appliance.refresh();
    expect(status.lastPull).toMatchObject({ outcome: 'unchanged', message: 'the feed has not changed' });
    expect(status.feed?.from).toBe('live');
  });
});
