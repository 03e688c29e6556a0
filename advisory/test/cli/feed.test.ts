import { execFile, execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runAdvisoryCli } from '../../src/cli/advisory/main.ts';
import { runFeedCli } from '../../src/cli/feed/main.ts';
import { sha256 } from '../../src/crypto/digest.ts';
import { keyId, parseSignatures } from '../../src/crypto/signify.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../src/feed/format/rules.ts';
import { advisoryYaml, makeFeed, makeKey, NOW, type TestFeed } from '../support/feed.ts';
import { blockOf } from '../support/signatures.ts';

/** The feed builder's command line: exit codes 0 ok, 1 refused, 2 usage or unreadable input. */
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

async function run(argv: string[]) {
  const c = capture();
  const code = await runFeedCli(argv, c.io, NOW);
  const err = c.err.join('\n');
  // Never a stack trace, whatever went wrong.
  expect(err, argv.join(' ')).not.toMatch(/^\s+at .*(\(.*:\d+:\d+\)|\.[cm]?[jt]s:\d+)/m);
  return { code, out: c.out.join('\n'), err };
}

const tmp = () => mkdtempSync(path.join(tmpdir(), 'cli-'));

/** A built feed whose signature is not written yet (the state between build and sign). */
function unsignedFeed(): TestFeed {
  const feed = makeFeed();
  rmSync(path.join(feed.dir, SIGNATURE_FILE));
  return feed;
}

/** An unsigned feed and a key pair made by keygen in `dir` (k.sec, k.pub). */
async function unsignedFeedAndKey(): Promise<{ dir: string; feed: TestFeed }> {
  const dir = tmp();
  await run(['keygen', '--secret-key', `${dir}/k.sec`, '--public-key', `${dir}/k.pub`]);
  return { dir, feed: unsignedFeed() };
}

function withPublicKey(feed: TestFeed): string {
  const file = path.join(tmp(), 'k.pub');
  writeFileSync(file, feed.key.publicText);
  return file;
}

describe('--version on every command', () => {
  const version = JSON.parse(
    readFileSync(path.join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
  ).version;

  it('prints the client version (semver, from package.json), the feed schemas and the licence, exit 0', async () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    const expected = (tool: string) =>
      `${tool} ${version}\nfeed schema: reads 2.x, writes 2.0\nlicence: FSL-1.1-ALv2 (Functional Source License 1.1; each release becomes Apache-2.0 two years after it is published)`;
    for (const argv of [
      ['--version'],
      ['-V'],
      ...['keygen', 'build', 'verify', 'sign'].map((c) => [c, '--version']),
    ]) {
      expect(await run(argv), argv.join(' ')).toEqual({ code: 0, out: expected('advisory-feed'), err: '' });
    }
    for (const argv of [
      ['--version'],
      ['-V'],
      ['run', '--version'],
      ['check', '--version'],
      ['log', 'verify', '--version'],
    ]) {
      const c = capture();
      expect(await runAdvisoryCli(argv, c.io, {}), argv.join(' ')).toBe(0);
      expect(c.out.join('\n')).toBe(expected('advisory'));
      expect(c.err).toEqual([]);
    }
    const c = capture();
    expect(await runAdvisoryCli(['feed', 'verify', '--version'], c.io, {})).toBe(0);
    expect(c.out.join('\n')).toBe(expected('advisory-feed'));
  });
});

describe('advisory-feed: help and usage', () => {
  it('prints help for the tool and each command (exit 0); usage errors exit 2', async () => {
    for (const argv of [
      ['--help'],
      ['build', '--help'],
      ['verify', '--help'],
      ['sign', '--help'],
      ['keygen', '--help'],
    ]) {
      const result = await run(argv);
      expect(result.code).toBe(0);
      expect(result.out).toMatch(/Usage: advisory-feed/);
    }
    for (const argv of [
      [],
      ['frobnicate'],
      ['build'],
      ['build', '--feed', 'x', '--feed-version', '2026.13.40'],
      ['verify', '--feed', 'x'],
      ['sign', '--bogus'],
      ['verify', 'positional'],
    ]) {
      expect((await run(argv)).code, argv.join(' ')).toBe(2);
    }
  });
});

