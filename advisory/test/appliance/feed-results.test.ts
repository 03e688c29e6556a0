import { appendFileSync, cpSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESULTS_FILE, RESULTS_KEY_FILE } from '../../src/appliance/cache.ts';
import { runFeedCli } from '../../src/cli/feed/main.ts';
import {
  appliances,
  Clock,
  holdWidget25,
  publish,
  type Setup,
  setup,
  widgetAdvisories,
} from '../support/appliance.ts';
import { advisoryYaml, signFeed } from '../support/feed.ts';

/**
 * Incremental verification in the appliance: the validated results of the accepted feed
 * are stored inside its cached copy, sealed with a key in the state directory, and the
 * next feed reuses them for files with the same path, size and hash. Any doubt about
 * them costs a full validation, never the feed.
 */
const DAY = 86_400_000;
const PUBLISHED = new Date('2026-11-21T12:00:00Z');
const { start, stop } = appliances(PUBLISHED);
const dayAfter = () => new Clock(new Date(PUBLISHED.getTime() + DAY + 3_600_000));
const nextFeed = { ...widgetAdvisories, 'widgets/hold.yaml': holdWidget25('W-HOLD-3') };
const resultsOf = (s: Setup) => path.join(s.cacheDir, RESULTS_FILE);

/** Accepts the first feed, stops, publishes the next one (one file added). */
async function acceptFirst(s: Setup): Promise<void> {
  const { appliance } = await start(s.env);
  await appliance.refresh();
  await stop(appliance);
  publish(s, nextFeed, new Date(PUBLISHED.getTime() + DAY));
}

const cachedLine = (log: { lines: { msg: string }[] }) =>
  log.lines.find((l) => l.msg === 'cached feed verified');
const acceptedLine = (log: { lines: { msg: string }[] }) => log.lines.find((l) => l.msg === 'feed accepted');
const fallback = (log: { lines: { msg: string; problem?: unknown }[] }) =>
  log.lines.find((l) => l.msg === 'validating every file of the feed')?.problem;

