import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { runFeedCli } from '../../src/cli/feed/main.ts';
import { checkSignatures, parsePublicKey, parseSignatures } from '../../src/crypto/signify.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../src/feed/format/rules.ts';
import { makeFeed, makeKey, NEEDS_SIGNIFY, NOW, signifyBinary, verifyDir } from '../support/feed.ts';
import { blockOf, expectedCheck, SIGNATURE_CASES } from '../support/signatures.ts';

/**
 * Interoperability with OpenBSD's signify (Debian package signify-openbsd). CI installs it
 * and sets REQUIRE_SIGNIFY=1, so there these tests cannot be skipped silently.
 */
const signify = signifyBinary;

const quiet = { out: () => {}, err: () => {} };

describe('signify interoperability', runsIf(signify, NEEDS_SIGNIFY), () => {
  it('a signature made by `sign` verifies with signify -V', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'interop-'));
    const feed = makeFeed();
    expect(
      await runFeedCli(
        ['keygen', '--secret-key', `${dir}/k.sec`, '--public-key', `${dir}/k.pub`],
        quiet,
        NOW,
      ),
    ).toBe(0);
    expect(await runFeedCli(['sign', '--feed', feed.dir, '--secret-key', `${dir}/k.sec`], quiet, NOW)).toBe(
      0,
    );
    // The test key's block names no manifest hash, so sign dropped it: ours is the only one.
    const blocks = readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8').trim().split('\n');
    expect(blocks).toHaveLength(2);
    writeFileSync(`${dir}/only-ours.sig`, `${blocks.join('\n')}\n`);
    const output = execFileSync(signify as string, [
      '-V',
      '-p',
      `${dir}/k.pub`,
      '-x',
      `${dir}/only-ours.sig`,
      '-m',
      path.join(feed.dir, MANIFEST_FILE),
    ]);
    expect(output.toString()).toMatch(/Signature Verified/);
  });

  it('a key and signature made by signify verify with `verify`', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'interop-'));
    const feed = makeFeed();
    execFileSync(signify as string, [
      '-G',
      '-n',
      '-c',
      'made by signify',
      '-p',
      `${dir}/s.pub`,
      '-s',
      `${dir}/s.sec`,
    ]);
    execFileSync(signify as string, [
      '-S',
      '-s',
      `${dir}/s.sec`,
      '-m',
      path.join(feed.dir, MANIFEST_FILE),
      '-x',
      path.join(feed.dir, SIGNATURE_FILE),
    ]);
    const result = await verifyDir(feed.dir, {
      trustedKeys: [parsePublicKey(readFileSync(`${dir}/s.pub`, 'utf8'))],
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    const out: string[] = [];
    const code = await runFeedCli(
      ['verify', '--feed', feed.dir, '--public-key', `${dir}/s.pub`],
      { out: (l) => out.push(l), err: (l) => out.push(l) },
      NOW,
    );
    expect(code).toBe(0);
    expect(out.join('\n')).toMatch(/feed 2026\.11\.21 OK/);
  });

  it('`sign` accepts a secret key made by signify -G -n', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'interop-'));
    const feed = makeFeed();
    execFileSync(signify as string, ['-G', '-n', '-p', `${dir}/s.pub`, '-s', `${dir}/s.sec`]);
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), '');
    expect(await runFeedCli(['sign', '--feed', feed.dir, '--secret-key', `${dir}/s.sec`], quiet, NOW)).toBe(
      0,
    );
    const output = execFileSync(signify as string, [
      '-V',
      '-p',
      `${dir}/s.pub`,
      '-m',
      path.join(feed.dir, MANIFEST_FILE),
    ]);
    expect(output.toString()).toMatch(/Signature Verified/);
  });

  it('signify refuses a feed manifest changed after `sign`, like `verify` does', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'interop-'));
    const feed = makeFeed();
    await runFeedCli(['keygen', '--secret-key', `${dir}/k.sec`, '--public-key', `${dir}/k.pub`], quiet, NOW);
    writeFileSync(path.join(feed.dir, SIGNATURE_FILE), '');
    await runFeedCli(['sign', '--feed', feed.dir, '--secret-key', `${dir}/k.sec`], quiet, NOW);
    writeFileSync(
      path.join(feed.dir, MANIFEST_FILE),
      `${readFileSync(path.join(feed.dir, MANIFEST_FILE), 'utf8')}# tampered\n`,
    );
    const result = spawnSync(signify as string, [
      '-V',
      '-p',
      `${dir}/k.pub`,
      '-m',
      path.join(feed.dir, MANIFEST_FILE),
    ]);
    expect(result.status).not.toBe(0);
  });
});

/**
 * The rule for several blocks (docs/advisory/feed.md, "Several signatures") against
 * signify, on every file of one and two blocks (V valid and trusted, D damaged and
 * trusted, U valid and untrusted, X damaged and untrusted): each block on its own, signify
 * and checkSignatures agree; on the whole file signify reads only the first block.
 */
describe('signify interoperability: every file of one and two blocks', runsIf(signify, NEEDS_SIGNIFY), () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'interop-matrix-'));
  const keys = [makeKey('first'), makeKey('second')];
  for (const [i, key] of keys.entries()) writeFileSync(`${dir}/${i}.pub`, key.publicText);
  const message = Buffer.from('feed_version: "2026.11.21"\n');
  writeFileSync(`${dir}/message`, message);
  const signifyAccepts = (publicKey: string, signature: string) => {
    writeFileSync(`${dir}/x.sig`, signature);
    const result = spawnSync(signify as string, [
      '-V',
      '-p',
      publicKey,
      '-x',
      `${dir}/x.sig`,
      '-m',
      `${dir}/message`,
    ]);
    return result.status === 0;
  };

  it.each(SIGNATURE_CASES.map((kinds) => [kinds.join('+'), kinds] as const))('%s', (_, kinds) => {
    const blocks = kinds.map((kind, i) => blockOf(kind, keys[i] as (typeof keys)[number], message));
    const trusted = kinds.flatMap((kind, i) =>
      kind === 'V' || kind === 'D' ? [(keys[i] as (typeof keys)[number]).publicKey] : [],
    );
    expect(checkSignatures(message, parseSignatures(blocks.join('')), trusted)).toMatchObject(
      expectedCheck(kinds),
    );
    blocks.forEach((block, i) => {
      const key = keys[i] as (typeof keys)[number];
      const valid = kinds[i] === 'V' || kinds[i] === 'U';
      expect(signifyAccepts(`${dir}/${i}.pub`, block), `signify, block ${i + 1}`).toBe(valid);
      expect(
        checkSignatures(message, parseSignatures(block), [key.publicKey]).ok,
        `ours, block ${i + 1}`,
      ).toBe(valid);
    });
    const firstValid = kinds[0] === 'V' || kinds[0] === 'U';
    expect(signifyAccepts(`${dir}/0.pub`, blocks.join('')), 'signify, the whole file').toBe(firstValid);
    if (blocks.length === 2)
      expect(signifyAccepts(`${dir}/1.pub`, blocks.join('')), 'signify, second key on the whole file').toBe(
        false,
      );
  });
});