describe('advisory-feed keygen', () => {
  it('writes a 0600 secret key and refuses to overwrite either file', async () => {
    const dir = tmp();
    expect((await run(['keygen', '--secret-key', `${dir}/k.sec`, '--public-key', `${dir}/k.pub`])).code).toBe(
      0,
    );
    expect(statSync(`${dir}/k.sec`).mode & 0o777).toBe(0o600);
    const before = readFileSync(`${dir}/k.sec`, 'utf8');
    const again = await run(['keygen', '--secret-key', `${dir}/k.sec`, '--public-key', `${dir}/other.pub`]);
    expect(again).toMatchObject({ code: 2, err: expect.stringMatching(/refusing to overwrite/) });
    expect(readFileSync(`${dir}/k.sec`, 'utf8')).toBe(before);
    expect(existsSync(`${dir}/other.pub`)).toBe(false);
    expect(
      (await run(['keygen', '--secret-key', `${dir}/new.sec`, '--public-key', `${dir}/k.pub`])).code,
    ).toBe(2);
    expect(existsSync(`${dir}/new.sec`)).toBe(false);
  });

  it('refuses a comment that is not one line', async () => {
    const dir = tmp();
    for (const comment of ['two\nlines', 'carriage\rreturn', 'x'.repeat(201)]) {
      const result = await run([
        'keygen',
        '--secret-key',
        `${dir}/k.sec`,
        '--public-key',
        `${dir}/k.pub`,
        '--comment',
        comment,
      ]);
      expect(result).toMatchObject({ code: 2, err: expect.stringMatching(/--comment must be one line/) });
    }
    expect(existsSync(`${dir}/k.sec`)).toBe(false);
  });

  it('never leaves half a pair: when the public key cannot be written, the secret key goes too', async () => {
    const dir = tmp();
    const result = await run([
      'keygen',
      '--secret-key',
      `${dir}/k.sec`,
      '--public-key',
      `${dir}/missing/k.pub`,
    ]);
    expect(result).toMatchObject({ code: 2, err: expect.stringMatching(/no key was made/) });
    expect(existsSync(`${dir}/k.sec`)).toBe(false);
  });
});