describe('stored validated results', () => {
  it('are kept inside the cache, which still verifies on its own, under a key only the appliance reads', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    expect(readFileSync(resultsOf(s), 'utf8')).toMatch(
      /^\{"format":"advisory-verified-results","version":1,/,
    );
    expect(statSync(path.join(s.stateDir, RESULTS_KEY_FILE)).mode & 0o777).toBe(0o600);
    const err: string[] = [];
    const code = await runFeedCli(
      ['verify', '--feed', s.cacheDir, '--public-key', s.keyFile],
      { out: () => undefined, err: (l) => err.push(l) },
      new Date(PUBLISHED.getTime() + 3_600_000),
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
  });

  it('are reused for unchanged files: at a pull from memory, at a restart from the file', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock, log } = await start(s.env);
    await appliance.refresh();
    expect(acceptedLine(log)).toMatchObject({ feed: '2026.11.21', advisories: 2, reused: 0 });
    clock.advance(DAY);
    publish(s, nextFeed, new Date(PUBLISHED.getTime() + DAY));
    await appliance.refresh();
    expect(log.lines.filter((l) => l.msg === 'feed accepted').at(-1)).toMatchObject({
      feed: '2026.11.22',
      advisories: 3,
      reused: 2,
    });
    expect(appliance.status.feed?.feed.advisories.map((a) => a.advisory.id)).toEqual([
      'W-EOL-1',
      'W-HOLD-3',
      'W-2.5',
    ]);
    await stop(appliance);
    const again = await start(s.env, clock);
    expect(cachedLine(again.log)).toMatchObject({ feed: '2026.11.22', reused: 3 });
    expect(fallback(again.log)).toBeUndefined();
  });

  it('damaged: the cache is validated whole, with what its files say', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    await acceptFirst(s);
    const file = resultsOf(s);
    writeFileSync(file, readFileSync(file, 'utf8').replace('Widget 1 is end of life', 'Widget 1 is fine'));
    const { appliance, log } = await start(s.env, dayAfter());
    expect(fallback(log)).toBe('the results file is damaged or not sealed by this appliance');
    expect(cachedLine(log)).toMatchObject({ feed: '2026.11.21', reused: 0 });
    expect(
      appliance.status.feed?.feed.advisories.find((a) => a.advisory.id === 'W-EOL-1')?.advisory.title,
    ).toBe('Widget 1 is end of life');
    await appliance.refresh();
    expect(acceptedLine(log)).toMatchObject({ feed: '2026.11.22', reused: 2 });
  });

  it('of another client version: the cache is validated whole', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    await acceptFirst(s);
    const file = resultsOf(s);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"client":"[^"]+"/, '"client":"0.0.1"'));
    const { log } = await start(s.env, dayAfter());
    expect(fallback(log)).toMatch(/^the results were validated by client 0\.0\.1, not \d+\.\d+\.\d+/);
    expect(cachedLine(log)).toMatchObject({ reused: 0 });
  });

  it('missing: the cache is validated whole', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    await acceptFirst(s);
    rmSync(resultsOf(s));
    const { log } = await start(s.env, dayAfter());
    expect(fallback(log)).toBe('no results are stored with the cache');
    expect(cachedLine(log)).toMatchObject({ reused: 0 });
  });

  it('the key lost: validated whole, then stored again under a new key', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    await acceptFirst(s);
    rmSync(path.join(s.stateDir, RESULTS_KEY_FILE));
    const { appliance, log } = await start(s.env, dayAfter());
    expect(fallback(log)).toBe('the results file is damaged or not sealed by this appliance');
    expect(cachedLine(log)).toMatchObject({ reused: 0 });
    await appliance.refresh();
    expect(acceptedLine(log)).toMatchObject({ feed: '2026.11.22' });
    await stop(appliance);
    const again = await start(s.env, dayAfter());
    expect(cachedLine(again.log)).toMatchObject({ feed: '2026.11.22', reused: 3 });
  });

  it('after a crash between caching a feed and remembering it: not reused, the cache verified whole', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance } = await start(s.env);
    await appliance.refresh();
    await stop(appliance);
    const before = path.join(s.dir, 'state-before');
    cpSync(s.stateDir, before, { recursive: true });
    publish(s, nextFeed, new Date(PUBLISHED.getTime() + DAY));
    const second = await start(s.env, dayAfter());
    await second.appliance.refresh();
    await stop(second.appliance);
    // The state as it was before the second feed was remembered; the cache holds it and its results.
    rmSync(s.stateDir, { recursive: true });
    cpSync(before, s.stateDir, { recursive: true });
    const third = await start(s.env, dayAfter());
    expect(fallback(third.log)).toBe('the results belong to another feed than the one in use');
    expect(third.log.lines.find((l) => l.msg === 'cached feed verified')).toMatchObject({
      feed: '2026.11.22',
      reused: 0,
    });
  });

  it('do not let a changed file through that is invalid, although the one it replaces was valid', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    await acceptFirst(s);
    // A feed whose changed file breaks the rules, listed and signed by hand (build refuses it).
    const bad = advisoryYaml({ id: 'W-EOL-1', verdict: 'upgrade-now' });
    const manifestFile = path.join(s.feedDir, 'manifest.yaml');
    const { createHash } = await import('node:crypto');
    writeFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), bad);
    writeFileSync(
      manifestFile,
      readFileSync(manifestFile, 'utf8').replace(
        /(path: "widgets\/eol\.yaml"\s+sha256: ")[0-9a-f]{64}("\s+size: )\d+/,
        `$1${createHash('sha256').update(bad).digest('hex')}$2${Buffer.byteLength(bad)}`,
      ),
    );
    signFeed(s.feedDir, s.key);
    const { appliance } = await start(s.env, dayAfter());
    await appliance.refresh();
    expect(appliance.status.lastPull).toMatchObject({
      outcome: 'rejected',
      message:
        'widgets/eol.yaml: unknown verdict "upgrade-now" (expected one of blocked, eol, wait-for-patch, hold, install)',
    });
    expect(appliance.status.feed?.feed.manifest.feed_version).toBe('2026.11.21');
  });
});

