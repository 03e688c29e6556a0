import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/main.ts';
import { SIGNATURE_FILE } from '../src/feed/files.ts';
import { parseSignatures } from '../src/feed/signify.ts';
import { advisoryYaml, makeFeed, NOW } from './support/feed.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

const tmp = () => mkdtempSync(path.join(tmpdir(), 'cli-'));

describe('advisory-feed CLI', () => {
  it('prints help for the tool and each command (exit 0), usage errors exit 2', () => {
    for (const argv of [
      ['--help'],
      ['build', '--help'],
      ['verify', '--help'],
      ['sign', '--help'],
      ['keygen', '--help'],
    ]) {
      const c = capture();
      expect(runCli(argv, c.io)).toBe(0);
      expect(c.out.join('\n')).toMatch(/Usage: advisory-feed/);
    }
    for (const argv of [
      [],
      ['frobnicate'],
      ['build'],
      ['build', '--feed', 'x', '--feed-version', '2026.13.40'],
      ['verify', '--feed', 'x'],
      ['sign', '--bogus'],
    ]) {
      const c = capture();
      expect(runCli(argv, c.io), argv.join(' ')).toBe(2);
    }
  });

  it('keygen writes a 0600 secret key and refuses to overwrite either file', () => {
    const dir = tmp();
    const c = capture();
    expect(runCli(['keygen', '--secret-key', `${dir}/k.sec`, '--public-key', `${dir}/k.pub`], c.io)).toBe(0);
    expect(statSync(`${dir}/k.sec`).mode & 0o777).toBe(0o600);
    const before = readFileSync(`${dir}/k.sec`, 'utf8');
    const again = capture();
    expect(
      runCli(['keygen', '--secret-key', `${dir}/k.sec`, '--public-key', `${dir}/other.pub`], again.io),
    ).toBe(1);
    expect(again.err.join()).toMatch(/refusing to overwrite/);
    expect(readFileSync(`${dir}/k.sec`, 'utf8')).toBe(before);
    expect(
      runCli(['keygen', '--secret-key', `${dir}/new.sec`, '--public-key', `${dir}/k.pub`], capture().io),
    ).toBe(1);
  });

  it('build lints, prints findings with file:line, and exits 1 on errors', () => {
    const feed = makeFeed();
    writeFileSync(path.join(feed.dir, 'widgets/bad.yaml'), advisoryYaml({ id: 'BAD-1', verdict: 'maybe' }));
    const c = capture();
    expect(runCli(['build', '--feed', feed.dir, '--feed-version', '2026.11.22'], c.io, NOW)).toBe(1);
    expect(c.err.join('\n')).toMatch(/^widgets\/bad\.yaml:5: error \[unknown-verdict\]/m);
  });

  it('build, sign twice with two keys (rotation), verify with either key', () => {
    const dir = tmp();
    const feed = makeFeed();
    for (const name of ['old', 'new']) {
      runCli(
        ['keygen', '--secret-key', `${dir}/${name}.sec`, '--public-key', `${dir}/${name}.pub`],
        capture().io,
      );
    }
    expect(
      runCli(
        ['build', '--feed', feed.dir, '--feed-version', '2026.11.21', '--expires-in', '7d'],
        capture().io,
        NOW,
      ),
    ).toBe(0);
    expect(existsSync(path.join(feed.dir, SIGNATURE_FILE))).toBe(false);
    expect(runCli(['sign', '--feed', feed.dir, '--secret-key', `${dir}/old.sec`], capture().io)).toBe(0);
    expect(runCli(['sign', '--feed', feed.dir, '--secret-key', `${dir}/new.sec`], capture().io)).toBe(0);
    // Signing again with the same key replaces its block instead of adding a third.
    expect(runCli(['sign', '--feed', feed.dir, '--secret-key', `${dir}/new.sec`], capture().io)).toBe(0);
    expect(parseSignatures(readFileSync(path.join(feed.dir, SIGNATURE_FILE), 'utf8'))).toHaveLength(2);
    for (const key of ['old', 'new']) {
      const c = capture();
      expect(
        runCli(['verify', '--feed', feed.dir, '--public-key', `${dir}/${key}.pub`], c.io, NOW),
        key,
      ).toBe(0);
      expect(c.out.join('\n')).toMatch(/feed 2026\.11\.21 OK/);
    }
    const both = capture();
    expect(
      runCli(
        ['verify', '--feed', feed.dir, '--public-key', `${dir}/old.pub`, '--public-key', `${dir}/new.pub`],
        both.io,
        NOW,
      ),
    ).toBe(0);
    expect(both.out.find((l) => l.startsWith('signed by:'))?.split(',')).toHaveLength(2);
  });

  it('verify prints the reason and exits 1 for a bad feed', () => {
    const feed = makeFeed();
    writeFileSync(path.join(feed.dir, 'widgets/one.yaml'), 'tampered: true\n');
    const dir = tmp();
    writeFileSync(`${dir}/k.pub`, feed.key.publicText);
    const c = capture();
    expect(runCli(['verify', '--feed', feed.dir, '--public-key', `${dir}/k.pub`], c.io, NOW)).toBe(1);
    expect(c.err.join('\n')).toMatch(/^REJECTED \(file-size-mismatch|^REJECTED \(file-hash-mismatch/);
  });

  /** `verify --last-accepted` on a fresh signed feed, with the given state file text. */
  function verifyWithState(stateText: string) {
    const feed = makeFeed();
    const dir = tmp();
    writeFileSync(`${dir}/k.pub`, feed.key.publicText);
    writeFileSync(`${dir}/state.json`, stateText);
    const c = capture();
    const argv = [
      'verify',
      '--feed',
      feed.dir,
      '--public-key',
      `${dir}/k.pub`,
      '--last-accepted',
      `${dir}/state.json`,
    ];
    return { code: runCli(argv, c.io, NOW), err: c.err.join('\n') };
  }

  it('verify checks rollback against a remembered state', () => {
    const state = { feed_version: '2026.12.01', published_at: '2026-12-01T00:00:00Z', manifest_sha256: 'x' };
    const { code, err } = verifyWithState(JSON.stringify(state));
    expect(code).toBe(1);
    expect(err).toMatch(/REJECTED \(rollback\)/);
  });

  it('a remembered state that is not JSON is a usage error, not a crash', () => {
    const { code, err } = verifyWithState('{not json');
    expect(code).toBe(2);
    expect(err).toMatch(/state\.json: not JSON/);
  });

  it('a bad public key file is exit 1 with its name', () => {
    const feed = makeFeed();
    const dir = tmp();
    writeFileSync(`${dir}/bad.pub`, 'not a key\n');
    const c = capture();
    expect(runCli(['verify', '--feed', feed.dir, '--public-key', `${dir}/bad.pub`], c.io, NOW)).toBe(1);
    expect(c.err.join()).toMatch(/bad\.pub/);
  });

  it('runs as `npx advisory-feed` (the workspace bin)', async () => {
    const bin = path.resolve(import.meta.dirname, '../../node_modules/.bin/advisory-feed');
    const { stdout } = await promisify(execFile)(bin, ['--help']);
    expect(stdout).toMatch(/Commands \(publishing order/);
    const failure = await promisify(execFile)(bin, ['nope']).catch((e) => e);
    expect(failure.code).toBe(2);
  });
});