describe('advisory-feed build', () => {
  it('lints, prints findings with file:line, and exits 1 on errors', async () => {
    const feed = makeFeed();
    writeFileSync(path.join(feed.dir, 'widgets/bad.yaml'), advisoryYaml({ id: 'BAD-1', verdict: 'maybe' }));
    const result = await run(['build', '--feed', feed.dir]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^widgets\/bad\.yaml:5: error \[unknown-verdict\]/m);
  });

  it('refuses what it cannot publish as it is: a link, a FIFO, a socket, names verify would refuse (exit 1)', async () => {
    const feed = makeFeed();
    symlinkSync(path.join(feed.dir, 'widgets/one.yaml'), path.join(feed.dir, 'widgets/link.yaml'));
    execFileSync('mkfifo', [path.join(feed.dir, 'widgets/fifo.yaml')]);
    mkdirSync(path.join(feed.dir, 'Platform'));
    writeFileSync(path.join(feed.dir, 'widgets/one #2.yaml'), advisoryYaml({ id: 'TEST-2' }));
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(feed.dir, 'widgets/sock.yaml'), resolve));
    try {
      const result = await run(['build', '--feed', feed.dir]);
      expect(result.code).toBe(1);
      for (const file of [
        'Platform',
        'widgets/fifo.yaml',
        'widgets/link.yaml',
        'widgets/one #2.yaml',
        'widgets/sock.yaml',
      ])
        expect(result.err).toContain(`${file}:1: error [layout]`);
    } finally {
      socket.close();
    }
  });

  it('takes today as the version, refuses another day and a validity beyond 366 days (exit 2)', async () => {
    const feed = makeFeed();
    const wrongDay = await run(['build', '--feed', feed.dir, '--feed-version', '2062.11.21']);
    expect(wrongDay).toMatchObject({
      code: 2,
      err: expect.stringMatching(/not of today's UTC date 2026\.11\.21/),
    });
    for (const expires of ['999999w', '367d', '0d', '6mo', '14']) {
      const result = await run(['build', '--feed', feed.dir, '--expires-in', expires]);
      expect(result.code, expires).toBe(2);
      expect(result.err, expires).toMatch(/^--expires-in: /);
    }
    expect((await run(['build', '--feed', feed.dir, '--expires-in', '366d'])).code).toBe(0);
  });

  it('without --feed-version takes the next free version of today from the previous manifest', async () => {
    const version = async (dir: string) => {
      const result = await run(['build', '--feed', dir]);
      expect(result.code, result.err).toBe(0);
      return /^wrote manifest\.yaml: feed (\S+),/.exec(result.out)?.[1];
    };
    // No manifest yet: today's date.
    const fresh = tmp();
    mkdirSync(path.join(fresh, 'widgets'));
    writeFileSync(path.join(fresh, 'widgets/one.yaml'), advisoryYaml({}));
    expect(await version(fresh)).toBe('2026.11.21');
    // Built today already: the next extra releases, in order.
    expect(await version(fresh)).toBe('2026.11.21.1');
    expect(await version(fresh)).toBe('2026.11.21.2');
    expect(readFileSync(path.join(fresh, MANIFEST_FILE), 'utf8')).toContain('feed_version: "2026.11.21.2"');
    // The last manifest is of an earlier day: today's date.
    const yesterday = makeFeed(undefined, { feedVersion: '2026.11.20.4' });
    expect(await version(yesterday.dir)).toBe('2026.11.21');
  });

  it('refuses to pick a version after the 99th extra release of the day (exit 1), or to take one given', async () => {
    const feed = makeFeed();
    const manifest = path.join(feed.dir, MANIFEST_FILE);
    writeFileSync(
      manifest,
      readFileSync(manifest, 'utf8').replace('feed_version: "2026.11.21"', 'feed_version: "2026.11.21.99"'),
    );
    expect(await run(['build', '--feed', feed.dir])).toEqual({
      code: 1,
      out: '',
      err: [
        "manifest.yaml:1: error [manifest] 2026.11.21.99 was built already: a day has at most 99 extra releases; publish tomorrow's version",
        'build failed: 1 error; no manifest written',
      ].join('\n'),
    });
    // Nothing after the 99th is free: a version given by hand is refused too (older, equal).
    for (const given of ['2026.11.21.7', '2026.11.21.99']) {
      const result = await run(['build', '--feed', feed.dir, '--feed-version', given]);
      expect(result, given).toMatchObject({ code: 1, out: '' });
      expect(result.err, given).toMatch(
        new RegExp(
          `^manifest\\.yaml:1: error \\[manifest\\] --feed-version ${given.replaceAll('.', '\\.')} is (older than|the version of)`,
        ),
      );
      expect(result.err, given).toMatch(/\nbuild failed: 1 error; no manifest written$/);
    }
    expect(readFileSync(manifest, 'utf8')).toContain('feed_version: "2026.11.21.99"');
    for (const bad of ['2026.11.21.0', '2026.11.21.100', '2026.11.21.07', '2026.11.21-1']) {
      expect(await run(['build', '--feed', feed.dir, '--feed-version', bad]), bad).toEqual({
        code: 2,
        out: '',
        err: '--feed-version must be a real date written YYYY.MM.DD or YYYY.MM.DD.N (N from 1 to 99) (advisory-feed build --help shows how)',
      });
    }
  });

  it('--feed must be a directory (exit 2)', async () => {
    const feed = makeFeed();
    expect(await run(['build', '--feed', path.join(feed.dir, 'widgets/one.yaml')])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--feed .*one\.yaml: not a directory/),
    });
    expect(await run(['build', '--feed', path.join(feed.dir, 'nowhere')])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/no such directory/),
    });
  });
});

