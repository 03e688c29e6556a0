import { execFile, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { runsIf } from '../../scripts/test-skip.ts';
import type { Appliance } from '../src/appliance/appliance.ts';
import { runFeedCli } from '../src/cli/feed/main.ts';
import { SIGNATURE_FILE } from '../src/feed/format/rules.ts';
import { Clock, openTest, widgetAdvisories } from './support/appliance.ts';
import { currentSampleFeed } from './support/feed.ts';

/**
 * The runbooks of docs/operations.md, walked through as an operator would: the key
 * rotation with two keys and two client versions, and an air-gapped mirror made with
 * rsync. (The scheduler's backup and scaling runbooks are tested in the scheduler.)
 */
const exec = promisify(execFile);
// rsync is a Debian package CI installs; elsewhere the mirror test runs where rsync is.
const hasRsync = spawnSync('rsync', ['--version']).status === 0;
if (process.env.REQUIRE_RSYNC && !hasRsync)
  throw new Error('rsync is required (REQUIRE_RSYNC) but not installed');
const NEEDS_RSYNC = 'needs rsync (Debian package; scripts/install-system-packages.sh)';
const DAY = 86_400_000;
const tmp = (prefix: string) => mkdtempSync(path.join(tmpdir(), prefix));
const advisoryRoot = path.resolve(import.meta.dirname, '..');

/** advisory-feed as the publisher runs it, at a given moment; throws on a non-zero exit. */
async function feedTool(argv: string[], now: Date): Promise<string> {
  const out: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(l) };
  const code = await runFeedCli(argv, io, now);
  if (code !== 0) throw new Error(`advisory-feed ${argv.join(' ')} exited ${code}: ${out.join('\n')}`);
  return out.join('\n');
}

const opened: Appliance[] = [];
afterEach(async () => {
  for (const appliance of opened.splice(0)) await appliance.stop();
});

describe('the key rotation runbook', () => {
  it('new key shipped with a client update, a dual-signed overlap, then the old key retired', async () => {
    const dir = tmp('rotation-');
    const feed = path.join(dir, 'published-feed');
    const key = (name: string) => ({
      sec: path.join(dir, `${name}.sec`),
      pub: path.join(dir, `${name}.pub`),
    });
    const [oldKey, newKey] = [key('old'), key('new')];
    const day0 = new Date('2026-12-01T09:00:00Z');
    await feedTool(
      ['keygen', '--secret-key', oldKey.sec, '--public-key', oldKey.pub, '--comment', 'feed 2026'],
      day0,
    );
    await feedTool(
      ['keygen', '--secret-key', newKey.sec, '--public-key', newKey.pub, '--comment', 'feed 2027'],
      day0,
    );
    const inventory = path.join(dir, 'inventory.yaml');
    writeFileSync(inventory, 'assets:\n  - { name: old-box, products: { widget: "1.9" } }\n');

    /** Publishes the widget advisories on `at`, signed by `keys` in that order. */
    async function publishOn(at: Date, keys: { sec: string }[], title: string) {
      rmSync(feed, { recursive: true, force: true });
      mkdirSync(path.join(feed, 'widgets'), { recursive: true });
      for (const [file, text] of Object.entries(widgetAdvisories))
        writeFileSync(path.join(feed, file), text.replace('Widget 1 is end of life', title));
      await feedTool(['build', '--feed', feed, '--expires-in', '26w'], at);
      for (const k of keys) await feedTool(['sign', '--feed', feed, '--secret-key', k.sec], at);
    }

    // Each client version ships the public keys it trusts (ADVISORY_PUBLIC_KEYS).
    const clock = new Clock(day0);
    async function client(version: string, keys: { pub: string }[]) {
      const appliance = await openTest(
        {
          ADVISORY_FEED_URL: feed,
          ADVISORY_PUBLIC_KEYS: keys.map((k) => k.pub).join(','),
          ADVISORY_INVENTORY: inventory,
          ADVISORY_STATE_DIR: path.join(dir, `client-${version}`),
          ADVISORY_LOG_LEVEL: 'silent',
        },
        clock,
      );
      opened.push(appliance);
      return appliance;
    }
    const inUse = async (appliance: Appliance) => {
      await appliance.refresh();
      return {
        outcome: appliance.status.lastPull?.outcome,
        version: appliance.status.feed?.feed.manifest.feed_version,
      };
    };

    // 1. Today: the feed is signed with the old key; client 0.2 trusts only that key.
    await publishOn(day0, [oldKey], 'before');
    const v02 = await client('0.2', [oldKey]);
    expect(await inUse(v02)).toEqual({ outcome: 'accepted', version: '2026.12.01' });

    // 2. Client 0.3 ships the new key beside the old one; the feed is still signed by the old.
    const v03 = await client('0.3', [oldKey, newKey]);
    expect(await inUse(v03)).toEqual({ outcome: 'accepted', version: '2026.12.01' });

    // 3. The overlap window: every feed carries both signatures; both versions accept it.
    clock.advance(30 * DAY);
    const overlap = new Date(clock.now());
    await publishOn(overlap, [oldKey, newKey], 'overlap');
    expect(readFileSync(path.join(feed, SIGNATURE_FILE), 'utf8').match(/untrusted comment/g)).toHaveLength(2);
    expect(await inUse(v02)).toEqual({ outcome: 'accepted', version: '2026.12.31' });
    expect(await inUse(v03)).toEqual({ outcome: 'accepted', version: '2026.12.31' });
    expect(v03.status.feed?.feed.signedBy).toHaveLength(2);

    // 4. The old key retired: feeds are signed by the new key alone. Client 0.3 goes on;
    // client 0.2 refuses the feed, says why, and keeps serving the last feed it accepted.
    clock.advance(30 * DAY);
    await publishOn(new Date(clock.now()), [newKey], 'after');
    expect(await inUse(v03)).toEqual({ outcome: 'accepted', version: '2027.01.30' });
    expect(await inUse(v02)).toEqual({ outcome: 'rejected', version: '2026.12.31' });
    expect(v02.status.problem?.rejection?.reason).toBe('signature-unknown-key');
    expect(v02.status.evaluations.map((e) => [e.asset, e.verdict])).toEqual([['old-box', 'eol']]);

    // 5. A client that trusts only the new key (a later release) accepts it too.
    const v04 = await client('0.4', [newKey]);
    expect(await inUse(v04)).toEqual({ outcome: 'accepted', version: '2027.01.30' });
  });
});