describe('a pull of the next feed', () => {
  const verifyCache = async (s: Setup) => {
    const err: string[] = [];
    const code = await runFeedCli(
      ['verify', '--feed', s.cacheDir, '--public-key', s.keyFile],
      { out: () => undefined, err: (l) => err.push(l) },
      new Date(PUBLISHED.getTime() + DAY + 3_600_000),
    );
    return { code, err };
  };

  it('takes unchanged files from the cached copy of the feed in use, not from the source', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock, log } = await start(s.env);
    await appliance.refresh();
    const cached = readFileSync(path.join(s.cacheDir, 'widgets/eol.yaml'));
    clock.advance(DAY);
    publish(s, nextFeed, new Date(PUBLISHED.getTime() + DAY));
    // The source's copy of an unchanged file is spoilt after signing: it is never read,
    // so the pull neither sees it nor carries it into the cache.
    writeFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), 'spoilt: [');
    await appliance.refresh();
    expect(acceptedLine(log)).toBeDefined();
    expect(log.lines.filter((l) => l.msg === 'feed accepted').at(-1)).toMatchObject({
      feed: '2026.11.22',
      reused: 2,
    });
    expect(readFileSync(path.join(s.cacheDir, 'widgets/eol.yaml'))).toEqual(cached);
    expect(await verifyCache(s)).toEqual({ code: 0, err: [] });
    await stop(appliance);
  });

  it('reads a file from the source when its cached copy is not what was accepted', async () => {
    for (const spoil of [
      // A file of another size: damage, or a hand edit.
      (s: Setup) => appendFileSync(path.join(s.cacheDir, 'widgets/eol.yaml'), '# edited\n'),
      // A folder replaced by a link to one elsewhere: nothing under it is trusted.
      (s: Setup) => {
        const elsewhere = `${s.dir}/elsewhere`;
        cpSync(path.join(s.cacheDir, 'widgets'), elsewhere, { recursive: true });
        rmSync(path.join(s.cacheDir, 'widgets'), { recursive: true });
        symlinkSync(elsewhere, path.join(s.cacheDir, 'widgets'));
      },
    ]) {
      const s = setup({ publishedAt: PUBLISHED });
      const { appliance, clock, log } = await start(s.env);
      await appliance.refresh();
      spoil(s);
      clock.advance(DAY);
      publish(s, nextFeed, new Date(PUBLISHED.getTime() + DAY));
      await appliance.refresh();
      const accepted = log.lines.filter((l) => l.msg === 'feed accepted').at(-1);
      expect(accepted).toMatchObject({ feed: '2026.11.22', advisories: 3 });
      expect((accepted as { reused?: number }).reused).toBeLessThan(2);
      expect(await verifyCache(s)).toEqual({ code: 0, err: [] });
      await stop(appliance);
    }
  });

  it('takes nothing from a cached copy that is not the feed in use (its manifest differs)', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock } = await start(s.env);
    await appliance.refresh();
    appendFileSync(path.join(s.cacheDir, 'manifest.yaml'), '# another\n');
    clock.advance(DAY);
    publish(s, nextFeed, new Date(PUBLISHED.getTime() + DAY));
    // Every file is read from the source now: one spoilt there after signing is found.
    writeFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), 'spoilt: [');
    await appliance.refresh();
    expect(appliance.status.lastPull).toMatchObject({
      outcome: 'rejected',
      rejection: { file: 'widgets/eol.yaml' },
    });
    await stop(appliance);
  });

  it('reads a file missing from the cached copy from the source, and validates it', async () => {
    const s = setup({ publishedAt: PUBLISHED });
    const { appliance, clock, log } = await start(s.env);
    await appliance.refresh();
    rmSync(path.join(s.cacheDir, 'widgets/eol.yaml'));
    clock.advance(DAY);
    publish(s, nextFeed, new Date(PUBLISHED.getTime() + DAY));
    // Read from the source, the file is checked as any other: spoilt there, it is refused.
    const good = readFileSync(path.join(s.feedDir, 'widgets/eol.yaml'));
    writeFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), 'spoilt: [');
    await appliance.refresh();
    expect(appliance.status.lastPull).toMatchObject({ outcome: 'rejected' });
    writeFileSync(path.join(s.feedDir, 'widgets/eol.yaml'), good);
    await appliance.refresh();
    expect(log.lines.filter((l) => l.msg === 'feed accepted').at(-1)).toMatchObject({
      feed: '2026.11.22',
      advisories: 3,
      reused: 1,
    });
    expect(appliance.status.feed?.feed.advisories.map((a) => a.advisory.id)).toEqual([
      'W-EOL-1',
      'W-HOLD-3',
      'W-2.5',
    ]);
    expect(await verifyCache(s)).toEqual({ code: 0, err: [] });
    await stop(appliance);
  });
});