describe('advisory-feed verify', () => {
  it('a signature present but not verifying is a rejection (exit 1)', async () => {
    const feed = makeFeed();
    writeFileSync(path.join(feed.dir, 'widgets/one.yaml'), 'tampered: true\n');
    const result = await run(['verify', '--feed', feed.dir, '--public-key', withPublicKey(feed)]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^REJECTED \(file-(size|hash)-mismatch\)/);
    const other = makeFeed();
    const wrongKey = await run(['verify', '--feed', other.dir, '--public-key', withPublicKey(feed)]);
    expect(wrongKey).toMatchObject({
      code: 1,
      err: expect.stringMatching(/^REJECTED \(signature-unknown-key\)/),
    });
  });

  it('names the signature blocks it could not check: no --public-key for their key', async () => {
    const feed = makeFeed();
    const other = makeKey();
    const manifest = readFileSync(path.join(feed.dir, MANIFEST_FILE));
    const sigPath = path.join(feed.dir, SIGNATURE_FILE);
    writeFileSync(sigPath, blockOf('V', other, manifest) + readFileSync(sigPath, 'utf8'));
    const result = await run(['verify', '--feed', feed.dir, '--public-key', withPublicKey(feed)]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(`signed by: ${keyId(feed.key.publicKey.keynum)}\n`);
    expect(result.out).toMatch(
      `not checked: the block of key ${keyId(other.publicKey.keynum)} (no --public-key for it; signify -V reads only the first block)\n`,
    );
    // With every key given, nothing is left unchecked.
    const both = path.join(tmp(), 'other.pub');
    writeFileSync(both, other.publicText);
    const all = await run([
      'verify',
      '--feed',
      feed.dir,
      '--public-key',
      withPublicKey(feed),
      '--public-key',
      both,
    ]);
    expect(all.out).not.toMatch(/not checked/);
  });

  it('--now checks as of that time instead of the clock, and says so', async () => {
    const feed = makeFeed();
    const key = withPublicKey(feed);
    const at = (now: string) => run(['verify', '--feed', feed.dir, '--public-key', key, '--now', now]);
    // The feed of NOW (2026-11-21, valid 14 days): current a week later, expired a month later.
    const week = await at('2026-11-28');
    expect(week.code).toBe(0);
    expect(week.out.split('\n').slice(0, 5)).toEqual([
      'feed 2026.11.21 OK (schema 2.0)',
      'published 2026-11-21T12:00:00Z, expires 2026-12-05T12:00:00Z',
      'checked as of 2026-11-28T00:00:00.000Z (--now), not the current time',
      `signed by: ${keyId(feed.key.publicKey.keynum)}`,
      `manifest sha256: ${sha256(readFileSync(path.join(feed.dir, MANIFEST_FILE)))}`,
    ]);
    expect(await at('2026-12-21T12:00:00+01:00')).toMatchObject({
      code: 1,
      err: expect.stringMatching(/^REJECTED \(expired\)/),
    });
    expect(await at('2026-11-20T12:00:00Z')).toMatchObject({
      code: 1,
      err: expect.stringMatching(/^REJECTED \(published-in-future\)/),
    });
    for (const bad of ['tomorrow', '2026-02-30', '1764000000'])
      expect(await at(bad), bad).toEqual({
        code: 2,
        out: '',
        err: '--now must be an RFC 3339 time (2026-11-26T15:00:00Z) or a date (YYYY-MM-DD) (advisory-feed verify --help shows how)',
      });
    // Without --now, nothing is said about the time.
    expect((await run(['verify', '--feed', feed.dir, '--public-key', key])).out).not.toMatch(/checked as of/);
  });

  it('a feed without a signature yet: everything else is checked, it says so, exit 0 (build, verify, sign)', async () => {
    const feed = unsignedFeed();
    const key = withPublicKey(feed);
    const result = await run(['verify', '--feed', feed.dir, '--public-key', key]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^feed 2026\.11\.21 NOT SIGNED YET/);
    expect(result.out).toMatch(
      /^everything but the signature checks out: sign it next \(advisory-feed sign\)$/m,
    );
    expect(result.out).not.toMatch(/signed by/);
    // Everything but the signature still counts.
    writeFileSync(path.join(feed.dir, 'widgets/one.yaml'), 'tampered: true\n');
    expect((await run(['verify', '--feed', feed.dir, '--public-key', key])).code).toBe(1);
  });

  it('checks rollback against a remembered state, read strictly (hash in any case)', async () => {
    const feed = makeFeed();
    const dir = tmp();
    const key = withPublicKey(feed);
    const verifyWith = (text: string) => {
      writeFileSync(`${dir}/state.json`, text);
      return run(['verify', '--feed', feed.dir, '--public-key', key, '--last-accepted', `${dir}/state.json`]);
    };
    const newer = {
      feed_version: '2026.12.01',
      published_at: '2026-12-01T00:00:00Z',
      manifest_sha256: 'a'.repeat(64),
    };
    expect(await verifyWith(JSON.stringify(newer))).toMatchObject({
      code: 1,
      err: expect.stringMatching(/REJECTED \(rollback\)/),
    });
    const same = {
      feed_version: '2026.11.21',
      published_at: '2026-11-21T12:00:00Z',
      manifest_sha256: sha256(readFileSync(path.join(feed.dir, MANIFEST_FILE))).toUpperCase(),
    };
    expect((await verifyWith(JSON.stringify(same))).code).toBe(0);
    for (const [text, message] of [
      ['', /empty/],
      ['   \n', /empty/],
      ['{not json', /not JSON/],
      ['[]', /expected a JSON object/],
      ['{}', /feed_version must be a real date/],
      [JSON.stringify({ ...newer, feed_version: '2026.02.30' }), /feed_version must be a real date/],
      [JSON.stringify({ ...newer, published_at: '' }), /published_at must be an RFC 3339 time/],
      [JSON.stringify({ ...newer, manifest_sha256: 'x' }), /manifest_sha256 must be 64 hex digits/],
    ] as const) {
      const result = await verifyWith(text);
      expect(result.code, text).toBe(2);
      expect(result.err, text).toMatch(message);
    }
  });

  it('refuses unusable inputs before looking at the feed (exit 2): a directory as key or state, a FIFO, a file as feed', async () => {
    const feed = makeFeed();
    const dir = tmp();
    const key = withPublicKey(feed);
    execFileSync('mkfifo', [`${dir}/fifo`]);
    writeFileSync(`${dir}/bad.pub`, 'not a key\n');
    const cases: [string[], RegExp][] = [
      [['verify', '--feed', feed.dir, '--public-key', dir], /public key .*: is a directory/],
      [
        ['verify', '--feed', feed.dir, '--public-key', `${dir}/bad.pub`],
        /public key .*bad\.pub: public key:/,
      ],
      [['verify', '--feed', feed.dir, '--public-key', `${dir}/fifo`], /not a regular file/],
      [['verify', '--feed', feed.dir, '--public-key', `${dir}/none.pub`], /no such file/],
      [['verify', '--feed', feed.dir, '--public-key', key, '--last-accepted', dir], /is a directory/],
      [
        ['verify', '--feed', feed.dir, '--public-key', key, '--last-accepted', `${dir}/fifo`],
        /not a regular file/,
      ],
      [['verify', '--feed', path.join(feed.dir, MANIFEST_FILE), '--public-key', key], /not a directory/],
      [['verify', '--feed', feed.dir, '--public-key', key, '--inventory', dir], /is a directory/],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err, argv.join(' ')).toMatch(message);
    }
  });

  it('a socket planted in the feed in place of a listed file is a rejection (exit 1), never a crash', async () => {
    const feed = makeFeed();
    rmSync(path.join(feed.dir, 'widgets/one.yaml'));
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(feed.dir, 'widgets/one.yaml'), resolve));
    try {
      const result = await run(['verify', '--feed', feed.dir, '--public-key', withPublicKey(feed)]);
      expect(result).toMatchObject({
        code: 1,
        err: expect.stringMatching(/REJECTED \(unsafe-path\).*not a regular file/),
      });
    } finally {
      socket.close();
    }
  });
});