describe('the air-gap mirror runbook', runsIf(hasRsync, NEEDS_RSYNC), () => {
  it('rsync copies a signed feed (the sample advisories) to another directory and the appliance accepts the mirror', async () => {
    const dir = tmp('mirror-');
    // The sample's advisories, built and signed now: `advisory check` uses the real clock,
    // and the test must not depend on the committed manifest's expiry.
    const sample = currentSampleFeed();
    const mirror = path.join(dir, 'mirror', 'feed');
    mkdirSync(mirror, { recursive: true });
    // Exactly the command of docs/operations.md (the trailing slashes matter to rsync).
    const sync = () =>
      exec('rsync', [
        '--archive',
        '--delete-delay',
        '--delay-updates',
        '--checksum',
        `${sample.dir}/`,
        `${mirror}/`,
      ]);
    const env = {
      ...process.env,
      ADVISORY_FEED_URL: `file://${mirror}`,
      ADVISORY_PUBLIC_KEYS: sample.publicKeyFile,
      ADVISORY_INVENTORY: path.join(advisoryRoot, 'examples', 'demo-inventory.yaml'),
      ADVISORY_STATE_DIR: path.join(dir, 'state'),
      ADVISORY_LOG_LEVEL: 'warn',
    };
    const check = () =>
      exec(process.execPath, [path.join(advisoryRoot, 'bin', 'advisory.mjs'), 'check'], { env }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    await sync();
    expect(existsSync(path.join(mirror, SIGNATURE_FILE))).toBe(true);
    // Exit 1: the demo estate needs action (3 would mean no verified feed).
    const first = await check();
    expect(first.code, first.stderr).toBe(1);
    expect(first.stdout).toMatch(/^feed \d{4}\.\d{2}\.\d{2} from the feed directory /m);

    // A file changed in the mirror fails verification there (the appliance would refuse
    // it and go on with the copy it verified), and the next sync puts it back: --checksum
    // compares contents, not sizes and times.
    const verifyMirror = () =>
      exec(process.execPath, [
        path.join(advisoryRoot, 'bin', 'advisory-feed.mjs'),
        'verify',
        '--feed',
        mirror,
        '--public-key',
        sample.publicKeyFile,
      ]).then(
        () => 0,
        (error: { code: number }) => error.code,
      );
    expect(await verifyMirror()).toBe(0);
    // Changed in place, same size and same modification time: only --checksum notices.
    const file = path.join(mirror, 'platform', 'debian-13-point-release.yaml');
    const before = statSync(file);
    const text = readFileSync(file, 'utf8');
    const at = text.indexOf('title: ') + 'title: '.length;
    writeFileSync(file, `${text.slice(0, at)}${text[at] === 'X' ? 'Y' : 'X'}${text.slice(at + 1)}`);
    utimesSync(file, before.atime, before.mtime);
    expect(statSync(file).size).toBe(before.size);
    expect(await verifyMirror()).toBe(1);
    await sync();
    expect(await verifyMirror()).toBe(0);
  });
});