describe('advisory-feed sign', () => {
  it('build, sign twice with two keys (rotation), verify with either key', async () => {
    const dir = tmp();
    const feed = makeFeed();
    for (const name of ['old', 'new'])
      await run(['keygen', '--secret-key', `${dir}/${name}.sec`, '--public-key', `${dir}/${name}.pub`]);
    expect((await run(['build', '--feed', feed.dir, '--expires-in', '7d'])).code).toBe(0);
    expect(existsSync(path.join(feed.dir, SIGNATURE_FILE))).toBe(false);
    expect((await run(['sign', '--feed', feed.dir, '--secret-key', `${dir}/old.sec`])).code).toBe(0);
    expect((await run(['sign', '--feed', feed.dir, '--secret-key', `${dir}/new.sec`])).code).toBe(0);
    // Signing again with the same key replaces its block instead of adding a third.
    expect((await run(['sign', '--feed', feed.dir, '--secret-key', `${dir}/new.sec`])).code).toBe(0);
    expect(parseSignatures(readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8'))).toHaveLength(2);
    for (const key of ['old', 'new']) {
      const result = await run(['verify', '--feed', feed.dir, '--public-key', `${dir}/${key}.pub`]);
      expect(result.code, key).toBe(0);
      // Built again the same day: the day's first extra release.
      expect(result.out).toMatch(/feed 2026\.11\.21\.1 OK/);
    }
    const both = await run([
      'verify',
      '--feed',
      feed.dir,
      '--public-key',
      `${dir}/old.pub`,
      '--public-key',
      `${dir}/new.pub`,
    ]);
    expect(
      both.out
        .split('\n')
        .find((l) => l.startsWith('signed by:'))
        ?.split(','),
    ).toHaveLength(2);
  });

  it('refuses a manifest that no longer describes the files (exit 1), writing no signature', async () => {
    const { dir, feed } = await unsignedFeedAndKey();
    writeFileSync(path.join(feed.dir, 'widgets/one.yaml'), advisoryYaml({ title: 'edited after build' }));
    const result = await run(['sign', '--feed', feed.dir, '--secret-key', `${dir}/k.sec`]);
    expect(result).toMatchObject({
      code: 1,
      err: expect.stringMatching(/refusing to sign: .*run build again/),
    });
    expect(existsSync(path.join(feed.dir, SIGNATURE_FILE))).toBe(false);
    const empty = tmp();
    expect(await run(['sign', '--feed', empty, '--secret-key', `${dir}/k.sec`])).toMatchObject({
      code: 1,
      err: expect.stringMatching(/manifest\.yaml is missing: run build first/),
    });
  });

  it('never writes through a symbolic link at the signature’s name', async () => {
    const { dir, feed } = await unsignedFeedAndKey();
    writeFileSync(`${dir}/victim`, 'do not touch');
    symlinkSync(`${dir}/victim`, path.join(feed.dir, SIGNATURE_FILE));
    const result = await run(['sign', '--feed', feed.dir, '--secret-key', `${dir}/k.sec`]);
    expect(result).toMatchObject({
      code: 1,
      err: expect.stringMatching(/manifest\.yaml\.sig is a symbolic link/),
    });
    expect(readFileSync(`${dir}/victim`, 'utf8')).toBe('do not touch');
  });

  it('a secret key that is a directory, missing or not a key is exit 2', async () => {
    const feed = makeFeed();
    const dir = tmp();
    writeFileSync(`${dir}/bad.sec`, 'nope\n');
    for (const key of [dir, `${dir}/none.sec`, `${dir}/bad.sec`]) {
      expect((await run(['sign', '--feed', feed.dir, '--secret-key', key])).code, key).toBe(2);
    }
  });
});

describe('the advisory-feed process', () => {
  const bin = path.resolve(import.meta.dirname, '../../../node_modules/.bin/advisory-feed');

  it('runs as `npx advisory-feed` (the workspace bin)', async () => {
    const { stdout } = await promisify(execFile)(bin, ['--help']);
    expect(stdout).toMatch(/Commands \(publishing order/);
    const failure = await promisify(execFile)(bin, ['nope']).catch((e) => e);
    expect(failure.code).toBe(2);
  });

  it('ends quietly when its reader goes away (| head -1): no EPIPE crash, the exit code it would have had', () => {
    const feed = makeFeed(undefined, { now: new Date(), expiresInMs: 86_400_000, feedVersion: undefined });
    const key = withPublicKey(feed);
    const result = spawnSync(
      'bash',
      [
        '-c',
        `set -o pipefail; "${bin}" verify --feed "${feed.dir}" --public-key "${key}" | head -c 1 >/dev/null; echo "\${PIPESTATUS[0]}"`,
      ],
      { encoding: 'utf8' },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('0');
  });
});

/** What a hostile probe of the command line found, each pinned after its fix. */
describe('advisory-feed: hostile inputs', () => {
  it('an empty --last-accepted or --inventory is a usage error, never "not given" (rollback stays on)', async () => {
    const feed = makeFeed();
    const key = withPublicKey(feed);
    for (const extra of [
      ['--last-accepted', ''],
      ['--last-accepted='],
      ['--inventory', ''],
      ['--public-key', ''],
    ]) {
      const result = await run(['verify', '--feed', feed.dir, '--public-key', key, ...extra]);
      expect(result.code, extra.join(' ')).toBe(2);
      expect(result.err).toMatch(/needs a value/);
    }
  });

  it('build replaces a FIFO at the manifest’s name instead of blocking on it', async () => {
    const feed = makeFeed();
    rmSync(path.join(feed.dir, MANIFEST_FILE));
    execFileSync('mkfifo', [path.join(feed.dir, MANIFEST_FILE)]);
    expect((await run(['build', '--feed', feed.dir])).code).toBe(0);
    expect(statSync(path.join(feed.dir, MANIFEST_FILE)).isFile()).toBe(true);
  });

  it('build refuses what verify would refuse for its size: too many files, too large in all', async () => {
    const { buildFeed } = await import('../../src/feed/author/build.ts');
    const feed = makeFeed({
      'widgets/one.yaml': advisoryYaml({}),
      'widgets/two.yaml': advisoryYaml({ id: 'TEST-2' }),
      'widgets/three.yaml': advisoryYaml({ id: 'TEST-3' }),
    });
    const count = buildFeed({ feedDir: feed.dir, expiresInMs: 86_400_000, now: NOW, limits: { files: 2 } });
    expect(count.ok ? [] : count.findings.map((f) => f.message)).toEqual([
      'the feed has 3 files, above the cap of 2',
    ]);
    const total = buildFeed({
      feedDir: feed.dir,
      expiresInMs: 86_400_000,
      now: NOW,
      limits: { totalBytes: 300 },
    });
    expect(total.ok).toBe(false);
    const one = buildFeed({
      feedDir: feed.dir,
      expiresInMs: 86_400_000,
      now: NOW,
      limits: { fileBytes: 100 },
    });
    expect(one.ok ? [] : one.findings.map((f) => f.rule)).toEqual(['layout', 'layout', 'layout']);
    const manifest = buildFeed({
      feedDir: feed.dir,
      expiresInMs: 86_400_000,
      now: NOW,
      limits: { manifestBytes: 200 },
    });
    expect(manifest.ok ? '' : manifest.findings[0]?.message).toMatch(
      /^the manifest would be \d+ bytes, above the 200-byte cap/,
    );
  });

  it('build writes no manifest when the old signature cannot be removed', async () => {
    const feed = unsignedFeed();
    mkdirSync(path.join(feed.dir, SIGNATURE_FILE, 'inside'), { recursive: true });
    const before = readFileSync(path.join(feed.dir, MANIFEST_FILE), 'utf8');
    const result = await run(['build', '--feed', feed.dir]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/manifest\.yaml\.sig/);
    expect(readFileSync(path.join(feed.dir, MANIFEST_FILE), 'utf8')).toBe(before);
  });

  it('sign refuses a feed that gained advisory files after build', async () => {
    const { dir, feed } = await unsignedFeedAndKey();
    writeFileSync(path.join(feed.dir, 'widgets/new.yaml'), advisoryYaml({ id: 'NEW-1' }));
    const result = await run(['sign', '--feed', feed.dir, '--secret-key', `${dir}/k.sec`]);
    expect(result).toMatchObject({
      code: 1,
      err: expect.stringMatching(
        /1 advisory file not in the manifest \(widgets\/new\.yaml\); run build again/,
      ),
    });
  });

  it('sign drops another key’s block made for an earlier manifest, so signify -V still passes', async () => {
    const dir = tmp();
    for (const name of ['old', 'new'])
      await run(['keygen', '--secret-key', `${dir}/${name}.sec`, '--public-key', `${dir}/${name}.pub`]);
    const feed = unsignedFeed();
    await run(['sign', '--feed', feed.dir, '--secret-key', `${dir}/old.sec`]);
    const stale = readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8');
    expect((await run(['build', '--feed', feed.dir, '--expires-in', '2d'])).code).toBe(0);
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), stale);
    const result = await run(['sign', '--feed', feed.dir, '--secret-key', `${dir}/new.sec`]);
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/dropped the signature of key [0-9a-f]{16}: it was made for another manifest/);
    expect(parseSignatures(readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8'))).toHaveLength(1);
  });

  it('verify refuses a damaged block of a trusted key even beside a good one, and a key signing twice', async () => {
    const feed = makeFeed();
    const key = withPublicKey(feed);
    const good = readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8');
    const [comment, encoded] = good.trimEnd().split('\n');
    const raw = Buffer.from(encoded as string, 'base64');
    raw[20] = (raw[20] as number) ^ 1;
    const other = makeFeed().key;
    const { signMessage, parseSecretKey } = await import('../../src/crypto/signify.ts');
    const otherBlock = signMessage(
      parseSecretKey(other.secretText),
      readFileSync(path.join(feed.dir, MANIFEST_FILE)),
      'x',
    );
    writeFileSync(
      path.join(feed.dir, SIGNATURE_FILE),
      `${otherBlock}${comment}\n${raw.toString('base64')}\n`,
    );
    expect(await run(['verify', '--feed', feed.dir, '--public-key', key])).toMatchObject({
      code: 1,
      err: expect.stringMatching(/signature-invalid/),
    });
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), `${good}${good}`);
    expect(await run(['verify', '--feed', feed.dir, '--public-key', key])).toMatchObject({
      code: 1,
      err: expect.stringMatching(/signs twice/),
    });
    // A block of a key not trusted here is passed over (rotation).
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), `${otherBlock}${good}`);
    expect((await run(['verify', '--feed', feed.dir, '--public-key', key])).code).toBe(0);
  });

  it('--require-signature refuses a feed that is not signed yet', async () => {
    const feed = unsignedFeed();
    const result = await run([
      'verify',
      '--feed',
      feed.dir,
      '--public-key',
      withPublicKey(feed),
      '--require-signature',
    ]);
    expect(result).toMatchObject({ code: 1, err: expect.stringMatching(/signature-missing/) });
  });

  it('an inventory file source that is a FIFO fails that source at once', async () => {
    const feed = makeFeed();
    const dir = tmp();
    execFileSync('mkfifo', [`${dir}/assets.fifo`]);
    writeFileSync(`${dir}/inv.yaml`, 'sources:\n  - { type: file, name: lab, path: assets.fifo }\n');
    const result = await run([
      'verify',
      '--feed',
      feed.dir,
      '--public-key',
      withPublicKey(feed),
      '--inventory',
      `${dir}/inv.yaml`,
    ]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/lab: unknown \(.*not a regular file\)/);
  });

  it('shows control characters in names escaped: a name cannot forge output lines', async () => {
    const feed = makeFeed();
    writeFileSync(
      path.join(feed.dir, 'widgets/x\nwrote manifest.yaml: all fine.yaml'),
      advisoryYaml({ id: 'X-1' }),
    );
    const result = await run(['build', '--feed', feed.dir]);
    expect(result.code).toBe(1);
    expect(result.err.split('\n').some((line) => line.startsWith('wrote manifest'))).toBe(false);
    expect(result.err).toContain('x\\u{a}wrote');
  });

  it('keygen refuses comments with invisible or direction-changing characters', async () => {
    const dir = tmp();
    for (const comment of ['a\u0085b', 'a\u202eb', 'a\u2028b']) {
      expect(
        (
          await run([
            'keygen',
            '--secret-key',
            `${dir}/k.sec`,
            '--public-key',
            `${dir}/k.pub`,
            '--comment',
            comment,
          ])
        ).code,
      ).toBe(2);
    }
  });
});
